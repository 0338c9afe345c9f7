/** A `*` glob (`*` matches any run of characters, nothing else is special), as a predicate. */
export interface Glob {
  test(text: string): boolean;
}

export function compileGlob(pattern: string): Glob {
  const parts = pattern.split("*");
  return Object.freeze({ test: (text: string) => globMatches(parts, text) });
}

// Matched without a regex: the first part is a prefix, the last a suffix, and
// the middle parts are found left to right (the leftmost place of each leaves
// the most room for the rest): no input can make it backtrack.
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
