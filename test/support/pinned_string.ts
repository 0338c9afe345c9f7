// The module collects garbage at the start of an export (assembly/collection.ts)
// and counts on its caller to pin the objects it passes: a string made with
// __newString and passed unpinned can be collected before it is read.
interface StringExports {
  __newString(s: string): number;
  __pin(ptr: number): number;
  __unpin(ptr: number): void;
}

/** Calls `fn` with `s` written into the module as a pinned string, unpinned afterwards. */
export function withPinnedString<T>(wasm: StringExports, s: string, fn: (ptr: number) => T): T {
  const ptr = wasm.__pin(wasm.__newString(s));
  try {
    return fn(ptr);
  } finally {
    wasm.__unpin(ptr);
  }
}
