// The filter module's hub wire codec (assembly/embed/wire_exports.ts) as the
// tests and benchmarks call it: the module loaded with every proxy-wasm
// import stubbed (the codec calls none), and its inputs written into module
// memory pinned, as the module's collector requires (assembly/collection.ts).
import { readFileSync } from "node:fs";
import { type ASUtil, instantiateSync } from "@assemblyscript/loader";
import { withUnimplementedImports } from "../../host/wasm/filter_module.ts";

type WireExports = {
  wire_encode_check(attributes: number, dedupId: number, quotasJson: number, bestEffort: number): number;
  wire_encode_report(attributes: number): number;
  wire_decode_check_response(buf: number): number;
  _initialize?: () => void;
};

export type WireCodec = ASUtil & WireExports;

/** The module at `path` (build/filter.wasm or build/filter.debug.wasm), initialized. */
export function loadWireCodec(path: string): WireCodec {
  const module = new WebAssembly.Module(readFileSync(path));
  const wasm = instantiateSync<WireExports>(module, withUnimplementedImports(module, { env: { proxy_log: () => 0 } })).exports;
  wasm._initialize?.();
  return wasm;
}

/**
 * Calls `fn` with values allocated in the module by `allocs`, each pinned as
 * soon as it exists: a later allocation may run the collector, which would
 * otherwise free the earlier ones.
 */
export function withPinned<T>(wasm: WireCodec, allocs: Array<() => number>, fn: (...ptrs: number[]) => T): T {
  const ptrs: number[] = [];
  try {
    for (const alloc of allocs) ptrs.push(wasm.__pin(alloc()));
    return fn(...ptrs);
  } finally {
    for (const p of ptrs) wasm.__unpin(p);
  }
}

/** `bytes` copied into the module as an ArrayBuffer (unpinned: pass it through withPinned). */
export function newBuffer(wasm: WireCodec, bytes: Uint8Array): number {
  return wasm.__newArrayBuffer(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
}

/** wire_encode_report on its input as it is laid out (empty when the module refuses it). */
export function callReport(wasm: WireCodec, input: Uint8Array): Uint8Array {
  return withPinned(wasm, [() => newBuffer(wasm, input)], (p) => new Uint8Array(wasm.__getArrayBuffer(wasm.wire_encode_report(p))));
}

/** A ReportRequest of one entry per encoded mesh.hub.v1.Attributes in `batch` (each length-prefixed, u32 little-endian). */
export function encodeReport(wasm: WireCodec, batch: Uint8Array[]): Uint8Array {
  const all = new Uint8Array(batch.reduce((n, b) => n + 4 + b.length, 0));
  const view = new DataView(all.buffer);
  let at = 0;
  for (const b of batch) {
    view.setUint32(at, b.length, true);
    all.set(b, at + 4);
    at += 4 + b.length;
  }
  return callReport(wasm, all);
}
