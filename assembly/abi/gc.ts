// Garbage collection for the proxy path. The module is built with
// AssemblyScript's `minimal` runtime: allocation is plain TLSF and the
// collector runs only when called. Called at the start of a proxy callback —
// whose arguments are plain integers, before anything is allocated — no
// object can be referenced only from the stack, so every live object is
// reachable from the context tables and the collection is safe. Allocation
// then costs a fraction of the incremental collector's per-allocation work,
// which dominated the hot path.

// Collect at least this often, so garbage stays bounded even when the heap
// never has to grow. A request's callbacks leave a few small objects behind
// (its decoded header values; the rest is reused), so this many callbacks
// leave some hundreds of kilobytes at most, while each collection walks the
// whole live heap (configuration included): rarer collections are cheaper.
const MAX_CALLBACKS_BETWEEN_COLLECTIONS: u32 = 4096;

let callbacksSinceCollection: u32 = 0;
let pagesAfterCollection: i32 = 0;

/** Collects when memory grew since the last collection, or every MAX_CALLBACKS_BETWEEN_COLLECTIONS callbacks. */
export function collectGarbageIfDue(): void {
  callbacksSinceCollection++;
  if (memory.size() <= pagesAfterCollection && callbacksSinceCollection < MAX_CALLBACKS_BETWEEN_COLLECTIONS) return;
  __collect();
  callbacksSinceCollection = 0;
  pagesAfterCollection = memory.size();
}
