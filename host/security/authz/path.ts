/**
 * Path normalization before authorization (security.md §5.3; mesh config
 * `pathNormalization`). The normalized path is also what the sidecar should
 * forward, so `/public/../private` is both checked and served as `/private`.
 */

/** Upstream mesh setting values; BASE is the mesh default. */
export const PATH_NORMALIZATIONS = ["NONE", "BASE", "MERGE_SLASHES", "DECODE_AND_MERGE_SLASHES"] as const;
export type PathNormalization = (typeof PATH_NORMALIZATIONS)[number];
export const DEFAULT_PATH_NORMALIZATION: PathNormalization = "BASE";

export type NormalizedPath =
  | { readonly ok: true; /** normalized path, query kept */ readonly path: string; /** normalized path without query: what `paths` match */ readonly matchPath: string }
  /** The request must be refused with 400 (an encoded NUL, as Envoy does). */
  | { readonly ok: false; readonly status: 400; readonly reason: "invalid_path" };

// RFC 3986 §2.3 unreserved characters: decoded wherever they appear percent-encoded.
const UNRESERVED = /[A-Za-z0-9\-._~]/;

function decodeUnreserved(path: string): string {
  return path.replace(/%([0-9A-Fa-f]{2})/g, (whole, hex: string) => {
    const ch = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(ch) ? ch : `%${hex.toUpperCase()}`;
  });
}

/** RFC 3986 §5.2.4 remove_dot_segments. */
export function removeDotSegments(path: string): string {
  const input = path.split("/");
  const out: string[] = [];
  for (let i = 0; i < input.length; i++) {
    const seg = input[i];
    const last = i === input.length - 1;
    if (seg === ".") {
      if (last) out.push("");
    } else if (seg === "..") {
      if (out.length > 1) out.pop();
      if (last) out.push("");
    } else {
      out.push(seg);
    }
  }
  const joined = out.join("/");
  return path.startsWith("/") && !joined.startsWith("/") ? `/${joined}` : joined;
}

/**
 * Normalizes `:path` under a mode. BASE: backslashes become slashes,
 * percent-encoded unreserved characters are decoded (so `%2E%2E` is `..`)
 * and dot segments removed; `//` kept. MERGE_SLASHES also merges slashes;
 * DECODE_AND_MERGE_SLASHES first decodes `%2F` and `%5C`. The fragment is
 * dropped; the query is kept in `path` and left out of `matchPath`.
 */
export function normalizePath(raw: string, mode: PathNormalization = DEFAULT_PATH_NORMALIZATION): NormalizedPath {
  const hash = raw.indexOf("#");
  const noFragment = hash < 0 ? raw : raw.slice(0, hash);
  const q = noFragment.indexOf("?");
  let path = q < 0 ? noFragment : noFragment.slice(0, q);
  const query = q < 0 ? "" : noFragment.slice(q);
  if (mode !== "NONE") {
    if (/%00/.test(path)) return { ok: false, status: 400, reason: "invalid_path" };
    if (mode === "DECODE_AND_MERGE_SLASHES") path = path.replace(/%2F/gi, "/").replace(/%5C/gi, "\\");
    path = removeDotSegments(decodeUnreserved(path.replace(/\\/g, "/")));
    if (mode === "MERGE_SLASHES" || mode === "DECODE_AND_MERGE_SLASHES") path = path.replace(/\/{2,}/g, "/");
  }
  return { ok: true, path: path + query, matchPath: path };
}
