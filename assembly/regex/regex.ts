// A compiled pattern: full-string match (like C++ std::regex_match, or a
// JavaScript RegExp /^(?:p)$/) and unanchored search (RegExp.prototype.test).
import { Node } from "./ast";
import { DEAD, LazyDfa, MATCHED } from "./dfa";
import { tooLarge } from "./errors";
import { MAX_PATTERN_STATES } from "./limits";
import { compileProgram, estimateSize } from "./nfa";
import { parseRegex } from "./parse";

export class RegexResult {
  constructor(public regex: Regex | null, public error: string) {}
}

export class Regex {
  private constructor(
    public readonly source: string,
    private anchored: LazyDfa,
    private unanchored: LazyDfa,
  ) {}

  /**
   * Compiles `pattern` (ECMAScript syntax, no flags); never throws.
   * Example: Regex.compile("/api/v[0-9]+/.*").regex!.fullMatch("/api/v2/x") == true
   */
  static compile(pattern: string): RegexResult {
    const parsed = parseRegex(pattern);
    if (parsed.node === null) return new RegexResult(null, parsed.error);
    const node = parsed.node!;
    const size = estimateSize(node);
    if (size > MAX_PATTERN_STATES) return new RegexResult(null, tooLarge(size, MAX_PATTERN_STATES));
    const patterns: Array<Node> = [node];
    const regex = new Regex(
      pattern,
      new LazyDfa(compileProgram(patterns, false), false),
      new LazyDfa(compileProgram(patterns, true), true),
    );
    return new RegexResult(regex, "");
  }

  /** Whether the whole of `input` matches. */
  fullMatch(input: string): bool {
    const s = this.anchored.run(input);
    return s != DEAD && this.anchored.endsInMatch(s);
  }

  /** Whether a match occurs anywhere in `input`. */
  search(input: string): bool {
    const s = this.unanchored.run(input);
    if (s == MATCHED) return true;
    return s != DEAD && this.unanchored.endsInMatch(s);
  }

  /** Cache flushes so far (both automata); for tests and diagnostics. */
  get cacheFlushes(): i32 {
    return this.anchored.flushes + this.unanchored.flushes;
  }
}
