import { HeaderMap } from "./attributes/header_map";
import { queryParamAfter } from "./attributes/query";
import { AttributeValue } from "./attributes/value";
import { knownSlotOfString } from "./known_strings";
import { RequestView } from "./request";
import { bytesEqualString, indexOfByte } from "./text";
import { decodeUtf8, encodeUtf8 } from "./utf8";

/** Where an API key is looked for (upstream's APIKey oneof: query = 1, header = 2, cookie = 3). */
export const enum ApiKeyIn {
  Query = 0,
  Header = 1,
  Cookie = 2,
}

/** One place an API key may be: a query parameter, a request header or a cookie. */
export class ApiKeyLocation {
  /** A header name's known-string slot (header_map.ts), -1 for any other name. */
  readonly headerSlot: i32;

  constructor(
    public kind: ApiKeyIn,
    /** Query parameter and cookie names as written; header names lower-cased. */
    public name: string,
  ) {
    this.headerSlot = kind == ApiKeyIn.Header ? knownSlotOfString(name) : -1;
  }
}

// Used when a service's API specs configure no key locations.
export const DEFAULT_API_KEY_LOCATIONS: Array<ApiKeyLocation> = [
  new ApiKeyLocation(ApiKeyIn.Query, "key"),
  new ApiKeyLocation(ApiKeyIn.Query, "api_key"),
  new ApiKeyLocation(ApiKeyIn.Header, "x-api-key"),
];

const COOKIE = knownSlotOfString("cookie");

/**
 * The API key of a request: the first configured location that is present
 * wins, even with an empty query or header value (`?key=` yields ""); an
 * empty cookie value counts as absent, as upstream's cookie helper returned
 * "" for both. Query values are not percent-decoded. Null when no location
 * is present.
 */
export function extractApiKey(locations: Array<ApiKeyLocation>, req: RequestView): string | null {
  const headers = req.headerMap();
  const at = headers.indexOfSlot(knownSlotOfString(":path"));
  const path = new AttributeValue();
  if (at >= 0) headers.valueInto(at, path);
  const key = new AttributeValue();
  return apiKeyInto(locations, headers, at >= 0 ? path : null, key, new AttributeValue()) ? key.str : null;
}

/**
 * extractApiKey over a request's own header map and `:path` (null when
 * absent), read in place: `into` becomes the key's value (a view of the
 * request's bytes) and the answer is true, or no location is present.
 * `cookie` is scratch space for the cookie header.
 */
// @ts-ignore: decorator
@inline
export function apiKeyInto(locations: Array<ApiKeyLocation>, headers: HeaderMap, path: AttributeValue | null, into: AttributeValue, cookie: AttributeValue): bool {
  // Where the path's query starts, found once for every query location (-1: none).
  let query: isize = -1;
  let pathPtr: usize = 0;
  let pathLen: usize = 0;
  if (path !== null) {
    pathPtr = path.textPtr();
    pathLen = path.textLen();
    query = indexOfByte(pathPtr, 0, pathLen, 0x3f); // '?'
  }
  for (let i = 0, n = locations.length; i < n; i++) {
    const at = unchecked(locations[i]);
    if (at.kind == ApiKeyIn.Query) {
      if (query >= 0 && queryParamAfter(pathPtr, pathLen, <usize>query + 1, at.name, into)) return true;
    } else if (at.kind == ApiKeyIn.Header) {
      const slot = at.headerSlot;
      const found = slot >= 0 ? headers.indexOfSlot(slot) : headers.indexOf(at.name);
      if (found >= 0) {
        headers.valueInto(found, into);
        return true;
      }
    } else {
      const found = headers.indexOfSlot(COOKIE);
      if (found >= 0) {
        headers.valueInto(found, cookie);
        if (cookieValueInto(cookie.textPtr(), cookie.textLen(), at.name, into)) return true;
      }
    }
  }
  return false;
}

/**
 * The value of cookie `name` in a `cookie` header, as Envoy's cookie helper
 * reads it: `;`-separated pairs, leading spaces trimmed, names compared
 * case-sensitively, pairs without `=` skipped, the first match wins, and a
 * value in double quotes is unquoted. Null when absent or empty.
 * Example: cookieValue(`a=1; sid="x y"`, "sid") is `x y`.
 */
export function cookieValue(header: string, name: string): string | null {
  const bytes = encodeUtf8(header);
  const found = new AttributeValue();
  return cookieValueInto(changetype<usize>(bytes), <usize>bytes.byteLength, name, found) ? decodeUtf8(found.textPtr(), found.textLen()) : null;
}

/** cookieValue over the header's UTF-8 at `ptr`, in place: `into` becomes a view of the value, or the answer is false. */
export function cookieValueInto(ptr: usize, len: usize, name: string, into: AttributeValue): bool {
  let start: usize = 0;
  while (start < len) {
    let found = indexOfByte(ptr, start, len, 0x3b); // ';'
    const end = found < 0 ? len : <usize>found;
    let at = start;
    while (at < end && load<u8>(ptr + at) == 0x20) at++;
    const equals = indexOfByte(ptr, at, len, 0x3d); // '='
    if (equals >= 0 && <usize>equals < end && bytesEqualString(ptr + at, <usize>equals - at, name)) {
      let valueStart = <usize>equals + 1;
      let valueEnd = end;
      if (valueEnd - valueStart >= 2 && load<u8>(ptr + valueStart) == 0x22 && load<u8>(ptr + valueEnd - 1) == 0x22) {
        valueStart++;
        valueEnd--;
      }
      if (valueEnd <= valueStart) return false;
      into.setView(ptr + valueStart, valueEnd - valueStart);
      return true;
    }
    start = end + 1;
  }
  return false;
}
