// Error messages of the regex compiler. They end up in configuration
// rejections, so each names the construct, quotes the pattern text and gives
// the 0-based position in the pattern.
//
// Two families:
//   "unsupported regex construct: ..."  valid ECMAScript the engine refuses
//                                        (needs backtracking, or exceeds a limit)
//   "invalid regex: ..."                 not a valid ECMAScript pattern either

export function needsBacktracking(construct: string, token: string, pos: i32): string {
  return "unsupported regex construct: " + construct + ' "' + token + '" at position ' + pos.toString() + " (needs backtracking)";
}

export function unsupported(what: string, pos: i32): string {
  return "unsupported regex construct: " + what + " at position " + pos.toString();
}

export function invalid(what: string, pos: i32): string {
  return "invalid regex: " + what + " at position " + pos.toString();
}

export function tooLarge(estimate: i64, limit: i32): string {
  return (
    "unsupported regex construct: pattern too large: it compiles to about " +
    estimate.toString() +
    " automaton states, above the limit of " +
    limit.toString() +
    " (counted repetition such as {n,m} copies the repeated part n to m times)"
  );
}
