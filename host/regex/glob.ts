/**
 * `*` globs (any run of characters, `:` and `/` included; every other
 * character literal), matched without a regex: the first part is a prefix,
 * the last a suffix, and the middle parts are found left to right (the
 * leftmost place of each leaves the most room for the rest). No input can make
 * it backtrack, which a glob turned into `^…$` with `.*` can (issue 25).
 */
export interface GlobPattern {
  readonly pattern: string;
  test(text: string): boolean;
}

export function globPattern(pattern: string): GlobPattern {
  const parts = pattern.split("*");
  return Object.freeze({ pattern, test: (text: string) => globMatches(parts, text) });
}

function globMatches(parts: readonly string[], text: string): boolean {
  if (parts.length === 1) return text === parts[0];
  const first = parts[0];
  const last = parts[parts.length - 1];
  if (text.length < first.length + last.length || !text.startsWith(first) || !text.endsWith(last)) return false;
  let at = first.length;
  const end = text.length - last.length;
  for (const part of parts.slice(1, -1)) {
    const found = text.indexOf(part, at);
    if (found < 0 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
}
