// Exports of the regex engine for hosts that call the module directly
// (configuration validation, the hub server, property tests).
//
// A compiled Regex cannot cross the wasm boundary, so the host holds an
// integer handle instead. The handle table below is the one piece of
// module-level state here: it is what keeps a compiled Regex alive (and
// reachable for the garbage collector) between two host calls. Released
// slots are reused; handle 0 means "none".
import { Regex } from "../regex/index";
import { collectGarbageIfDue } from "../collection";

const handles = new Array<Regex | null>();
const freeSlots = new Array<i32>();

function lookup(handle: i32): Regex | null {
  const slot = handle - 1;
  if (slot < 0 || slot >= handles.length) return null;
  return unchecked(handles[slot]);
}

/** "" if `pattern` is accepted, otherwise the reason it is refused. */
export function regex_check(pattern: string): string {
  collectGarbageIfDue();
  return Regex.compile(pattern).error;
}

/** A handle (> 0) to the compiled pattern, or 0 if refused (see regex_check). */
export function regex_compile(pattern: string): i32 {
  collectGarbageIfDue();
  const result = Regex.compile(pattern);
  if (result.regex === null) return 0;
  if (freeSlots.length > 0) {
    const slot = freeSlots.pop();
    handles[slot] = result.regex;
    return slot + 1;
  }
  handles.push(result.regex);
  return handles.length;
}

/** Whole-input match; false for an unknown handle. */
export function regex_full_match(handle: i32, input: string): bool {
  collectGarbageIfDue();
  const regex = lookup(handle);
  return regex !== null && regex.fullMatch(input);
}

/** Match anywhere in the input (RegExp.prototype.test); false for an unknown handle. */
export function regex_search(handle: i32, input: string): bool {
  collectGarbageIfDue();
  const regex = lookup(handle);
  return regex !== null && regex.search(input);
}

/** Frees the handle; unknown or already released handles are ignored. */
export function regex_release(handle: i32): void {
  if (lookup(handle) === null) return;
  handles[handle - 1] = null;
  freeSlots.push(handle - 1);
}
