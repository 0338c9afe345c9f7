import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ModuleMemory, type PropertyValue } from "../../host/wasm/abi_memory.ts";
import { type PropertySource, propertyImports } from "../../host/wasm/abi_properties.ts";
import { WasmStatus } from "../../host/wasm/abi_types.ts";

// A batched property read (`mesh` `properties` name…) answers a pairs map of
// each property as a single read gives it. The host reuses answers it wrote
// before (a source's answersKey, the batch's last answer): every answer must
// still be that of the values asked at that moment.

const NAMES = ["response.code", "request.size", "upstream.address", "connection.mtls", "mesh.payload"];
const PATH = Buffer.from(["mesh", "properties", ...NAMES].join("\0"), "utf8");
const OUT = 64;
const PATH_AT = 128;

/** Module memory with a bump allocator, and the property import reading `current`'s source. */
function module() {
  const memory = new WebAssembly.Memory({ initial: 1 });
  let next = 1024;
  const mem = new ModuleMemory();
  mem.attach({
    memory,
    proxy_on_memory_allocate: (size: number) => {
      const at = next;
      next += (size + 7) & ~7;
      return at;
    },
  });
  mem.bytes.set(PATH, PATH_AT);
  const current: { source: PropertySource | undefined } = { source: undefined };
  const imports = propertyImports(mem, () => current.source, {});
  /** The batched read's answer, as name → value bytes. */
  const read = (source: PropertySource): Map<string, Buffer> => {
    current.source = source;
    assert.equal(imports.proxy_get_property(PATH_AT, PATH.length, OUT, OUT + 4), WasmStatus.Ok);
    const ptr = mem.view.getUint32(OUT, true);
    const len = mem.view.getUint32(OUT + 4, true);
    return rawPairs(Buffer.from(mem.bytesAt(ptr, len)));
  };
  /** One property as a single read gives it. */
  const single = (source: PropertySource, name: string): Buffer | undefined => {
    current.source = source;
    const path = Buffer.from(name.replaceAll(".", "\0"));
    mem.bytes.set(path, 512);
    const status = imports.proxy_get_property(512, path.length, OUT, OUT + 4);
    if (status === WasmStatus.NotFound) return undefined;
    return Buffer.from(mem.bytesAt(mem.view.getUint32(OUT, true), mem.view.getUint32(OUT + 4, true)));
  };
  return { read, single };
}

/** A pairs map with its values as bytes (property values are binary). */
function rawPairs(b: Buffer): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const count = b.readUInt32LE(0);
  let data = 4 + count * 8;
  for (let i = 0; i < count; i++) {
    const kl = b.readUInt32LE(4 + i * 8);
    const vl = b.readUInt32LE(8 + i * 8);
    const name = b.toString("utf8", data, data + kl);
    data += kl + 1;
    out.set(name, b.subarray(data, data + vl));
    data += vl + 1;
  }
  return out;
}

function source(values: Record<string, PropertyValue>, key?: object): PropertySource {
  return { property: (name) => values[name], answersKey: key === undefined ? undefined : () => key };
}

describe("batched property reads", () => {
  it("answer each read with the values of that moment, when they repeat and when they change", () => {
    const { read, single } = module();
    const bytes = Uint8Array.of(1, 2, 3);
    const key = {};
    const sources = [
      source({ "response.code": 200, "request.size": 0, "upstream.address": "10.0.0.9:8080" }),
      source({ "response.code": 200, "request.size": 0, "upstream.address": "10.0.0.9:8080" }),
      source({ "response.code": 200, "request.size": 27, "upstream.address": "10.0.0.9:8080" }),
      source({ "response.code": 503, "request.size": 27 }),
      source({ "response.code": 503, "request.size": 27 }),
      source({ "response.code": 503, "request.size": 27, "mesh.payload": bytes }),
      source({ "response.code": 503, "request.size": 27, "mesh.payload": bytes }),
      source({ "response.code": 503, "request.size": 27, "connection.mtls": true, "upstream.address": "é" }, key),
      source({ "response.code": 503, "request.size": 27, "connection.mtls": true, "upstream.address": "é" }, key),
      source({ "response.code": 503, "request.size": 28 }),
      source({}),
      source({ "response.code": 200, "request.size": 0, "upstream.address": "10.0.0.9:8080" }),
    ];
    for (const [i, s] of sources.entries()) {
      if (i === 6) bytes[1] = 9; // bytes given before, changed in place since
      const expected = new Map<string, Buffer>();
      for (const name of NAMES) {
        const value = single(s, name);
        if (value !== undefined) expected.set(name, value);
      }
      assert.deepEqual(read(s), expected, `read ${i}`);
    }
  });
});
