import { StringMap } from "./string_map";

const QUESTION: u16 = 0x3f; // '?'
const AMPERSAND: u16 = 0x26; // '&'
const EQUALS: u16 = 0x3d; // '='

/**
 * The first index at or after `from` of the code unit `unit`, or -1. A plain
 * scan: `String#indexOf` compares a whole needle at every position.
 */
export function indexOfUnit(s: string, unit: u16, from: i32 = 0, end: i32 = -1): i32 {
  const n = end < 0 ? s.length : end;
  const base = changetype<usize>(s);
  for (let i = max(from, 0); i < n; i++) {
    if (load<u16>(base + (<usize>i << 1)) == unit) return i;
  }
  return -1;
}

/** `s[start, end)` equals `name`, compared in place. */
function sliceEquals(s: string, start: i32, end: i32, name: string): bool {
  const length = end - start;
  if (length != name.length) return false;
  return memory.compare(changetype<usize>(s) + (<usize>start << 1), changetype<usize>(name), <usize>length << 1) == 0;
}

/** The part of a `:path` before the first `?`. */
export function urlPath(path: string): string {
  const q = indexOfUnit(path, QUESTION);
  return q < 0 ? path : path.substring(0, q);
}

/**
 * Query parameters of a `:path`, as the upstream client read them: split on
 * `&`, name and value split at the first `=`, a bare name gets "", no
 * percent-decoding, the first occurrence of a name wins. Null when the path
 * has no query or an empty one.
 */
export function queryParams(path: string): StringMap | null {
  const m = new StringMap();
  return queryParamsInto(path, m) ? m : null;
}

/** The same parameters written into `m` (emptied first, storage kept); false when there are none. */
export function queryParamsInto(path: string, m: StringMap): bool {
  m.clear();
  const q = indexOfUnit(path, QUESTION);
  if (q < 0 || q + 1 >= path.length) return false;
  let start = q + 1;
  const n = path.length;
  while (start <= n) {
    let end = indexOfUnit(path, AMPERSAND, start);
    if (end < 0) end = n;
    if (end > start) {
      const eq = indexOfUnit(path, EQUALS, start, end);
      if (eq >= 0) m.setIfAbsent(path.substring(start, eq), path.substring(eq + 1, end));
      else m.setIfAbsent(path.substring(start, end), "");
    }
    start = end + 1;
  }
  return m.size > 0;
}

/**
 * One query parameter without building the whole map (the API-key lookup
 * runs on every request). Null when absent; "" when present without a value.
 */
export function queryParam(path: string, name: string): string | null {
  const q = indexOfUnit(path, QUESTION);
  if (q < 0) return null;
  const n = path.length;
  let start = q + 1;
  while (start < n) {
    let end = indexOfUnit(path, AMPERSAND, start);
    if (end < 0) end = n;
    const nameEnd = indexOfUnit(path, EQUALS, start, end);
    const keyEnd = nameEnd >= 0 ? nameEnd : end;
    if (sliceEquals(path, start, keyEnd, name)) {
      return keyEnd < end ? path.substring(keyEnd + 1, end) : "";
    }
    start = end + 1;
  }
  return null;
}
