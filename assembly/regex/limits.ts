// Size limits applied at compile time, so a configuration cannot make the
// per-request matcher arbitrarily expensive. Matching cost per input code
// unit is bounded by the program size when a DFA transition is not cached.

/** Most automaton (NFA) states one pattern may compile to. */
export const MAX_PATTERN_STATES: i32 = 20000;
/** Most automaton states a whole RegexSet may compile to. */
export const MAX_SET_STATES: i32 = 200000;
