import { queryParam } from "./attributes/query";
import { RequestView } from "./request";

/** Where an API key is looked for: a query parameter or a request header. */
export class ApiKeyLocation {
  constructor(
    public inQuery: bool,
    /** Query parameter name as written, or header name lower-cased. */
    public name: string,
  ) {}
}

// Used when a service's API specs configure no key locations.
export const DEFAULT_API_KEY_LOCATIONS: Array<ApiKeyLocation> = [
  new ApiKeyLocation(true, "key"),
  new ApiKeyLocation(true, "api_key"),
  new ApiKeyLocation(false, "x-api-key"),
];

/**
 * The API key of a request: the first configured location that is present
 * wins, even with an empty value (`?key=` yields ""). Query values are not
 * percent-decoded. Null when no location is present.
 */
export function extractApiKey(locations: Array<ApiKeyLocation>, req: RequestView): string | null {
  const path = req.header(":path");
  for (let i = 0; i < locations.length; i++) {
    const at = locations[i];
    const value = at.inQuery ? (path !== null ? queryParam(path as string, at.name) : null) : req.header(at.name);
    if (value !== null) return value;
  }
  return null;
}
