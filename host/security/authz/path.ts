/**
 * Path normalization (security.md §5.3; mesh config `pathNormalization`),
 * Envoy's `normalize_path`, `merge_slashes` and
 * `path_with_escaped_slashes_action` as the mesh sets them per mode. The
 * sidecar applies it once, at the listener edge
 * (`host/proxy/http/request_target.ts`), so every policy decides on the path the
 * app receives: `/public/../private` is both checked and served as
 * `/private`.
 */

import { DEFAULT_PATH_NORMALIZATION, type PathNormalization } from "../../config/mesh_config.ts";

/** Upstream mesh setting values (MeshConfig's, host/config/mesh_config.ts); BASE is the mesh default. */
export { DEFAULT_PATH_NORMALIZATION, PATH_NORMALIZATIONS, type PathNormalization } from "../../config/mesh_config.ts";

export type NormalizedPath =
  | {
      readonly ok: true /** normalized path, query kept */;
      readonly path: string /** normalized path without query: what `paths` match */;
      readonly matchPath: string;
    }
  /** The request must be refused with 400 (an encoded NUL, as Envoy does). */
  | { readonly ok: false; readonly status: 400; readonly reason: "invalid_path" };

// RFC 3986 §2.3 unreserved characters: decoded wherever they appear percent-encoded.
const UNRESERVED = /[A-Za-z0-9\-._~]/;

// Other escapes are kept as sent, hex case included (Envoy forwards `/a/%2f` unchanged).
function decodeUnreserved(path: string): string {
  return path.replace(/%([0-9A-Fa-f]{2})/g, (whole, hex: string) => {
    const ch = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(ch) ? ch : whole;
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
 * and dot segments removed; `//`, `%2F` and `%5C` kept. MERGE_SLASHES also
 * merges slashes; DECODE_AND_MERGE_SLASHES first decodes `%2F` to `/` and
 * `%5C` to `\` (which then becomes `/`), as Envoy's UNESCAPE_AND_FORWARD. The
 * fragment is dropped; the query is kept in `path`, unchanged, and left out
 * of `matchPath`.
 *
 * One pass can create a new escape (`%%32%65` decodes to `%2e`, which an app
 * decoding once reads as `.`), so the steps repeat until nothing changes: the
 * result is a fixed point, and no spelling uncovers a dot segment (or, under
 * DECODE_AND_MERGE_SLASHES, a slash) that the policies did not see. A path
 * still changing after MAX_PASSES is refused like an encoded NUL.
 */
export function normalizePath(raw: string, mode: PathNormalization = DEFAULT_PATH_NORMALIZATION): NormalizedPath {
  const hash = raw.indexOf("#");
  const noFragment = hash < 0 ? raw : raw.slice(0, hash);
  const q = noFragment.indexOf("?");
  const given = q < 0 ? noFragment : noFragment.slice(0, q);
  let path = given;
  if (mode !== "NONE" && !alreadyNormal(path)) {
    for (let pass = 1; ; pass++) {
      if (/%00/.test(path)) return INVALID;
      const next = normalizeOnce(path, mode);
      if (next === path) break;
      if (pass === MAX_PASSES) return INVALID;
      path = next;
    }
  }
  // An unchanged path is the target as it came, a flat string: a concatenation would be
  // a new cons string per request, flattened again by each later reader (the filter's
  // header map, the upstream request's head).
  return { ok: true, path: path === given ? noFragment : q < 0 ? path : path + noFragment.slice(q), matchPath: path };
}

// Most paths hold nothing any mode changes (no escape, backslash, dot
// segment or repeated slash): they skip the passes, which cost the sidecar
// a few regex replacements per request.
const NEEDS_NORMALIZING = /[%\\]|\/\.|\/\//;
function alreadyNormal(path: string): boolean {
  return path.charCodeAt(0) === 0x2f && !NEEDS_NORMALIZING.test(path);
}

/** Enough for any path a client means; each pass undoes one level of nested escapes. */
const MAX_PASSES = 4;
const INVALID: NormalizedPath = Object.freeze({ ok: false, status: 400, reason: "invalid_path" });

function normalizeOnce(path: string, mode: Exclude<PathNormalization, "NONE">): string {
  if (mode === "DECODE_AND_MERGE_SLASHES") path = path.replace(/%2F/gi, "/").replace(/%5C/gi, "\\");
  path = removeDotSegments(decodeUnreserved(path.replace(/\\/g, "/")));
  if (mode === "MERGE_SLASHES" || mode === "DECODE_AND_MERGE_SLASHES") path = path.replace(/\/{2,}/g, "/");
  return path;
}
