import { bytesEqualString, indexOfByte } from "../text";
import { decodeUtf8, encodeUtf8 } from "../utf8";
import { AttributeValue, StringMap } from "./value";
import { newSourceId, ViewMap } from "./view_map";

const QUESTION: u8 = 0x3f; // '?'
const AMPERSAND: u8 = 0x26; // '&'
const EQUALS: u8 = 0x3d; // '='

/** The length in bytes of the part of a `:path` (UTF-8 at `ptr`) before the first `?`. */
// @ts-ignore: decorator
@inline
export function urlPathLength(ptr: usize, len: usize): usize {
  const q = indexOfByte(ptr, 0, len, QUESTION);
  return q < 0 ? len : <usize>q;
}

/** The part of a `:path` before the first `?`. */
export function urlPath(path: string): string {
  const q = path.indexOf("?");
  return q < 0 ? path : path.substring(0, q);
}

/**
 * The query parameters of a request's `:path`, as the upstream client read
 * them: split on `&`, name and value split at the first `=`, a bare name
 * gets "", no percent-decoding, the first occurrence of a name wins. Its
 * entries are views into the path's bytes, which must outlive it (the
 * request's own header bytes).
 */
/** ViewMap.sourceFormat of a query read from its path. */
export const SOURCE_PATH_QUERY: u8 = 2;

export class QueryMap extends ViewMap {
  /** Reads the query of the path whose UTF-8 is at `ptr`; false when it has no parameters (no query, or an empty one). */
  // @ts-ignore: decorator
  @inline parse(ptr: usize, len: usize): bool {
    this.clearView();
    this.base = ptr;
    const q = indexOfByte(ptr, 0, len, QUESTION);
    if (q < 0) return false;
    let start = <usize>q + 1;
    while (start <= len) {
      let end = indexOfByte(ptr, start, len, AMPERSAND);
      if (end < 0) end = <isize>len;
      const stop = <usize>end;
      if (stop > start) {
        const eq = indexOfByte(ptr, start, stop, EQUALS);
        const keyEnd = eq >= 0 ? <usize>eq : stop;
        const valueStart = eq >= 0 ? <usize>eq + 1 : stop;
        // A repeated name keeps its first value.
        if (this.count == 0 || this.scanForBytes(ptr + start, keyEnd - start, 0) < 0) {
          this.append(0, <i32>start, <i32>(keyEnd - start), <i32>valueStart, <i32>(stop - valueStart));
        }
      }
      start = stop + 1;
    }
    // The entries depend on the query alone (from its `?`).
    this.sourcePtr = ptr + <usize>q;
    this.sourceLen = len - <usize>q;
    this.sourceKind = SOURCE_PATH_QUERY;
    this.sourceNumber = newSourceId();
    return this.count > 0;
  }
}

/**
 * Query parameters of a `:path`, as QueryMap reads them, as a map of
 * strings. Null when the path has no query or an empty one.
 */
export function queryParams(path: string): StringMap | null {
  const bytes = encodeUtf8(path);
  const m = new QueryMap();
  return m.parse(changetype<usize>(bytes), <usize>bytes.byteLength) ? m.clone() : null;
}

/**
 * One query parameter of a `:path` (UTF-8 at `ptr`) without reading the
 * whole query (the API-key lookup runs on every request): `into` becomes a
 * view of its value and the answer is true, or it is absent and the answer
 * false. A name present without `=` has the value "".
 */
export function queryParamInto(ptr: usize, len: usize, name: string, into: AttributeValue): bool {
  const q = indexOfByte(ptr, 0, len, QUESTION);
  return q >= 0 && queryParamAfter(ptr, len, <usize>q + 1, name, into);
}

/**
 * queryParamInto for a path whose query starts at byte `start` (just after
 * its `?`). The path's bytes are valid UTF-8 (a path value's text), so a
 * value cut at the ASCII `=` and `&` is too: its view is not checked again.
 */
// @ts-ignore: decorator
@inline
export function queryParamAfter(ptr: usize, len: usize, start: usize, name: string, into: AttributeValue): bool {
  while (start < len) {
    let end = indexOfByte(ptr, start, len, AMPERSAND);
    if (end < 0) end = <isize>len;
    const stop = <usize>end;
    const eq = indexOfByte(ptr, start, stop, EQUALS);
    const keyEnd = eq >= 0 ? <usize>eq : stop;
    if (bytesEqualString(ptr + start, keyEnd - start, name)) {
      const valueStart = keyEnd < stop ? keyEnd + 1 : stop;
      into.setCleanView(ptr + valueStart, stop - valueStart);
      return true;
    }
    start = stop + 1;
  }
  return false;
}

/** One query parameter of a `:path` (see queryParamInto); null when absent, "" when present without a value. */
export function queryParam(path: string, name: string): string | null {
  const bytes = encodeUtf8(path);
  const found = new AttributeValue();
  return queryParamInto(changetype<usize>(bytes), <usize>bytes.byteLength, name, found) ? decodeUtf8(found.textPtr(), found.textLen()) : null;
}
