// RegexSet (many patterns, one pass), pathological patterns that make
// backtracking engines take exponential time, and the DFA cache flush.
import { Regex, RegexSet } from "../../assembly/regex";

function compiledSet(patterns: string[]): RegexSet {
  const result = RegexSet.compile(patterns);
  expect(result.error).toBe("");
  expect(result.failedIndex).toBe(-1);
  return result.set!;
}

function matches(set: RegexSet, input: string): string {
  const out = new Array<i32>();
  set.matchAll(input, out);
  return out.join(",");
}

const ROUTES: string[] = [
  "/api/.*", // 0
  "/api/v1/.*", // 1
  ".*\\.json", // 2
  "/health", // 3
  "/api/v[0-9]+/users/[0-9]+", // 4
  "(?:/[^/]+)*", // 5
  ".*\\bbeta\\b.*", // 6
  "", // 7
];

function matchesAscii(set: RegexSet, input: string): string {
  const bytes = String.UTF8.encode(input);
  const out = new Array<i32>();
  out.push(99); // cleared by the call
  if (!set.matchAllAscii(changetype<usize>(bytes), <usize>bytes.byteLength, out)) return "not ascii:" + out.join(",");
  return out.join(",");
}

describe("RegexSet.matchAllAscii", () => {
  it("matches ASCII bytes in place exactly as matchAll matches their string", () => {
    const set = compiledSet(ROUTES);
    const inputs = ["/api/v1/users/42", "/api/v2/users/7", "/api/v1/items.json", "/health", "/healthz", "/x/beta/y", "/x/betamax", "", "//", "/a?b=c"];
    for (let i = 0; i < inputs.length; i++) expect(matchesAscii(set, inputs[i])).toBe(matches(set, inputs[i]), inputs[i]);
  });

  it("refuses bytes past 0x7f the automaton reaches, out cleared (the caller matches the decoded string)", () => {
    const set = compiledSet(ROUTES);
    expect(matchesAscii(set, "/api/caf\u00e9")).toBe("not ascii:");
    expect(matches(set, "/api/caf\u00e9")).toBe("0,5");
  });
});

describe("RegexSet.matchAll", () => {
  it("reports every fully matching pattern, ascending", () => {
    const set = compiledSet(ROUTES);
    expect(set.count()).toBe(8);
    expect(matches(set, "/api/v1/users/42")).toBe("0,1,4,5");
    expect(matches(set, "/api/v2/users/7")).toBe("0,4,5");
    expect(matches(set, "/api/v1/items.json")).toBe("0,1,2,5");
    expect(matches(set, "/health")).toBe("3,5");
    expect(matches(set, "/healthz")).toBe("5");
    expect(matches(set, "/x/beta/y")).toBe("5,6");
    expect(matches(set, "/x/betamax")).toBe("5");
    expect(matches(set, "")).toBe("5,7");
    expect(matches(set, "no-slash")).toBe("");
  });

  it("clears the output first", () => {
    const set = compiledSet(["a", "b"]);
    const out: i32[] = [7, 8, 9];
    set.matchAll("b", out);
    expect(out.join(",")).toBe("1");
    set.matchAll("c", out);
    expect(out.length).toBe(0);
  });

  it("agrees with each pattern compiled alone", () => {
    const patterns: string[] = ["a+", "a*b", "^ab$", "(a|b)*c?", "\\w\\b.*", "[^a]*", "a{2,3}", "(?:ab|a)(?:bc|c)"];
    const inputs: string[] = ["", "a", "aa", "aaa", "aaaa", "ab", "abc", "b", "bc", "ba", "c", "a b", "abab"];
    const set = compiledSet(patterns);
    const out = new Array<i32>();
    for (let i = 0; i < inputs.length; i++) {
      const input = inputs[i];
      set.matchAll(input, out);
      for (let p = 0; p < patterns.length; p++) {
        const alone = Regex.compile(patterns[p]).regex!.fullMatch(input);
        expect(out.includes(p)).toBe(alone, patterns[p] + " on " + input);
      }
    }
  });

  it("handles an empty set", () => {
    const set = compiledSet([]);
    expect(set.count()).toBe(0);
    expect(matches(set, "")).toBe("");
    expect(matches(set, "abc")).toBe("");
  });

  it("scales to many patterns in one pass", () => {
    const patterns = new Array<string>();
    for (let i = 0; i < 300; i++) patterns.push("/svc" + i.toString() + "/[a-z]+");
    const set = compiledSet(patterns);
    expect(matches(set, "/svc123/items")).toBe("123");
    expect(matches(set, "/svc299/x")).toBe("299");
    expect(matches(set, "/svc300/x")).toBe("");
  });
});

class Pathological {
  constructor(public pattern: string, public input: string, public full: bool, public found: bool) {}
}

// Each takes exponential or polynomial time in a backtracking engine.
function pathological(): Pathological[] {
  const a = "a".repeat(30000);
  const x = "x".repeat(30000);
  return [
    new Pathological("(a+)+$", a + "!", false, false),
    new Pathological("(a+)+$", a, true, true),
    new Pathological("(a|a)*b", a, false, false),
    new Pathological("(a|aa)*b", a, false, false),
    new Pathological("(a*)*c", a, false, false),
    new Pathological("(x+x+)+y", x, false, false),
    new Pathological("(a?){500}a{500}", "a".repeat(500), true, true),
    new Pathological("(\\w+\\s?)*$", "word ".repeat(6000) + "!", false, true),
    new Pathological("(.*a){20}", a, true, true),
    new Pathological("^(([a-z])+.)+[A-Z]([a-z])+$", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!", false, false),
  ];
}

describe("pathological patterns", () => {
  it("answer on 30 000-character inputs", () => {
    const rows = pathological();
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      const regex = Regex.compile(r.pattern).regex!;
      expect(regex.fullMatch(r.input)).toBe(r.full, "full match of " + r.pattern);
      expect(regex.search(r.input)).toBe(r.found, "search of " + r.pattern);
    }
  });
});

// Deterministic a/b text (a linear congruential generator), so the DFA
// meets a new state at almost every position.
function abText(length: i32): string {
  const units = new Array<string>(length);
  let seed: u32 = 12345;
  for (let i = 0; i < length; i++) {
    seed = seed * 1103515245 + 12345;
    units[i] = (seed >> 16) & 1 ? "a" : "b";
  }
  return units.join("");
}

describe("DFA cache", () => {
  it("flushes when full and still answers correctly", () => {
    // "an a 20 code units from the end": 2^21 possible DFA states.
    const regex = Regex.compile("[ab]*a[ab]{20}").regex!;
    const text = abText(30000);
    const expected = text.charAt(text.length - 21) == "a";
    expect(regex.fullMatch(text)).toBe(expected);
    expect(regex.fullMatch(text + "a".repeat(21))).toBe(true);
    expect(regex.fullMatch(text + "b".repeat(21))).toBe(false);
    expect(regex.cacheFlushes).toBeGreaterThan(0);
  });

  it("keeps search correct across flushes", () => {
    const regex = Regex.compile("a[ab]{20}b{30}").regex!;
    const text = abText(30000);
    expect(regex.search(text)).toBe(false);
    // "c" ends every thread started inside the text.
    expect(regex.search(text + "ca" + "b".repeat(50))).toBe(true);
    expect(regex.search(text + "ca" + "b".repeat(49))).toBe(false);
    expect(regex.cacheFlushes).toBeGreaterThan(0);
  });
});
