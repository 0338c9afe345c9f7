import { StringMap } from "./string_map";

/** The part of a `:path` before the first `?`. */
export function urlPath(path: string): string {
  const q = path.indexOf("?");
  return q < 0 ? path : path.substring(0, q);
}

/**
 * Query parameters of a `:path`, as the upstream client read them: split on
 * `&`, name and value split at the first `=`, a bare name gets "", no
 * percent-decoding, the first occurrence of a name wins. Null when the path
 * has no query or an empty one.
 */
export function queryParams(path: string): StringMap | null {
  const q = path.indexOf("?");
  if (q < 0 || q + 1 >= path.length) return null;
  const m = new StringMap();
  let start = q + 1;
  const n = path.length;
  while (start <= n) {
    let end = path.indexOf("&", start);
    if (end < 0) end = n;
    if (end > start) {
      const eq = path.indexOf("=", start);
      if (eq >= 0 && eq < end) m.setIfAbsent(path.substring(start, eq), path.substring(eq + 1, end));
      else m.setIfAbsent(path.substring(start, end), "");
    }
    start = end + 1;
  }
  return m.size > 0 ? m : null;
}

/**
 * One query parameter without building the whole map (the API-key lookup
 * runs on every request). Null when absent; "" when present without a value.
 */
export function queryParam(path: string, name: string): string | null {
  const q = path.indexOf("?");
  if (q < 0) return null;
  const n = path.length;
  let start = q + 1;
  while (start < n) {
    let end = path.indexOf("&", start);
    if (end < 0) end = n;
    const nameEnd = path.indexOf("=", start);
    const keyEnd = nameEnd >= 0 && nameEnd < end ? nameEnd : end;
    if (keyEnd - start == name.length && path.substring(start, keyEnd) == name) {
      return keyEnd < end ? path.substring(keyEnd + 1, end) : "";
    }
    start = end + 1;
  }
  return null;
}
