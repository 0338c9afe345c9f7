import { queryParam } from "./attributes/query";
import { RequestView } from "./request";

/** Where an API key is looked for (upstream's APIKey oneof: query = 1, header = 2, cookie = 3). */
export const enum ApiKeyIn {
  Query = 0,
  Header = 1,
  Cookie = 2,
}

/** One place an API key may be: a query parameter, a request header or a cookie. */
export class ApiKeyLocation {
  constructor(
    public kind: ApiKeyIn,
    /** Query parameter and cookie names as written; header names lower-cased. */
    public name: string,
  ) {}
}

// Used when a service's API specs configure no key locations.
export const DEFAULT_API_KEY_LOCATIONS: Array<ApiKeyLocation> = [
  new ApiKeyLocation(ApiKeyIn.Query, "key"),
  new ApiKeyLocation(ApiKeyIn.Query, "api_key"),
  new ApiKeyLocation(ApiKeyIn.Header, "x-api-key"),
];

/**
 * The API key of a request: the first configured location that is present
 * wins, even with an empty query or header value (`?key=` yields ""); an
 * empty cookie value counts as absent, as upstream's cookie helper returned
 * "" for both. Query values are not percent-decoded. Null when no location
 * is present.
 */
export function extractApiKey(locations: Array<ApiKeyLocation>, req: RequestView): string | null {
  const path = req.header(":path");
  for (let i = 0; i < locations.length; i++) {
    const at = locations[i];
    let value: string | null = null;
    if (at.kind == ApiKeyIn.Query) {
      if (path !== null) value = queryParam(path as string, at.name);
    } else if (at.kind == ApiKeyIn.Header) {
      value = req.header(at.name);
    } else {
      const cookies = req.header("cookie");
      if (cookies !== null) value = cookieValue(cookies as string, at.name);
    }
    if (value !== null) return value;
  }
  return null;
}

/**
 * The value of cookie `name` in a `cookie` header, as Envoy's cookie helper
 * reads it: `;`-separated pairs, leading spaces trimmed, names compared
 * case-sensitively, pairs without `=` skipped, the first match wins, and a
 * value in double quotes is unquoted. Null when absent or empty.
 * Example: cookieValue(`a=1; sid="x y"`, "sid") is `x y`.
 */
export function cookieValue(header: string, name: string): string | null {
  let start = 0;
  const length = header.length;
  while (start < length) {
    let end = header.indexOf(";", start);
    if (end < 0) end = length;
    let at = start;
    while (at < end && header.charCodeAt(at) == 0x20) at++;
    const equals = header.indexOf("=", at);
    if (equals >= 0 && equals < end && equals - at == name.length && header.substring(at, equals) == name) {
      let valueStart = equals + 1;
      let valueEnd = end;
      if (valueEnd - valueStart >= 2 && header.charCodeAt(valueStart) == 0x22 && header.charCodeAt(valueEnd - 1) == 0x22) {
        valueStart++;
        valueEnd--;
      }
      return valueEnd > valueStart ? header.substring(valueStart, valueEnd) : null;
    }
    start = end + 1;
  }
  return null;
}
