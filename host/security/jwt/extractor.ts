import type { JwtRule } from "../../config/resources/security.ts";

/**
 * Where tokens are in a request (Envoy jwt_authn extractor; security.md §4.2).
 * A rule without fromHeaders/fromParams reads the defaults: header
 * `Authorization` with prefix `Bearer `, then query parameter `access_token`.
 * Configured locations replace the defaults. Every token found is returned:
 * the authenticator requires all of them to be valid.
 */

export type TokenLocation =
  | { readonly kind: "header" /** lower case */; readonly name: string; readonly prefix: string }
  | { readonly kind: "param"; readonly name: string };

export interface ExtractedToken {
  readonly token: string;
  readonly location: TokenLocation;
}

/** Header pairs with lower-case names; repeated names stay repeated. */
export type HeaderPairs = ReadonlyArray<readonly [string, string]>;

export const DEFAULT_TOKEN_HEADER = "authorization";
export const DEFAULT_TOKEN_PREFIX = "Bearer ";
export const DEFAULT_TOKEN_PARAM = "access_token";

// RFC 7515 compact serialization: base64url parts joined by dots.
const JWT_CHARS = /[A-Za-z0-9_.-]/;

/** The locations a rule reads, headers first (the order Envoy extracts in). */
export function tokenLocations(rule: Pick<JwtRule, "fromHeaders" | "fromParams">): TokenLocation[] {
  if (rule.fromHeaders.length === 0 && rule.fromParams.length === 0) {
    return [
      { kind: "header", name: DEFAULT_TOKEN_HEADER, prefix: DEFAULT_TOKEN_PREFIX },
      { kind: "param", name: DEFAULT_TOKEN_PARAM },
    ];
  }
  return [
    ...rule.fromHeaders.map((h): TokenLocation => ({ kind: "header", name: h.name.toLowerCase(), prefix: h.prefix })),
    ...rule.fromParams.map((name): TokenLocation => ({ kind: "param", name })),
  ];
}

/** A stable key for a location, so rules reading the same place share it. */
export function locationKey(l: TokenLocation): string {
  return l.kind === "header" ? `header:${l.name}:${l.prefix}` : `param:${l.name}`;
}

/**
 * The token in one header value. The prefix is searched for (case-sensitive,
 * anywhere in the value, as Envoy does); a value without it holds no token
 * (`Authorization: Basic …` is not an invalid bearer token). After the prefix,
 * characters outside the JWT alphabet are skipped and the token runs to the
 * first character outside it.
 */
export function tokenFromHeaderValue(value: string, prefix: string): string | undefined {
  let start = 0;
  if (prefix !== "") {
    const at = value.indexOf(prefix);
    if (at < 0) return undefined;
    start = at + prefix.length;
  }
  while (start < value.length && !JWT_CHARS.test(value[start])) start++;
  let end = start;
  while (end < value.length && JWT_CHARS.test(value[end])) end++;
  // Nothing JWT-like after the prefix: hand over what is there, so it fails as malformed.
  if (end === start) return value.slice(start).trim() === "" ? undefined : value.slice(start);
  return value.slice(start, end);
}

function queryOf(path: string): string {
  const q = path.indexOf("?");
  if (q < 0) return "";
  const hash = path.indexOf("#", q);
  return path.slice(q + 1, hash < 0 ? undefined : hash);
}

/** Every token at the given locations, in location order, then header/parameter order. */
export function extractTokens(request: { readonly headers: HeaderPairs; readonly path: string }, locations: readonly TokenLocation[]): ExtractedToken[] {
  const out: ExtractedToken[] = [];
  let params: URLSearchParams | undefined;
  for (const location of locations) {
    if (location.kind === "header") {
      for (const [name, value] of request.headers) {
        if (name !== location.name) continue;
        const token = tokenFromHeaderValue(value, location.prefix);
        if (token !== undefined) out.push({ token, location });
      }
    } else {
      params ??= new URLSearchParams(queryOf(request.path));
      for (const token of params.getAll(location.name)) if (token !== "") out.push({ token, location });
    }
  }
  return out;
}

/** The path without the named query parameters (a forwarded request must not carry a consumed token). */
export function removeQueryParams(path: string, names: ReadonlySet<string>): string {
  const q = path.indexOf("?");
  if (q < 0 || names.size === 0) return path;
  const hash = path.indexOf("#", q);
  const query = path.slice(q + 1, hash < 0 ? undefined : hash);
  const kept = query.split("&").filter((pair) => {
    if (pair === "") return false;
    const eq = pair.indexOf("=");
    const raw = eq < 0 ? pair : pair.slice(0, eq);
    let name: string;
    try {
      name = decodeURIComponent(raw.replace(/\+/g, " "));
    } catch {
      name = raw;
    }
    return !names.has(name);
  });
  return path.slice(0, q) + (kept.length > 0 ? `?${kept.join("&")}` : "") + (hash < 0 ? "" : path.slice(hash));
}
