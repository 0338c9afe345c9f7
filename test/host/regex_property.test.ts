// Property test of the regex engine (assembly/regex) against JavaScript's
// own RegExp, which is the reference for the syntax the engine accepts:
//   regex_full_match(p, s) == /^(?:p)$/.test(s)
//   regex_search(p, s)     == /p/.test(s)
// on patterns drawn from a grammar of the supported constructs and inputs
// over a small alphabet (so that matches are frequent). A second property
// checks that every construct needing backtracking is refused.
//
// Needs the debug module: node build/build.mjs --wasm-only
// (FILTER_WASM=<path> tests another build of the module.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { instantiateSync } from "@assemblyscript/loader";
import { withUnimplementedImports } from "../../host/wasm/filter_module.ts";
import fc from "fast-check";
import { withPinnedString } from "../support/pinned_string.ts";

interface RegexExports extends Record<string, unknown> {
  regex_check(pattern: number): number;
  regex_compile(pattern: number): number;
  regex_full_match(handle: number, input: number): number;
  regex_search(handle: number, input: number): number;
  regex_release(handle: number): void;
  _initialize?: () => void;
}

const wasmPath = process.env.FILTER_WASM ?? join(import.meta.dirname ?? ".", "..", "..", "build", "filter.debug.wasm");
const wasmBytes = readFileSync(wasmPath);
const instance = instantiateSync<RegexExports>(wasmBytes, withUnimplementedImports(wasmBytes, { env: { proxy_log: () => 0 } }));
const wasm = instance.exports;
wasm._initialize?.();

function check(pattern: string): string {
  return wasm.__getString(withPinnedString(wasm, pattern, (p) => wasm.regex_check(p)));
}

/** Runs `fn` with a compiled handle, releasing it afterwards. */
function withRegex<T>(pattern: string, fn: (handle: number) => T): T {
  const handle = withPinnedString(wasm, pattern, (p) => wasm.regex_compile(p));
  assert.ok(handle > 0, `refused ${JSON.stringify(pattern)}: ${check(pattern)}`);
  try {
    return fn(handle);
  } finally {
    wasm.regex_release(handle);
  }
}

function fullMatch(handle: number, input: string): boolean {
  return withPinnedString(wasm, input, (p) => wasm.regex_full_match(handle, p)) !== 0;
}

function search(handle: number, input: string): boolean {
  return withPinnedString(wasm, input, (p) => wasm.regex_search(handle, p)) !== 0;
}

// Inputs: a few letters, a digit, a space, "-", a line terminator and a
// non-ASCII letter, so that classes, \w/\s/\d, "." and \b all get exercised.
const ALPHABET = ["a", "b", "c", "1", " ", "-", "\n", "é"];
const input = fc.array(fc.constantFrom(...ALPHABET), { maxLength: 12 }).map((cs) => cs.join(""));

const literal = fc.constantFrom("a", "b", "c", "1", " ", "-", "é", "]", "}");
const escapeAtom = fc.constantFrom("\\d", "\\D", "\\w", "\\W", "\\s", "\\S", "\\-", "\\.", "\\n", "\\x61", "\\u0062", "\\t");
const classAtom = fc.constantFrom("a", "b", "c", "1", " ", "\\d", "\\w", "\\s", "\\n", "é", "\\-", "\\]");
const classItem = fc.oneof(classAtom, fc.constantFrom("a-c", "0-9", "b-b", " -a", "\\d-z", "a-\\w"));
const charClass = fc
  .tuple(fc.boolean(), fc.array(classItem, { minLength: 0, maxLength: 3 }))
  .map(([negate, items]) => "[" + (negate ? "^" : "") + items.join("") + "]");
const quantifier = fc
  .tuple(fc.constantFrom("", "", "*", "+", "?", "{2}", "{0,2}", "{1,}", "{1,3}", "{0}"), fc.boolean())
  .map(([q, lazy]) => (q !== "" && lazy ? q + "?" : q));
const assertion = fc.constantFrom("^", "$", "\\b", "\\B");

const { pattern } = fc.letrec<{ pattern: string; alternative: string; term: string; atom: string }>((tie) => ({
  pattern: fc.array(tie("alternative"), { minLength: 1, maxLength: 3 }).map((alts) => alts.join("|")),
  alternative: fc.array(tie("term"), { minLength: 0, maxLength: 4 }).map((terms) => terms.join("")),
  term: fc.oneof({ weight: 5, arbitrary: fc.tuple(tie("atom"), quantifier).map(([a, q]) => a + q) }, { weight: 1, arbitrary: assertion }),
  atom: fc.oneof(
    { weight: 4, arbitrary: literal },
    { weight: 2, arbitrary: escapeAtom },
    { weight: 1, arbitrary: fc.constant(".") },
    { weight: 2, arbitrary: charClass },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom("(", "(?:", "(?<g>"), fc.oneof({ depthSize: "small" }, literal, tie("pattern")))
        .map(([open, inner]) => open + inner + ")"),
    },
  ),
}));

test("full match and search agree with JavaScript RegExp", () => {
  fc.assert(
    fc.property(pattern, fc.array(input, { minLength: 1, maxLength: 6 }), (p, inputs) => {
      // Named groups may repeat a name across the generated pattern, which JavaScript rejects.
      const jsPattern = p.split("(?<g>").join("(?:");
      const anchored = new RegExp("^(?:" + jsPattern + ")$");
      const unanchored = new RegExp(jsPattern);
      withRegex(p, (handle) => {
        for (const s of inputs) {
          assert.equal(fullMatch(handle, s), anchored.test(s), `full match of ${JSON.stringify(p)} on ${JSON.stringify(s)}`);
          assert.equal(search(handle, s), unanchored.test(s), `search of ${JSON.stringify(p)} on ${JSON.stringify(s)}`);
        }
      });
    }),
    { numRuns: 300 },
  );
});

test("pathological patterns answer on long inputs", () => {
  const long = "a".repeat(30000);
  const rows: Array<[string, string, boolean]> = [
    ["(a+)+$", long + "!", false],
    ["(a|a)*b", long, false],
    ["(a*)*c", long, false],
    ["(x+x+)+y", "x".repeat(30000), false],
    ["(a|aa)+", long, true],
    ["(.*a){20}", long, true],
  ];
  for (const [p, s, expected] of rows) {
    withRegex(p, (handle) => {
      assert.equal(fullMatch(handle, s), expected, `full match of ${p}`);
    });
  }
});

// Constructs that need backtracking, each placed inside otherwise valid text.
const refused = fc.constantFrom(
  ["(?=a)", "lookahead"],
  ["(?!a)", "negative lookahead"],
  ["(?<=a)", "lookbehind"],
  ["(?<!a)", "negative lookbehind"],
  ["(a)\\1", "backreference"],
  ["(?<n>a)\\k<n>", "named backreference"],
);

test("constructs that need backtracking are refused with their name and position", () => {
  fc.assert(
    fc.property(fc.stringMatching(/^[a-c]{0,5}$/), refused, fc.stringMatching(/^[a-c]{0,5}$/), (prefix, [construct, name], suffix) => {
      const p = prefix + construct + suffix;
      const error = check(p);
      assert.match(error, new RegExp("^unsupported regex construct: " + name + " "), p);
      assert.match(error, /at position \d+ \(needs backtracking\)$/, p);
      assert.equal(
        withPinnedString(wasm, p, (ptr) => wasm.regex_compile(ptr)),
        0,
        p,
      );
      assert.doesNotThrow(() => new RegExp(p), "the construct is valid JavaScript");
    }),
    { numRuns: 100 },
  );
});

test("invalid patterns are refused like JavaScript refuses them", () => {
  for (const p of ["(a", "a)", "*a", "a**", "a{2,1}", "[z-a]", "a\\", "[a", "(?x)", "{1}", "^*", "a|+"]) {
    assert.throws(() => new RegExp(p), SyntaxError, p);
    assert.match(check(p), /^invalid regex: .* at position \d+/, p);
  }
});

test("released handles no longer match", () => {
  const handle = withPinnedString(wasm, "a", (p) => wasm.regex_compile(p));
  assert.ok(handle > 0);
  assert.equal(fullMatch(handle, "a"), true);
  wasm.regex_release(handle);
  assert.equal(fullMatch(handle, "a"), false);
  wasm.regex_release(handle); // a second release is ignored
  assert.equal(search(12345, "a"), false);
});
