import { readFileSync, statSync } from "node:fs";

/**
 * The filter module compiled once per process: every sidecar, VM and
 * configuration check of a process (meshctl x simulate runs several
 * sidecars) instantiates the same WebAssembly.Module instead of compiling
 * the file again (a few tens of milliseconds of CPU each). A file is
 * compiled again when its size or modification time changes.
 */
const byPath = new Map<string, { mtimeMs: number; size: number; module: WebAssembly.Module }>();
const byBytes = new WeakMap<Uint8Array, WebAssembly.Module>();

export function compiledModule(wasm: Uint8Array | string): WebAssembly.Module {
  if (typeof wasm !== "string") {
    let module = byBytes.get(wasm);
    if (!module) byBytes.set(wasm, (module = new WebAssembly.Module(wasm as Uint8Array<ArrayBuffer>)));
    return module;
  }
  const { mtimeMs, size } = statSync(wasm);
  const cached = byPath.get(wasm);
  if (cached && cached.mtimeMs === mtimeMs && cached.size === size) return cached.module;
  const module = new WebAssembly.Module(readFileSync(wasm));
  byPath.set(wasm, { mtimeMs, size, module });
  return module;
}
