// The allocation counter of the debug build. build/count_allocations.mjs
// instruments the runtime's __new and __renew in the debug target to add one
// here per call; nothing else writes it, so in the release build it stays 0.
// The hot-path benchmark reads it around a run to print allocations per
// request.

let allocationCount: u64 = 0;

/** Managed allocations (__new) and reallocations (__renew) so far; 0 in release builds. */
export function filter_allocations(): u64 {
  return allocationCount;
}
