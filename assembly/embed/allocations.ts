import { allocationCount } from "../collection";

// The allocation counter (collection.ts), read by the hot-path benchmark and
// tests around a run to print allocations per request.

/** Managed allocations (__new) and reallocations (__renew) so far. */
export function filter_allocations(): u64 {
  return allocationCount;
}
