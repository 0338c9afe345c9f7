// Parser for ECMAScript regular expressions as written without flags
// (ECMA-262 §22.2.1 with the Annex B.1.2 web-compatibility grammar, which is
// what every JavaScript engine applies to a pattern without the `u` flag).
//
// Constructs whose meaning depends on backtracking (backreferences,
// lookaround) are refused here, at configuration load, rather than being
// approximated at match time. Errors are returned as values: a throw would
// trap the whole module.
import { AssertKind, Node, UNBOUNDED } from "./ast";
import { CharSet, dotSet } from "./char_set";
import { classEscape, Escape, isAsciiLetter, isDigit, readCharacterEscape } from "./escape";
import { invalid, needsBacktracking, unsupported } from "./errors";

/** Largest count accepted in `{n}`, `{n,}` and `{n,m}`. */
export const MAX_REPEAT_COUNT: i32 = 1000;
/** Deepest group nesting accepted; bounds the parser's and compiler's recursion. */
export const MAX_NESTING: i32 = 200;

export class ParseResult {
  constructor(public node: Node | null, public error: string) {}
}

/**
 * Parses `pattern`; on failure `node` is null and `error` says why.
 * Example: parseRegex("a(?=b)").error ==
 *   'unsupported regex construct: lookahead "(?=" at position 1 (needs backtracking)'
 */
export function parseRegex(pattern: string): ParseResult {
  const parser = new Parser(pattern);
  const node = parser.parseDisjunction();
  if (node === null) return new ParseResult(null, parser.error);
  if (parser.pos < pattern.length) {
    // parseAlternative only stops early at ")" with no group open.
    return new ParseResult(null, invalid('unmatched ")"', parser.pos));
  }
  return new ParseResult(node, "");
}

// Code units the parser dispatches on.
const BACKSLASH: i32 = 0x5c;
const DASH: i32 = 0x2d;

function isGroupNameChar(c: i32, first: bool): bool {
  // ASCII identifier characters; any non-ASCII code unit is let through
  // (JavaScript accepts Unicode ID_Start/ID_Continue there).
  if (isAsciiLetter(c) || c == 0x24 || c == 0x5f || c >= 0x80) return true;
  return !first && isDigit(c);
}

class Parser {
  pos: i32 = 0;
  error: string = "";
  depth: i32 = 0;
  // Outputs of parseBraces. Counts are clamped to MAX_REPEAT_COUNT + 1, so a
  // count of 2^32 or more can never wrap into range.
  braceMin: i64 = 0;
  braceMax: i64 = 0;
  braceOutOfOrder: bool = false;
  braceEnd: i32 = 0;
  // Output of parseClassAtom: a code unit, or a set for a class escape.
  atomChar: i32 = 0;
  atomSet: CharSet | null = null;
  // Output of readCharacterEscape, reused.
  escape: Escape = new Escape();

  constructor(public src: string) {}

  at(i: i32): i32 {
    return i < this.src.length ? this.src.charCodeAt(i) : -1;
  }

  fail(message: string): Node | null {
    if (this.error.length == 0) this.error = message;
    return null;
  }

  parseDisjunction(): Node | null {
    const alternatives = new Array<Node>();
    for (;;) {
      const alt = this.parseAlternative();
      if (alt === null) return null;
      alternatives.push(alt);
      if (this.at(this.pos) != 0x7c /* | */) break;
      this.pos++;
    }
    return alternatives.length == 1 ? alternatives[0] : Node.alternate(alternatives);
  }

  parseAlternative(): Node | null {
    const terms = new Array<Node>();
    for (;;) {
      const c = this.at(this.pos);
      if (c < 0 || c == 0x7c /* | */ || c == 0x29 /* ) */) break;
      const term = this.parseTerm();
      if (term === null) return null;
      terms.push(term);
    }
    if (terms.length == 0) return Node.empty();
    return terms.length == 1 ? terms[0] : Node.concat(terms);
  }

  parseTerm(): Node | null {
    const start = this.pos;
    const c = this.at(start);
    let atom: Node | null = null;
    switch (c) {
      case 0x5e /* ^ */:
        this.pos++;
        return this.unquantified(Node.assertion(AssertKind.BeginText));
      case 0x24 /* $ */:
        this.pos++;
        return this.unquantified(Node.assertion(AssertKind.EndText));
      case BACKSLASH: {
        const e = this.at(start + 1);
        if (e == 0x62 /* b */ || e == 0x42 /* B */) {
          this.pos += 2;
          return this.unquantified(Node.assertion(e == 0x62 ? AssertKind.WordBoundary : AssertKind.NotWordBoundary));
        }
        atom = this.parseAtomEscape();
        break;
      }
      case 0x28 /* ( */:
        atom = this.parseGroup();
        break;
      case 0x5b /* [ */:
        atom = this.parseClass();
        break;
      case 0x2e /* . */:
        this.pos++;
        atom = Node.chars(dotSet());
        break;
      case 0x2a /* * */:
      case 0x2b /* + */:
      case 0x3f /* ? */:
        return this.nothingToRepeat(start);
      case 0x7b /* { */:
        // Annex B: a `{` that does not open a valid quantifier is a literal;
        // a valid one here has no atom before it (InvalidBracedQuantifier).
        if (this.parseBraces(start)) return this.nothingToRepeat(start);
        this.pos++;
        atom = Node.literal(c);
        break;
      default:
        // Annex B ExtendedPatternCharacter: `]` and `}` are literals too.
        this.pos++;
        atom = Node.literal(c);
    }
    if (atom === null) return null;
    return this.parseQuantifier(atom);
  }

  /** Assertions take no quantifier (ECMA-262 Term :: Assertion). */
  unquantified(node: Node): Node | null {
    const c = this.at(this.pos);
    if (c == 0x2a || c == 0x2b || c == 0x3f || (c == 0x7b && this.parseBraces(this.pos))) {
      return this.nothingToRepeat(this.pos);
    }
    return node;
  }

  nothingToRepeat(pos: i32): Node | null {
    const end = this.at(pos) == 0x7b && this.parseBraces(pos) ? this.braceEnd : pos + 1;
    return this.fail(invalid('nothing to repeat before quantifier "' + this.src.substring(pos, end) + '"', pos));
  }

  /**
   * Reads `{n}`, `{n,}` or `{n,m}` at `pos` into braceMin/braceMax/braceEnd
   * (and braceOutOfOrder). Returns false (and consumes nothing) if the text
   * is not a quantifier.
   */
  parseBraces(pos: i32): bool {
    if (this.at(pos) != 0x7b) return false;
    const minStart = pos + 1;
    if (!isDigit(this.at(minStart))) return false;
    let i = minStart;
    while (isDigit(this.at(i))) i++;
    const minEnd = i;
    let maxStart = minStart;
    let maxEnd = minEnd;
    let unbounded = false;
    if (this.at(i) == 0x2c /* , */) {
      i++;
      if (isDigit(this.at(i))) {
        maxStart = i;
        while (isDigit(this.at(i))) i++;
        maxEnd = i;
      } else {
        unbounded = true;
      }
    }
    if (this.at(i) != 0x7d /* } */) return false;
    this.braceMin = clampedCount(this.src, minStart, minEnd);
    this.braceMax = unbounded ? <i64>UNBOUNDED : clampedCount(this.src, maxStart, maxEnd);
    // Compared on the digits, so order is exact at any size (ECMA-262 compares mathematical values).
    this.braceOutOfOrder = !unbounded && compareDigits(this.src, minStart, minEnd, maxStart, maxEnd) > 0;
    this.braceEnd = i + 1;
    return true;
  }

  parseQuantifier(atom: Node): Node | null {
    const start = this.pos;
    const c = this.at(start);
    let min: i32;
    let max: i32;
    let end = start + 1;
    if (c == 0x2a /* * */) {
      min = 0;
      max = UNBOUNDED;
    } else if (c == 0x2b /* + */) {
      min = 1;
      max = UNBOUNDED;
    } else if (c == 0x3f /* ? */) {
      min = 0;
      max = 1;
    } else if (c == 0x7b && this.parseBraces(start)) {
      const braceMin = this.braceMin;
      const braceMax = this.braceMax;
      end = this.braceEnd;
      const text = this.src.substring(start, end);
      if (this.braceOutOfOrder) {
        return this.fail(invalid('numbers out of order in quantifier "' + text + '"', start));
      }
      // Compared before narrowing to i32: `x{4294967296}` must not read as `x{0}`.
      if (braceMin > <i64>MAX_REPEAT_COUNT || braceMax > <i64>MAX_REPEAT_COUNT) {
        return this.fail(
          unsupported('repeat count above ' + MAX_REPEAT_COUNT.toString() + ' in quantifier "' + text + '"', start),
        );
      }
      min = <i32>braceMin;
      max = <i32>braceMax;
    } else {
      return atom;
    }
    this.pos = end;
    let greedy = true;
    if (this.at(this.pos) == 0x3f /* ? */) {
      greedy = false;
      this.pos++;
    }
    // A second quantifier (`a**`, `a{2}{3}`) is refused by the next parseTerm.
    return Node.repeat(atom, min, max, greedy);
  }

  parseGroup(): Node | null {
    const start = this.pos;
    this.pos++;
    if (this.at(this.pos) == 0x3f /* ? */) {
      const kind = this.at(this.pos + 1);
      if (kind == 0x3a /* : */) {
        this.pos += 2;
      } else if (kind == 0x3d /* = */) {
        return this.fail(needsBacktracking("lookahead", "(?=", start));
      } else if (kind == 0x21 /* ! */) {
        return this.fail(needsBacktracking("negative lookahead", "(?!", start));
      } else if (kind == 0x3c /* < */) {
        const next = this.at(this.pos + 2);
        if (next == 0x3d) return this.fail(needsBacktracking("lookbehind", "(?<=", start));
        if (next == 0x21) return this.fail(needsBacktracking("negative lookbehind", "(?<!", start));
        // Named group: the name is checked and then ignored (no captures).
        let i = this.pos + 2;
        while (isGroupNameChar(this.at(i), i == this.pos + 2)) i++;
        if (i == this.pos + 2 || this.at(i) != 0x3e /* > */) {
          return this.fail(invalid('invalid capture group name in "' + this.src.substring(start, i + 1) + '"', start));
        }
        this.pos = i + 1;
      } else {
        return this.fail(invalid('invalid group "' + this.src.substring(start, this.pos + 2) + '"', start));
      }
    }
    if (++this.depth > MAX_NESTING) {
      return this.fail(unsupported("groups nested deeper than " + MAX_NESTING.toString(), start));
    }
    const inner = this.parseDisjunction();
    if (inner === null) return null;
    if (this.at(this.pos) != 0x29 /* ) */) {
      return this.fail(invalid('missing ")" to close the group opened', start));
    }
    this.pos++;
    this.depth--;
    return inner;
  }

  /** `\` outside a class, other than `\b` and `\B`. */
  parseAtomEscape(): Node | null {
    const start = this.pos;
    const c = this.at(start + 1);
    if (c < 0) return this.fail(incompleteEscape(start));
    const set = classEscape(c);
    if (set !== null) {
      this.pos += 2;
      return Node.chars(set);
    }
    if (c >= 0x31 && c <= 0x39) {
      // Refused even where Annex B would read a legacy octal escape (no group
      // of that number): the two readings are easy to confuse.
      let i = start + 1;
      while (isDigit(this.at(i))) i++;
      return this.fail(needsBacktracking("backreference", this.src.substring(start, i), start));
    }
    if (c == 0x6b /* k */) {
      let end = start + 2;
      if (this.at(end) == 0x3c /* < */) {
        const close = this.src.indexOf(">", end);
        if (close > 0) end = close + 1;
      }
      return this.fail(needsBacktracking("named backreference", this.src.substring(start, end), start));
    }
    readCharacterEscape(this.src, start + 1, false, this.escape);
    this.pos = this.escape.end;
    return Node.literal(this.escape.value);
  }

  parseClass(): Node | null {
    const start = this.pos;
    this.pos++;
    let negate = false;
    if (this.at(this.pos) == 0x5e /* ^ */) {
      negate = true;
      this.pos++;
    }
    const set = new CharSet();
    for (;;) {
      const c = this.at(this.pos);
      if (c < 0) return this.fail(invalid('missing "]" to close the character class opened', start));
      if (c == 0x5d /* ] */) {
        this.pos++;
        break;
      }
      const atomStart = this.pos;
      if (!this.parseClassAtom()) return null;
      const firstChar = this.atomChar;
      const firstSet = this.atomSet;
      if (this.at(this.pos) == DASH && this.at(this.pos + 1) >= 0 && this.at(this.pos + 1) != 0x5d) {
        this.pos++;
        if (!this.parseClassAtom()) return null;
        const lastSet = this.atomSet;
        if (firstSet !== null || lastSet !== null) {
          // Annex B: a range with a class escape at either end, like
          // [\d-z], is the union of both ends and a literal "-".
          addAtom(set, firstChar, firstSet);
          set.addRange(DASH, DASH);
          addAtom(set, this.atomChar, lastSet);
        } else if (firstChar > this.atomChar) {
          return this.fail(
            invalid('range out of order in character class "' + this.src.substring(atomStart, this.pos) + '"', atomStart),
          );
        } else {
          set.addRange(firstChar, this.atomChar);
        }
      } else {
        addAtom(set, firstChar, firstSet);
      }
    }
    set.normalize();
    return Node.chars(negate ? set.negated() : set);
  }

  /** One ClassAtom into atomChar/atomSet; false (with error set) on failure. */
  parseClassAtom(): bool {
    const c = this.at(this.pos);
    this.atomSet = null;
    if (c != BACKSLASH) {
      this.atomChar = c;
      this.pos++;
      return true;
    }
    const e = this.at(this.pos + 1);
    if (e < 0) {
      this.fail(incompleteEscape(this.pos));
      return false;
    }
    const set = classEscape(e);
    if (set !== null) {
      this.atomSet = set;
      this.pos += 2;
      return true;
    }
    readCharacterEscape(this.src, this.pos + 1, true, this.escape);
    this.pos = this.escape.end;
    this.atomChar = this.escape.value;
    return true;
  }
}

/** The decimal count in src[start, end), or MAX_REPEAT_COUNT + 1 for anything larger. */
function clampedCount(src: string, start: i32, end: i32): i64 {
  let n: i64 = 0;
  for (let i = start; i < end; i++) {
    n = n * 10 + <i64>(src.charCodeAt(i) - 0x30);
    if (n > <i64>MAX_REPEAT_COUNT) return <i64>MAX_REPEAT_COUNT + 1;
  }
  return n;
}

/** Compares two runs of decimal digits by value (leading zeros ignored): -1, 0 or 1. */
function compareDigits(src: string, aStart: i32, aEnd: i32, bStart: i32, bEnd: i32): i32 {
  while (aStart < aEnd - 1 && src.charCodeAt(aStart) == 0x30) aStart++;
  while (bStart < bEnd - 1 && src.charCodeAt(bStart) == 0x30) bStart++;
  const aLength = aEnd - aStart;
  const bLength = bEnd - bStart;
  if (aLength != bLength) return aLength > bLength ? 1 : -1;
  for (let k = 0; k < aLength; k++) {
    const a = src.charCodeAt(aStart + k);
    const b = src.charCodeAt(bStart + k);
    if (a != b) return a > b ? 1 : -1;
  }
  return 0;
}

function incompleteEscape(pos: i32): string {
  return invalid('incomplete escape "\\" (the pattern ends after the backslash)', pos);
}

function addAtom(set: CharSet, cu: i32, atomSet: CharSet | null): void {
  if (atomSet !== null) set.addSet(atomSet);
  else set.addRange(cu, cu);
}
