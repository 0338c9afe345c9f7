// Regex engine syntax and matching, both ways: every row lists inputs that
// must match and inputs that must not. Expected answers are what JavaScript
// gives for /^(?:pattern)$/.test(input) (full match) and
// /pattern/.test(input) (search), without flags; test/host/regex_property.test.ts
// checks the same agreement on generated patterns.
import { Regex } from "../../assembly/regex";

class Row {
  constructor(public pattern: string, public matching: string[], public failing: string[]) {}
}

function row(pattern: string, matching: string[], failing: string[]): Row {
  return new Row(pattern, matching, failing);
}

function compiled(pattern: string): Regex {
  const result = Regex.compile(pattern);
  expect(result.error).toBe("", "compile " + pattern);
  return result.regex!;
}

function checkFull(rows: Row[]): void {
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    const regex = compiled(r.pattern);
    for (let j = 0; j < r.matching.length; j++) {
      expect(regex.fullMatch(r.matching[j])).toBe(true, r.pattern + " should fully match " + JSON_quote(r.matching[j]));
    }
    for (let j = 0; j < r.failing.length; j++) {
      expect(regex.fullMatch(r.failing[j])).toBe(false, r.pattern + " should not fully match " + JSON_quote(r.failing[j]));
    }
  }
}

function checkSearch(rows: Row[]): void {
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    const regex = compiled(r.pattern);
    for (let j = 0; j < r.matching.length; j++) {
      expect(regex.search(r.matching[j])).toBe(true, r.pattern + " should be found in " + JSON_quote(r.matching[j]));
    }
    for (let j = 0; j < r.failing.length; j++) {
      expect(regex.search(r.failing[j])).toBe(false, r.pattern + " should not be found in " + JSON_quote(r.failing[j]));
    }
  }
}

function JSON_quote(s: string): string {
  return '"' + s + '"';
}

const LITERALS: Row[] = [
  row("", [""], ["a", " "]),
  row("abc", ["abc"], ["", "ab", "abcd", "abd", "ABC"]),
  row("/api/v1/users", ["/api/v1/users"], ["/api/v1/users/", "/api/v1/user"]),
  row("]}", ["]}"], ["]", "}"]),
  row("a,b:c=d", ["a,b:c=d"], ["a,b:c"]),
  row("héllo", ["héllo"], ["hello"]),
  row("日本", ["日本"], ["日", "本日"]),
  row("😀", ["😀"], ["\uD83D", "\uDE00"]),
];

const ESCAPES: Row[] = [
  row("\\d", ["0", "5", "9"], ["a", "", "٣", "10"]),
  row("\\D", ["a", " ", "é"], ["0", "9"]),
  row("\\w", ["a", "Z", "0", "_"], ["-", " ", "é", ""]),
  row("\\W", ["-", " ", "é"], ["a", "_", "5"]),
  row("\\s", [" ", "\t", "\n", "\r", "\v", "\f", "\u00a0", "\u2028", "\u3000", "\ufeff"], ["a", "", "\u200b"]),
  row("\\S", ["a", "\u200b"], [" ", "\t", "\u00a0"]),
  row("\\t\\n\\r\\f\\v", ["\t\n\r\f\v"], ["tnrfv"]),
  row("a\\0b", ["a\u0000b"], ["a0b"]),
  row("\\x41\\x7e", ["A~"], ["x41x7e"]),
  row("\\xZ1", ["xZ1"], ["Z1"]), // Annex B: \x without two hex digits is "x"
  row("\\u00e9\\u2603", ["é☃"], ["u00e9u2603"]),
  row("\\u12", ["u12"], []), // Annex B: incomplete \u is "u"
  row("\\u{2}", ["uu"], ["u{2}"]), // no u flag: \u{2} is "u" twice
  row("\\cA\\cz", ["\u0001\u001a"], ["cAcz"]),
  row("\\c1", ["\\c1"], ["\u0011"]), // Annex B: \c without a letter is a backslash
  row("\\.\\/\\\\\\[\\]\\(\\)\\{\\}\\*\\+\\?\\|\\^\\$\\-", ["./\\[](){}*+?|^$-"], ["x"]),
  row("\\a\\e\\z\\p", ["aezp"], []), // identity escapes without the u flag
  row("\\01\\08", ["\u0001\u00008"], ["\u0001\u0008"]), // Annex B: \0 followed by a digit is a legacy octal escape
];

const CLASSES: Row[] = [
  row("[abc]", ["a", "b", "c"], ["d", "", "ab"]),
  row("[^abc]", ["d", "é", "\n"], ["a", "c", ""]),
  row("[a-z0-9_]+", ["abc_09", "z"], ["A", "a-b", ""]),
  row("[\\d-z]", ["5", "-", "z"], ["a", "y"]), // Annex B: class escape in a range is a union
  row("[a-\\d]", ["a", "-", "7"], ["b"]),
  row("[\\w.-]+", ["a.b-c_1"], ["a b", "é"]),
  row("[-a]", ["-", "a"], ["b"]),
  row("[a-]", ["-", "a"], ["b"]),
  row("[a-c-e]", ["a", "b", "c", "-", "e"], ["d"]),
  row("[\\b]", ["\u0008"], ["b", "\\"]),
  row("[\\B]", ["B"], ["\\"]),
  row("[\\]]", ["]"], ["\\"]),
  row("[]]", [], ["", "]", "]]"]), // [] matches nothing, then "]"
  row("[]", [], ["", "a", "]"]),
  row("[^]", ["a", "\n", "\u2028"], ["", "ab"]),
  row("[.]", ["."], ["a"]),
  row("[\\^]", ["^"], ["a"]),
  row("[\\s\\S]", ["a", "\n"], [""]),
  row("[^\\d]", ["a"], ["1"]),
  row("[\\x41-\\x43]", ["A", "B", "C"], ["D"]),
  row("[\\u00e0-\\u00ff]", ["é", "ÿ"], ["e", "Ā"]),
  row("[\\cJ]", ["\n"], ["c", "J"]),
  row("[\\c_]", ["\u001f"], ["_"]),
  row("[\\c]", ["\\", "c"], ["\u0003"]),
  row("[\\1]", ["\u0001"], ["1"]), // legacy octal inside a class
  row("[(){}*+?|$]+", ["(){}*+?|$"], ["a"]),
  row("[\uD83D\uDE00]", ["\uD83D", "\uDE00"], ["😀"]), // no u flag: code units
];

const DOT: Row[] = [
  row(".", ["a", " ", "é", "\u0000", "\uD83D"], ["\n", "\r", "\u2028", "\u2029", "", "ab"]),
  row("a.c", ["abc", "a.c", "a-c"], ["ac", "a\nc"]),
  row("..", ["😀"], ["a"]),
];

const ANCHORS: Row[] = [
  row("^abc$", ["abc"], ["", "abcd", "xabc"]),
  row("^", [""], ["a"]),
  row("$", [""], ["a"]),
  row("^$", [""], ["a"]),
  row("$^", [""], ["a"]),
  row("a^b", [], ["ab", "a^b"]),
  row("a$b", [], ["ab", "a$b"]),
  row("a|^b", ["a", "b"], ["ab"]),
  row("(^a|b)+", ["a", "ab", "abb", "b"], ["ba", "aa"]),
  row("a$|b", ["a", "b"], ["ab"]),
  row("(a$)*", ["", "a"], ["aa"]),
];

const WORD_BOUNDARIES: Row[] = [
  row("\\bfoo\\b", ["foo"], ["foox"]),
  row(".*\\bfoo\\b.*", ["a foo b", "foo-bar", "(foo)"], ["afoo", "foob", "foo_"]),
  row("\\B", [""], ["a"]), // between two non-word "characters" (start and end)
  row("\\b", [], ["", "a"]),
  row("a\\b", ["a"], ["ab"]),
  row("a\\Bb", ["ab"], ["a b"]),
  row("\\Ba", [], ["a"]),
  row(" \\B", [" "], ["a"]),
  row("é\\b", [], ["é"]), // é is not a word character: no boundary between start and it
  row("a\\bé", ["aé"], []),
  row("(\\ba|b\\b)+", ["a", "ab", "b"], ["aab", "ba"]),
];

const GROUPS_AND_ALTERNATION: Row[] = [
  row("a|b|c", ["a", "b", "c"], ["", "ab", "d"]),
  row("ab|cd", ["ab", "cd"], ["ad", "abcd"]),
  row("a(b|c)d", ["abd", "acd"], ["ad", "abcd"]),
  row("(?:ab)+", ["ab", "abab"], ["", "aba"]),
  row("(?<year>\\d{4})-(?<month>\\d{2})", ["2024-01"], ["24-01"]),
  row("((a|b)(c|d))+", ["ac", "bdad"], ["ab", "acb"]),
  row("a||b", ["a", "", "b"], ["ab"]),
  row("|", [""], ["a"]),
  row("()", [""], ["a"]),
  row("(|a)+", ["", "a", "aaa"], ["b"]),
  row("((((((((((a))))))))))", ["a"], ["aa"]),
  row("(a|ab)(c|bcd)(d*)", ["abcd", "acd", "abc"], ["ab"]),
];

const QUANTIFIERS: Row[] = [
  row("a*", ["", "a", "aaaa"], ["b", "ab"]),
  row("a+", ["a", "aaaa"], ["", "b"]),
  row("a?", ["", "a"], ["aa"]),
  row("a{3}", ["aaa"], ["aa", "aaaa"]),
  row("a{2,}", ["aa", "aaaaaa"], ["a", ""]),
  row("a{2,4}", ["aa", "aaa", "aaaa"], ["a", "aaaaa"]),
  row("a{0}", [""], ["a"]),
  row("a{0,0}", [""], ["a"]),
  row("a{0,1}b", ["b", "ab"], ["aab"]),
  row("a*?", ["", "aaa"], ["b"]),
  row("a+?b", ["ab", "aaab"], ["b"]),
  row("a??", ["", "a"], ["aa"]),
  row("a{2}?", ["aa"], ["a", "aaa"]),
  row("a{2,}?", ["aa", "aaa"], ["a"]),
  row("a{1,3}?b", ["ab", "aaab"], ["aaaab"]),
  row("(ab){2}", ["abab"], ["ab", "ababab"]),
  row("(a|bc){1,2}d", ["ad", "bcd", "abcd", "bcad"], ["d", "aaad"]),
  row("(a*)*", ["", "aaa"], ["b"]),
  row("(a*)+b", ["b", "aab"], ["aa"]),
  row("(a?){3}", ["", "a", "aaa"], ["aaaa"]),
  row("x{1000}", ["x".repeat(1000)], ["x".repeat(999), "x".repeat(1001)]),
  row("(?:){1000}", [""], ["a"]),
  row("[ab]{2,3}c", ["abc", "bbac"], ["ac", "ababc"]),
  row(".*", ["", "anything at all"], ["line\nbreak"]),
  row("\\d+(\\.\\d+)?", ["1", "3.14"], ["3.", ".5"]),
];

// Annex B.1.2: a "{" that does not start a quantifier is a literal.
const LITERAL_BRACES: Row[] = [
  row("a{", ["a{"], ["a"]),
  row("{", ["{"], [""]),
  row("{foo}", ["{foo}"], ["foo"]),
  row("a{,5}", ["a{,5}"], ["a", "aaaaa"]),
  row("a{1", ["a{1"], ["a"]),
  row("a{1,", ["a{1,"], ["a"]),
  row("a{x}", ["a{x}"], []),
  row("a{1,2", ["a{1,2"], ["a", "aa"]),
  row("x{}", ["x{}"], []),
  row("{+", ["{", "{{{"], [""]), // the literal "{" can itself be repeated
  row("/users/{id}", ["/users/{id}"], ["/users/1"]),
];

const INPUT_EDGES: Row[] = [
  row("a*b", [], [""]),
  row("\\S+", ["x".repeat(100000)], ["x".repeat(100000) + " "]),
  row("[^/]+/[^/]+", ["日本語/テキスト"], ["日本語"]),
  row("\\u00e9+", ["éé"], ["e\u0301"]),
];

describe("Regex.fullMatch", () => {
  it("literals", () => { checkFull(LITERALS); });
  it("escapes", () => { checkFull(ESCAPES); });
  it("character classes", () => { checkFull(CLASSES); });
  it("dot", () => { checkFull(DOT); });
  it("anchors", () => { checkFull(ANCHORS); });
  it("word boundaries", () => { checkFull(WORD_BOUNDARIES); });
  it("groups and alternation", () => { checkFull(GROUPS_AND_ALTERNATION); });
  it("quantifiers", () => { checkFull(QUANTIFIERS); });
  it("Annex B literal braces", () => { checkFull(LITERAL_BRACES); });
  it("empty, long and non-ASCII input", () => { checkFull(INPUT_EDGES); });
});

const SEARCH: Row[] = [
  row("", ["", "abc"], []),
  row("b", ["abc", "b"], ["", "ac"]),
  row("^ab", ["abc"], ["cab"]),
  row("bc$", ["abc"], ["bca"]),
  row("^$", [""], ["a"]),
  row("a|^b", ["xa", "bx"], ["xb"]),
  row("\\bfoo\\b", ["a foo b", "foo", "x-foo"], ["food", "afoo"]),
  row("\\Boo", ["foo"], ["oo", " oo"]),
  row("a.c", ["xxabcxx"], ["a\nc"]),
  row("x{3}", ["axxxb"], ["axxb"]),
  row("[0-9]{3}-[0-9]{4}", ["call 555-1234 now"], ["555-123"]),
  row("/v[12]/", ["/api/v2/users"], ["/api/v3/users"]),
  row("é", ["café"], ["cafe"]),
  row("a$", ["ba"], ["ab", "a\n"]),
  row("end$", ["x".repeat(50000) + "end"], ["x".repeat(50000) + "end."]),
];

describe("Regex.search", () => {
  it("finds a match anywhere", () => { checkSearch(SEARCH); });
});
