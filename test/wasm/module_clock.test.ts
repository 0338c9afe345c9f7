import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ContextState, type HostEnvironment } from "../../host/wasm/abi_contexts.ts";
import { loggingAndTimerImports, millisecondsAsNanos } from "../../host/wasm/abi_logging_timers.ts";
import { ModuleMemory } from "../../host/wasm/abi_memory.ts";

// proxy_get_current_time_nanoseconds writes the clock as a u64 of Unix
// nanoseconds. A host with a millisecond clock (the sidecar's Date.now) may
// give it as milliseconds: the module must read exactly what the
// nanosecond clock would have given it.

const EDGES = [0, 1, 999, 4294, 4295, 16_777_215, 16_777_216, 1_700_000_000_000, 1_764_400_000_123, 2 ** 32, 2 ** 40 - 1, 2 ** 44 - 1];

function clockReads(env: Partial<HostEnvironment>, reads: number): bigint[] {
  const memory = new ModuleMemory();
  memory.attach({ memory: new WebAssembly.Memory({ initial: 1 }), proxy_on_memory_allocate: () => 0 });
  const clock = loggingAndTimerImports(new ContextState(), memory, { log: () => {}, grpcCall: () => {}, tickPeriod: () => {}, now: () => 0n, ...env });
  const out: bigint[] = [];
  for (let i = 0; i < reads; i++) {
    assert.equal(clock.proxy_get_current_time_nanoseconds(64), 0);
    out.push(memory.view.getBigUint64(64, true));
  }
  return out;
}

describe("the module's clock", () => {
  it("millisecondsAsNanos gives the halves of ms × 10⁶ exactly", () => {
    const halves = new Uint32Array(2);
    const random = Array.from({ length: 2000 }, () => Math.floor(Math.random() * 2 ** 44));
    for (const ms of [...EDGES, ...random]) {
      assert.ok(millisecondsAsNanos(ms, halves), String(ms));
      assert.equal((BigInt(halves[1]) << 32n) | BigInt(halves[0]), BigInt(ms) * 1_000_000n, String(ms));
    }
    for (const ms of [-1, 0.5, 2 ** 44, Number.NaN, Number.POSITIVE_INFINITY]) assert.equal(millisecondsAsNanos(ms, halves), false, String(ms));
  });

  it("a millisecond clock reads as the same nanoseconds as a nanosecond clock, repeats and steps back included", () => {
    const sequence = [1_764_400_000_123, 1_764_400_000_123, 1_764_400_000_124, 1_764_399_999_000, ...EDGES, -5, 2 ** 45 + 7, 2 ** 45 + 7];
    let i = 0;
    let j = 0;
    const fromMillis = clockReads(
      { nowMilliseconds: () => sequence[i++], now: () => assert.fail("now is not read when milliseconds are given") },
      sequence.length,
    );
    const fromNanos = clockReads({ now: () => BigInt(sequence[j++]) * 1_000_000n }, sequence.length);
    assert.deepEqual(fromMillis, fromNanos);
    assert.deepEqual(
      fromNanos,
      sequence.map((ms) => BigInt.asUintN(64, BigInt(ms) * 1_000_000n)),
    );
  });
});
