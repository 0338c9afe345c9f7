// Property tests of the two configuration parsers that live in the module:
// the regex parser (assembly/regex) and the URI-template parser
// (assembly/template). They check that numbers are never wrapped (a repeat
// count above the engine's limit is refused, whatever its size) and that no
// input, however odd, traps the module or yields an error without a position.
//
// Needs the debug module: node build/build.mjs --wasm-only
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { instantiateSync } from "@assemblyscript/loader";
import { withUnimplementedImports } from "../../host/wasm/filter_module.ts";
import fc from "fast-check";
import { withPinnedString } from "../support/pinned_string.ts";

interface ParserExports extends Record<string, unknown> {
  regex_check(pattern: number): number;
  regex_compile(pattern: number): number;
  regex_full_match(handle: number, input: number): number;
  regex_release(handle: number): void;
  template_check(text: number): number;
  _initialize?: () => void;
}

const wasmPath = process.env.FILTER_WASM ?? join(import.meta.dirname ?? ".", "..", "..", "build", "filter.debug.wasm");
const wasmBytes = readFileSync(wasmPath);
const wasm = instantiateSync<ParserExports>(wasmBytes, withUnimplementedImports(wasmBytes, { env: { proxy_log: () => 0 } })).exports;
wasm._initialize?.();

const regexCheck = (p: string): string => wasm.__getString(withPinnedString(wasm, p, (ptr) => wasm.regex_check(ptr)));
const templateCheck = (t: string): string => wasm.__getString(withPinnedString(wasm, t, (ptr) => wasm.template_check(ptr)));

/** The engine's limit on `{n}`, `{n,}`, `{n,m}` (assembly/regex/parse.ts MAX_REPEAT_COUNT). */
const MAX_REPEAT = 1000;

// Counts: mostly around the limit and around the 32- and 64-bit boundaries, where wrapping would show.
const boundaries = [
  0n,
  1n,
  999n,
  1000n,
  1001n,
  2n ** 31n - 1n,
  2n ** 31n,
  2n ** 32n - 1n,
  2n ** 32n,
  2n ** 32n + 1n,
  2n ** 32n + 1000n,
  2n ** 63n,
  2n ** 64n,
  2n ** 64n + 1n,
];
const count = fc.oneof(
  fc.constantFrom(...boundaries),
  fc.constantFrom(...boundaries).chain((b) => fc.bigInt({ min: b > 3n ? b - 3n : 0n, max: b + 3n })),
  fc.bigInt({ min: 0n, max: 1200n }),
  fc.bigInt({ min: 0n, max: 10n ** 40n }),
);
const digits = (n: bigint, zeros: number) => "0".repeat(zeros) + n.toString();

test("a repeat count is accepted only up to the limit, never wrapped, whatever its size", () => {
  fc.assert(
    fc.property(count, fc.option(fc.option(count, { nil: undefined }), { nil: null }), fc.nat(3), (min, maxOpt, zeros) => {
      // maxOpt: null = `{n}`, undefined = `{n,}`, a number = `{n,m}`.
      const brace =
        maxOpt === null ? `{${digits(min, zeros)}}` : maxOpt === undefined ? `{${digits(min, zeros)},}` : `{${digits(min, zeros)},${digits(maxOpt, 0)}}`;
      const pattern = `/admin/x${brace}`;
      const error = regexCheck(pattern);
      const max = maxOpt === null ? min : maxOpt;
      if (max !== undefined && min > max) {
        assert.equal(error, `invalid regex: numbers out of order in quantifier "${brace}" at position 8`);
      } else if (min > BigInt(MAX_REPEAT) || (max !== undefined && max > BigInt(MAX_REPEAT))) {
        assert.equal(error, `unsupported regex construct: repeat count above ${MAX_REPEAT} in quantifier "${brace}" at position 8`);
      } else {
        assert.equal(error, "", pattern);
        // Accepted counts mean what they say: exactly min (and, bounded, up to max) repetitions.
        const handle = withPinnedString(wasm, pattern, (p) => wasm.regex_compile(p));
        try {
          const matches = (n: number) => withPinnedString(wasm, "/admin/" + "x".repeat(n), (p) => wasm.regex_full_match(handle, p)) !== 0;
          assert.equal(matches(Number(min)), true);
          if (min > 0n) assert.equal(matches(Number(min) - 1), false);
          if (max !== undefined) assert.equal(matches(Number(max) + 1), false);
        } finally {
          wasm.regex_release(handle);
        }
      }
      // JavaScript accepts every one of these syntactically (the count is only ours to limit), except out-of-order ones.
      if (!(max !== undefined && min > max)) assert.doesNotThrow(() => new RegExp(pattern));
    }),
    { numRuns: 400 },
  );
});

// Strings over the characters the regex grammar dispatches on, plus digits and a few letters.
const regexUnit = fc.constantFrom(..."\\^$.|?*+()[]{},-:=!<>0123456789abkuxcdDwWsSbBnrtvf/ \u00e9".split(""));
const regexText = fc.oneof(fc.string({ unit: regexUnit, maxLength: 40 }), fc.string({ maxLength: 20 }));
const POSITIONED = /^(unsupported regex construct|invalid regex): .* at position (\d+)( \(needs backtracking\))?$/s;
const TOO_LARGE = /^unsupported regex construct: pattern too large: it compiles to about \d+ automaton states, above the limit of \d+ /;

test("any pattern text is accepted or refused with a positioned reason, never a trap; invalid means invalid in JavaScript too", () => {
  fc.assert(
    fc.property(regexText, (p) => {
      const error = regexCheck(p);
      let jsError: unknown;
      try {
        new RegExp(p);
      } catch (e) {
        jsError = e;
      }
      if (error === "") {
        assert.equal(jsError, undefined, `accepted ${JSON.stringify(p)}, which JavaScript refuses`);
        return;
      }
      if (TOO_LARGE.test(error)) return;
      const m = POSITIONED.exec(error);
      assert.ok(m, `error without a position for ${JSON.stringify(p)}: ${error}`);
      assert.ok(Number(m[2]) <= p.length, `position ${m[2]} beyond the pattern ${JSON.stringify(p)}`);
      // V8 clamps counts to 2^31 - 1 before comparing them; we compare exact values, as ECMA-262 says.
      const hugeOutOfOrder = /numbers out of order/.test(error) && /\d{10}/.test(p);
      if (m[1] === "invalid regex" && !hugeOutOfOrder)
        assert.ok(jsError instanceof SyntaxError, `refused as invalid, but JavaScript accepts ${JSON.stringify(p)}: ${error}`);
    }),
    { numRuns: 3000 },
  );
});

// Templates: random text over the template grammar's characters, and well-formed templates from the grammar.
const templateUnit = fc.constantFrom(..."/*{}=.:?_aZ09%- ".split(""));
const templateText = fc.oneof(fc.string({ unit: templateUnit, maxLength: 40 }), fc.string({ maxLength: 20 }));
const ident = fc.stringMatching(/^[A-Za-z0-9_]{1,6}$/);
const literal = fc.stringMatching(/^[A-Za-z0-9_.~%-][A-Za-z0-9_.~%*-]{0,5}$/);
const plainSegment = fc.oneof(literal, fc.constant("*"));
const variable = fc
  .tuple(fc.array(ident, { minLength: 1, maxLength: 3 }), fc.option(fc.array(plainSegment, { minLength: 1, maxLength: 3 }), { nil: undefined }))
  .map(([path, segs]) => `{${path.join(".")}${segs ? "=" + segs.join("/") : ""}}`);
const wellFormed = fc
  .tuple(
    fc.array(fc.oneof(plainSegment, variable), { minLength: 1, maxLength: 6 }),
    fc.boolean(),
    fc.array(literal, { maxLength: 2 }),
    fc.option(literal, { nil: undefined }),
  )
  .map(([segs, doubleStar, tail, verb]) => "/" + [...segs, ...(doubleStar ? ["**", ...tail] : [])].join("/") + (verb ? ":" + verb : ""));

test("any uriTemplate text is accepted or refused with a positioned reason, never a trap", () => {
  fc.assert(
    fc.property(templateText, (t) => {
      const error = templateCheck(t);
      if (error === "") return;
      const prefix = `invalid uriTemplate "${t}": `;
      assert.ok(error.startsWith(prefix), `${JSON.stringify(t)}: ${error}`);
      const m = / at position (\d+)$/.exec(error.slice(prefix.length));
      assert.ok(m, `error without a position for ${JSON.stringify(t)}: ${error}`);
      assert.ok(Number(m[1]) <= t.length, `position ${m[1]} beyond ${JSON.stringify(t)}`);
    }),
    { numRuns: 3000 },
  );
});

test("templates built from the grammar are accepted", () => {
  fc.assert(
    fc.property(wellFormed, (t) => {
      assert.equal(templateCheck(t), "", t);
    }),
    { numRuns: 500 },
  );
});

test("sizes far beyond any configuration do not wrap: long templates and patterns", () => {
  const segments = 70_000;
  assert.equal(templateCheck("/" + Array.from({ length: segments }, (_, i) => (i % 2 ? "*" : `s${i}`)).join("/")), "");
  assert.equal(templateCheck("/" + "{v}/".repeat(40_000) + "x"), "");
  assert.match(regexCheck("(".repeat(100_000)), /^unsupported regex construct: groups nested deeper than \d+ at position \d+$/);
  assert.match(regexCheck("x{1000}".repeat(30)), TOO_LARGE);
});
