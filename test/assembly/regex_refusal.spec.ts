// Patterns the regex engine refuses at compile time, with the exact message a
// platform engineer sees in the configuration error. Two families:
// "unsupported regex construct" (valid JavaScript the engine will not run:
// it needs backtracking or exceeds a limit) and "invalid regex" (JavaScript
// rejects it too).
import { Regex, RegexSet } from "../../assembly/regex";
import { regex_check, regex_compile } from "../../assembly/embed/regex_exports";

class Refusal {
  constructor(public pattern: string, public error: string) {}
}

function refusal(pattern: string, error: string): Refusal {
  return new Refusal(pattern, error);
}

function checkRefusals(rows: Refusal[]): void {
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    const result = Regex.compile(r.pattern);
    expect(result.regex).toBeNull(r.pattern + " should be refused");
    expect(result.error).toBe(r.error, r.pattern);
  }
}

const NEEDS_BACKTRACKING: Refusal[] = [
  refusal("abc(?=d)", 'unsupported regex construct: lookahead "(?=" at position 3 (needs backtracking)'),
  refusal("(?!foo)bar", 'unsupported regex construct: negative lookahead "(?!" at position 0 (needs backtracking)'),
  refusal("a(?<=b)", 'unsupported regex construct: lookbehind "(?<=" at position 1 (needs backtracking)'),
  refusal("x|(?<!b)c", 'unsupported regex construct: negative lookbehind "(?<!" at position 2 (needs backtracking)'),
  refusal("(a)\\1", 'unsupported regex construct: backreference "\\1" at position 3 (needs backtracking)'),
  refusal("(a)(b)\\2", 'unsupported regex construct: backreference "\\2" at position 6 (needs backtracking)'),
  refusal("\\9", 'unsupported regex construct: backreference "\\9" at position 0 (needs backtracking)'),
  refusal("a\\12b", 'unsupported regex construct: backreference "\\12" at position 1 (needs backtracking)'),
  refusal("(?<x>a)\\k<x>", 'unsupported regex construct: named backreference "\\k<x>" at position 7 (needs backtracking)'),
  refusal("\\k", 'unsupported regex construct: named backreference "\\k" at position 0 (needs backtracking)'),
  refusal("((?=a))", 'unsupported regex construct: lookahead "(?=" at position 1 (needs backtracking)'),
];

const LIMITS: Refusal[] = [
  refusal("a{1001}", 'unsupported regex construct: repeat count above 1000 in quantifier "{1001}" at position 1'),
  refusal("a{2,5000}", 'unsupported regex construct: repeat count above 1000 in quantifier "{2,5000}" at position 1'),
  refusal("a{99999999999999}", 'unsupported regex construct: repeat count above 1000 in quantifier "{99999999999999}" at position 1'),
  // 2^32 and 2^32 + 1 once wrapped to {0} and {1}.
  refusal("/admin/x{4294967296}", 'unsupported regex construct: repeat count above 1000 in quantifier "{4294967296}" at position 8'),
  refusal("x{4294967297}", 'unsupported regex construct: repeat count above 1000 in quantifier "{4294967297}" at position 1'),
  refusal("x{0,4294967296}", 'unsupported regex construct: repeat count above 1000 in quantifier "{0,4294967296}" at position 1'),
  refusal("x{4294967296,}", 'unsupported regex construct: repeat count above 1000 in quantifier "{4294967296,}" at position 1'),
  refusal("x{2147483648}", 'unsupported regex construct: repeat count above 1000 in quantifier "{2147483648}" at position 1'),
  refusal(
    "(a{1000}){1000}",
    "unsupported regex construct: pattern too large: it compiles to about 1000000 automaton states, above the limit of 20000 (counted repetition such as {n,m} copies the repeated part n to m times)",
  ),
  refusal(
    "((a{100}){100}){100}",
    "unsupported regex construct: pattern too large: it compiles to about 1000000 automaton states, above the limit of 20000 (counted repetition such as {n,m} copies the repeated part n to m times)",
  ),
  refusal("(".repeat(201) + ")".repeat(201), "unsupported regex construct: groups nested deeper than 200 at position 200"),
];

const INVALID: Refusal[] = [
  refusal("(a", 'invalid regex: missing ")" to close the group opened at position 0'),
  refusal("a(b(c)", 'invalid regex: missing ")" to close the group opened at position 1'),
  refusal("a)", 'invalid regex: unmatched ")" at position 1'),
  refusal("(a))", 'invalid regex: unmatched ")" at position 3'),
  refusal(")", 'invalid regex: unmatched ")" at position 0'),
  refusal("*a", 'invalid regex: nothing to repeat before quantifier "*" at position 0'),
  refusal("a**", 'invalid regex: nothing to repeat before quantifier "*" at position 2'),
  refusal("a+*", 'invalid regex: nothing to repeat before quantifier "*" at position 2'),
  refusal("a*??", 'invalid regex: nothing to repeat before quantifier "?" at position 3'),
  refusal("a|+", 'invalid regex: nothing to repeat before quantifier "+" at position 2'),
  refusal("(?)", 'invalid regex: invalid group "(?)" at position 0'),
  refusal("(*)", 'invalid regex: nothing to repeat before quantifier "*" at position 1'),
  refusal("{2}", 'invalid regex: nothing to repeat before quantifier "{2}" at position 0'),
  refusal("a{2}{3}", 'invalid regex: nothing to repeat before quantifier "{3}" at position 4'),
  refusal("^*", 'invalid regex: nothing to repeat before quantifier "*" at position 1'),
  refusal("a$+", 'invalid regex: nothing to repeat before quantifier "+" at position 2'),
  refusal("\\b?", 'invalid regex: nothing to repeat before quantifier "?" at position 2'),
  refusal("\\B{1,2}", 'invalid regex: nothing to repeat before quantifier "{1,2}" at position 2'),
  refusal("a{3,1}", 'invalid regex: numbers out of order in quantifier "{3,1}" at position 1'),
  refusal("a{100000000001,100000000000}", 'invalid regex: numbers out of order in quantifier "{100000000001,100000000000}" at position 1'),
  refusal("a{4294967297,4294967296}", 'invalid regex: numbers out of order in quantifier "{4294967297,4294967296}" at position 1'),
  refusal("[z-a]", 'invalid regex: range out of order in character class "z-a" at position 1'),
  refusal("x[b-a0]", 'invalid regex: range out of order in character class "b-a" at position 2'),
  refusal("[\\x42-\\x41]", 'invalid regex: range out of order in character class "\\x42-\\x41" at position 1'),
  refusal("[abc", 'invalid regex: missing "]" to close the character class opened at position 0'),
  refusal("[", 'invalid regex: missing "]" to close the character class opened at position 0'),
  refusal("a\\", 'invalid regex: incomplete escape "\\" (the pattern ends after the backslash) at position 1'),
  refusal("[a\\", 'invalid regex: incomplete escape "\\" (the pattern ends after the backslash) at position 2'),
  refusal("(?i:a)", 'invalid regex: invalid group "(?i" at position 0'),
  refusal("(?<1a>x)", 'invalid regex: invalid capture group name in "(?<1" at position 0'),
  refusal("(?<a", 'invalid regex: invalid capture group name in "(?<a" at position 0'),
];

describe("Regex.compile refusals", () => {
  it("constructs that need backtracking", () => { checkRefusals(NEEDS_BACKTRACKING); });
  it("limits", () => { checkRefusals(LIMITS); });
  it("invalid syntax", () => { checkRefusals(INVALID); });
  it("accepts what is at the limits", () => {
    expect(Regex.compile("a{1000}").error).toBe("");
    expect(Regex.compile("(a{100}){100}").error).toBe("");
    expect(Regex.compile("(".repeat(200) + ")".repeat(200)).error).toBe("");
  });
});

describe("RegexSet.compile refusals", () => {
  it("names the index of the first refused pattern", () => {
    const result = RegexSet.compile(["a+", "b(?=c)", "(d"]);
    expect(result.set).toBeNull();
    expect(result.failedIndex).toBe(1);
    expect(result.error).toBe('pattern 1: unsupported regex construct: lookahead "(?=" at position 1 (needs backtracking)');
  });

  it("refuses a set whose patterns together are too large", () => {
    const patterns = new Array<string>();
    // 19 000 states each, under the per-pattern limit; the 11th passes 200 000.
    for (let i = 0; i < 20; i++) patterns.push("(?:[a-z]{1000}){19}");
    const result = RegexSet.compile(patterns);
    expect(result.set).toBeNull();
    expect(result.failedIndex).toBe(10);
    expect(result.error).toBe(
      "pattern 10: unsupported regex construct: pattern too large: it compiles to about 209022 automaton states, above the limit of 200000 (counted repetition such as {n,m} copies the repeated part n to m times) for the whole set",
    );
  });
});

describe("regex_check and regex_compile exports", () => {
  it("report refusals as values", () => {
    expect(regex_check("a+")).toBe("");
    expect(regex_check("(?=x)")).toBe('unsupported regex construct: lookahead "(?=" at position 0 (needs backtracking)');
    expect(regex_compile("(?=x)")).toBe(0);
    expect(regex_compile("x")).toBeGreaterThan(0);
  });
});
