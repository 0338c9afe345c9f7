/**
 * The regular expressions of StringMatch.regex: full-string match, compiled
 * once at config load. This file is the only place that knows the engine; the
 * project's linear-time WebAssembly engine (`regex_check`, `regex_compile`,
 * `regex_full_match` in build/filter.wasm) can replace the JavaScript one here
 * without touching the rule engine.
 */
export interface RegexMatcher {
  /** True when the whole of `input` matches (not a substring). */
  matches(input: string): boolean;
}

export type CompileRegex = (pattern: string) => RegexMatcher | { error: string };

// Constructs a linear-time engine refuses; refused here too so that swapping
// engines does not turn accepted configuration into rejected configuration.
const UNSUPPORTED: ReadonlyArray<[RegExp, string]> = [
  [/\(\?<?[=!]/, "lookaround assertions are not supported"],
  [/\\[1-9]|\\k</, "backreferences are not supported"],
];

/** JavaScript RegExp anchored as `^(?:pattern)$`. */
export const compileRegex: CompileRegex = (pattern) => {
  for (const [construct, reason] of UNSUPPORTED) {
    if (construct.test(pattern)) return { error: reason };
  }
  let re: RegExp;
  try {
    re = new RegExp(`^(?:${pattern})$`);
  } catch (e) {
    return { error: (e as Error).message.replace(/^Invalid regular expression: /, "") };
  }
  return { matches: (input) => re.test(input) };
};
