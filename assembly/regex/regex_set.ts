// Many patterns compiled into one automaton: one pass over the input tells
// which of them match in full, so per-request cost does not grow with the
// number of patterns (RE2::Set).
import { Node } from "./ast";
import { DEAD, LazyDfa, NOT_ASCII } from "./dfa";
import { tooLarge } from "./errors";
import { MAX_PATTERN_STATES, MAX_SET_STATES } from "./limits";
import { compileProgram, estimateSize } from "./nfa";
import { parseRegex } from "./parse";

export class RegexSetResult {
  constructor(public set: RegexSet | null, public error: string, public failedIndex: i32) {}
}

export class RegexSet {
  private constructor(private dfa: LazyDfa, private size: i32) {}

  /**
   * Compiles every pattern; on the first refusal the error names the
   * pattern's index. Never throws.
   * Example: RegexSet.compile(["a.*", ".*b"]).set!.matchAll("ab", out) -> out == [0, 1]
   */
  static compile(patterns: Array<string>): RegexSetResult {
    const nodes = new Array<Node>();
    let total: i64 = 0;
    for (let i = 0; i < patterns.length; i++) {
      const parsed = parseRegex(patterns[i]);
      if (parsed.node === null) return failure(i, parsed.error);
      const size = estimateSize(parsed.node!);
      if (size > MAX_PATTERN_STATES) return failure(i, tooLarge(size, MAX_PATTERN_STATES));
      total += size + 2;
      if (total > MAX_SET_STATES) return failure(i, tooLarge(total, MAX_SET_STATES) + " for the whole set");
      nodes.push(parsed.node!);
    }
    const set = new RegexSet(new LazyDfa(compileProgram(nodes, false), false), patterns.length);
    return new RegexSetResult(set, "", -1);
  }

  /** Clears `out`, then appends the index of every pattern that matches all of `input`, ascending. */
  matchAll(input: string, out: Array<i32>): void {
    out.length = 0;
    const s = this.dfa.run(input);
    if (s != DEAD) this.dfa.appendEndMatches(s, out);
  }

  /**
   * matchAll over the `len` bytes at `ptr` when they are ASCII text (then
   * the same as over the string they decode to); false, `out` cleared, when
   * they are not: match their decoded string with matchAll.
   */
  matchAllAscii(ptr: usize, len: usize, out: Array<i32>): bool {
    if (out.length != 0) out.length = 0;
    const s = this.dfa.runAscii(ptr, len);
    if (s == NOT_ASCII) return false;
    if (s != DEAD) this.dfa.appendEndMatches(s, out);
    return true;
  }

  count(): i32 {
    return this.size;
  }
}

function failure(index: i32, error: string): RegexSetResult {
  return new RegexSetResult(null, "pattern " + index.toString() + ": " + error, index);
}
