import { FilterModule } from "../wasm/filter_module.ts";

/**
 * The one regular-expression engine for every pattern a user configures or
 * sends: routing (VirtualService StringMatch), admin filters (`/stats?filter=`,
 * `/config_dump?name_regex=`), analyzers, hub rules and the filter module.
 * Patterns run on the filter's own linear-time engine (the `regex_*` exports
 * of build/filter.wasm, assembly/regex/): matching time grows with the input
 * only, constructs that need backtracking (lookaround, backreferences) and
 * programs above the size limit are refused at compile time. That is the
 * guarantee RE2 gives Envoy; a JavaScript RegExp would backtrack
 * exponentially on patterns such as `/v1/(\w+\.?)+`.
 */
export interface RegexMatcher {
  /** True when the whole of `input` matches (not a substring). */
  matches(input: string): boolean;
}

/** A compiled pattern: whole-input and anywhere-in-input matching. */
export interface CompiledRegex extends RegexMatcher {
  /** True when some part of `input` matches (RE2 PartialMatch, RegExp.prototype.test). */
  search(input: string): boolean;
  /** Frees the compiled program now; later calls answer false. Optional: an unreachable matcher is freed by the collector. */
  release(): void;
}

export type CompileRegex = (pattern: string) => RegexMatcher | { error: string };
export type CompileRegexWith = (pattern: string) => CompiledRegex | { error: string };

// A compiled program lives in the module's handle table until released; a
// matcher dropped with the configuration that held it releases its handle
// when collected, so reloading configuration does not grow module memory.
const handles = new FinalizationRegistry<() => void>((release) => release());

/** A compiler over one loaded filter module (meshctl and tests pass theirs). */
export function regexCompiler(module: Pick<FilterModule, "compileRegex">): CompileRegexWith {
  return (pattern) => {
    const compiled = module.compileRegex(pattern);
    if ("error" in compiled) return { error: compiled.error };
    let live = true;
    const free = () => {
      if (!live) return;
      live = false;
      compiled.release();
    };
    const matcher: CompiledRegex = {
      // Methods go through `matcher`, so a method kept alone keeps the program alive.
      matches: (input) => live && matcher !== undefined && compiled.fullMatch(input),
      search: (input) => live && matcher !== undefined && compiled.search(input),
      release: () => {
        handles.unregister(matcher);
        free();
      },
    };
    handles.register(matcher, free, matcher);
    return matcher;
  };
}

// One module instance serves the whole process; it is loaded on the first
// regex, so processes without configured regexes never pay for it.
let shared: CompileRegexWith | undefined;

/** Compiles on the process's shared filter module (loaded on first use). */
export const compileRegex: CompileRegexWith = (pattern) => {
  shared ??= regexCompiler(FilterModule.load());
  return shared(pattern);
};
