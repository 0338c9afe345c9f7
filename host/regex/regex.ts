import { FilterModule } from "../wasm/filter_module.ts";

/**
 * The regular expressions of StringMatch.regex: full-string match, compiled
 * once at config load. They run on the filter's own linear-time engine (the
 * `regex_*` exports of build/filter.wasm), so the hub accepts and refuses
 * exactly the patterns the filter does, and no rule can be made to backtrack.
 */
export interface RegexMatcher {
  /** True when the whole of `input` matches (not a substring). */
  matches(input: string): boolean;
}

export type CompileRegex = (pattern: string) => RegexMatcher | { error: string };

// One module instance serves every rule of the process; it is loaded on the
// first regex so processes without regex rules never pay for it.
let engine: FilterModule | undefined;

export const compileRegex: CompileRegex = (pattern) => {
  engine ??= FilterModule.load();
  const compiled = engine.compileRegex(pattern);
  if ("error" in compiled) return { error: compiled.error };
  return { matches: (input) => compiled.fullMatch(input) };
};
