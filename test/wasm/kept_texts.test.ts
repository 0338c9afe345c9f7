import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ModuleMemory } from "../../host/wasm/abi_memory.ts";

// The texts the host keeps by address (headerText, recognized again by
// ModuleMemory#holds) must be exactly what decoding the bytes then would
// give: the module may write other bytes at an address it used before, grow
// its memory, or pass bytes that are not UTF-8.

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function moduleMemory(): { memory: ModuleMemory; wasm: WebAssembly.Memory } {
  const wasm = new WebAssembly.Memory({ initial: 1, maximum: 8 });
  const memory = new ModuleMemory();
  memory.attach({ memory: wasm, proxy_on_memory_allocate: () => 0 });
  return { memory, wasm };
}

const SAMPLES = ["outbound|9090||hub.mesh.svc", "mesh.hub.v1.Hub", "Check", "Report", "", "é", "\u{1F600}x", "a".repeat(300)];

/** Bytes to write: a known name, one of them changed in one byte, random bytes (often not UTF-8), or random ASCII. */
function someBytes(next: () => number): Uint8Array {
  const pick = next();
  if (pick < 0.4) return Buffer.from(SAMPLES[Math.floor(next() * SAMPLES.length)], "utf8");
  const len = Math.floor(next() * 40);
  const bytes = new Uint8Array(len);
  for (let i = 0; i < len; i++) bytes[i] = pick < 0.7 ? Math.floor(next() * 256) : 0x20 + Math.floor(next() * 95);
  if (pick < 0.5 && len > 0) bytes[Math.floor(next() * len)] ^= 1 << Math.floor(next() * 8);
  return bytes;
}

describe("texts kept by address read as the bytes there decode", () => {
  it("headerText: 20 000 reads among writes, length changes and growth equal Buffer#toString's text", () => {
    const next = random(7919);
    const { memory, wasm } = moduleMemory();
    // A few addresses, aligned and not, reused again and again, as the module reuses its own.
    const addresses = [64, 65, 66, 67, 128, 1024, 4096, 4099, 60_000, 65_536 - 16];
    const lengths = new Map<number, number>();
    for (let step = 0; step < 20_000; step++) {
      const at = addresses[Math.floor(next() * addresses.length)];
      const action = next();
      if (action < 0.3 || !lengths.has(at)) {
        const bytes = someBytes(next);
        const fits = Math.min(bytes.length, wasm.buffer.byteLength - at);
        new Uint8Array(wasm.buffer).set(bytes.subarray(0, fits), at);
        lengths.set(at, fits);
      } else if (action < 0.32 && wasm.buffer.byteLength < 8 * 65_536) {
        wasm.grow(1);
      } else if (action < 0.35) {
        // The same address read with another length.
        lengths.set(at, Math.floor(next() * 24));
      }
      const len = Math.min(lengths.get(at) as number, wasm.buffer.byteLength - at);
      const expected = Buffer.from(wasm.buffer).toString("utf8", at, at + len);
      assert.equal(memory.headerText(at, len), expected, `step ${step}: ${len} bytes at ${at}`);
    }
  });

  it("holds: true exactly when every byte of a snapshot is still there, over 20 000 changes of one byte, aligned and not", () => {
    const next = random(31);
    const { memory, wasm } = moduleMemory();
    const view = new Uint8Array(wasm.buffer);
    for (let round = 0; round < 200; round++) {
      const at = 256 + Math.floor(next() * 4096);
      const len = Math.floor(next() * 240);
      for (let i = 0; i < len; i++) view[at + i] = Math.floor(next() * 256);
      const snapshot = memory.snapshot(at, len);
      for (let change = 0; change < 100; change++) {
        // A byte inside the snapshot, or one just around it (which must not matter).
        const where = at - 2 + Math.floor(next() * (len + 4));
        const was = view[where];
        view[where] = next() < 0.3 ? was : Math.floor(next() * 256);
        const same = Buffer.compare(Buffer.from(wasm.buffer, at, len), snapshot.bytes) === 0;
        assert.equal(memory.holds(at, snapshot), same, `round ${round}, change ${change}: ${len} bytes at ${at}`);
        // Mostly put back, so that both answers come often.
        if (next() < 0.8) view[where] = was;
      }
    }
  });

  it("a read past the end of memory gives what Buffer#toString gives", () => {
    const { memory, wasm } = moduleMemory();
    const end = wasm.buffer.byteLength;
    new Uint8Array(wasm.buffer).set(Buffer.from("Che"), end - 3);
    for (let i = 0; i < 3; i++) {
      assert.equal(memory.headerText(end - 3, 5), Buffer.from(wasm.buffer).toString("utf8", end - 3, end + 2));
      assert.equal(memory.headerText(end - 4, 8), Buffer.from(wasm.buffer).toString("utf8", end - 4, end + 4));
    }
  });
});
