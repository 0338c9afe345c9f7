// When the garbage collector runs. The module is built with AssemblyScript's
// `minimal` runtime: allocation is plain TLSF and the collector runs only
// when called. It is called at the start of an entry point (a proxy callback
// or an embedding export), whose arguments are plain integers or objects the
// caller pinned, before anything is allocated: no object can then be
// referenced only from the stack, so every live object is reachable from the
// module's globals and the collection is safe.
//
// A collection walks every live object (the configuration included), so it
// runs only when there is garbage to reclaim: once this many objects were
// allocated since the last one, or when the heap grew. A request answered
// from the caches allocates nothing, so a proxy serving such requests never
// collects; the ones that do allocate (hub calls, reports) are collected
// after a few thousand objects.
const COLLECT_AFTER_ALLOCATIONS: u64 = 8192;
// A build without the allocation counter (build/count_allocations.mjs)
// still collects at least this often.
const MAX_ENTRIES_BETWEEN_COLLECTIONS: u32 = 65536;

/**
 * Objects allocated so far (the runtime's __new and __renew): counted by a
 * transform of the build (build/count_allocations.mjs), in the release and
 * debug builds alike.
 */
export let allocationCount: u64 = 0;

let allocationsAtCollection: u64 = 0;
let entriesSinceCollection: u32 = 0;
let pagesAfterCollection: i32 = 0;

/**
 * Collects when objects were allocated or the heap grew since the last
 * collection (see above). Inlined into every entry point: the test is a
 * handful of instructions, a call on an interpreter (WAMR) costs more.
 */
// @ts-ignore: decorator
@inline
export function collectGarbageIfDue(): void {
  if (
    ++entriesSinceCollection < MAX_ENTRIES_BETWEEN_COLLECTIONS &&
    allocationCount - allocationsAtCollection < COLLECT_AFTER_ALLOCATIONS &&
    memory.size() <= pagesAfterCollection
  ) {
    return;
  }
  collectGarbage();
}

function collectGarbage(): void {
  __collect();
  allocationsAtCollection = allocationCount;
  entriesSinceCollection = 0;
  pagesAfterCollection = memory.size();
}
