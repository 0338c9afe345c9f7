// The regex engine's public surface; other code imports only this file.
// ECMAScript syntax (no flags), linear-time matching, constructs that need
// backtracking refused at compile time.
export { Regex, RegexResult } from "./regex";
export { RegexSet, RegexSetResult } from "./regex_set";
export { MAX_PATTERN_STATES, MAX_SET_STATES } from "./limits";
export { MAX_REPEAT_COUNT, MAX_NESTING } from "./parse";
