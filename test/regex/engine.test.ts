import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, it } from "node:test";
import { compileRegex, regexCompiler } from "../../host/regex/engine.ts";
import { FilterModule } from "../../host/wasm/filter_module.ts";
import { decodeDocuments, filterChecks } from "../../host/config/catalog.ts";
import { parseDocuments } from "../../host/config/documents.ts";
import { parseSuppression } from "../../host/cli/meshctl/analyze/suppress.ts";

// Issue 25 item 2: every regex a user configures or sends goes through the
// one linear-time engine (host/regex/engine.ts over assembly/regex/).

const ROOT = join(import.meta.dirname ?? ".", "..", "..");
const HOST = join(ROOT, "host");

describe("the linear regex engine (host/regex/engine.ts)", () => {
  it("full match and search, RE2's answers on the pattern that backtracks in JavaScript", () => {
    const r = compileRegex(String.raw`/v1/(\w+\.?)+`);
    assert.ok(!("error" in r));
    assert.equal(r.matches("/v1/books.v2"), true);
    assert.equal(r.matches(`/v1/${"a".repeat(5000)}!`), false);
    assert.equal(r.search(`x/v1/a!`), true);
    assert.equal(r.search("nothing"), false);
  });

  it("refuses what needs backtracking and programs above the size limit", () => {
    for (const [pattern, reason] of [
      [String.raw`(a)\1`, /backreference/],
      ["a(?=b)", /lookahead/],
      ["(?<!a)b", /lookbehind/],
      ["((a{100}){100}){100}", /too large|above/],
    ] as const) {
      const r = compileRegex(pattern);
      assert.ok("error" in r, pattern);
      assert.match(r.error, reason, pattern);
    }
  });

  it("a released program answers false and is released once", () => {
    const compile = regexCompiler(FilterModule.load());
    const a = compile("abc");
    assert.ok(!("error" in a));
    a.release();
    a.release();
    assert.equal(a.matches("abc"), false);
    // The freed slot is reused by the next program and keeps its own meaning.
    const b = compile("xyz");
    assert.ok(!("error" in b));
    assert.equal(b.matches("xyz"), true);
    assert.equal(b.matches("abc"), false);
  });

  it("VirtualService regexes are compiled at load; a refused one names the field", () => {
    const doc = (regex: string) =>
      parseDocuments(
        JSON.stringify({
          apiVersion: "networking.mesh.io/v1",
          kind: "VirtualService",
          metadata: { name: "reviews", namespace: "default" },
          spec: { hosts: ["reviews"], http: [{ match: [{ headers: { "x-v": { regex } } }], route: [{ destination: { host: "reviews" } }] }] },
        }),
        "vs.yaml",
      );
    const checks = filterChecks(FilterModule.load());
    const bad = decodeDocuments(doc(String.raw`(a)\1`), checks);
    assert.equal(bad.errors.length, 1);
    assert.equal(bad.errors[0].fieldPath, "spec.http[0].match[0].headers[x-v].regex");
    assert.match(bad.errors[0].message, /not supported: unsupported regex construct: backreference/);
    const good = decodeDocuments(doc("v[0-9]+"), checks);
    assert.deepEqual(good.errors, []);
    const match = (good.byKind.VirtualService[0].spec as any).http[0].match[0].headers["x-v"];
    assert.equal(match.matcher.matches("v12"), true);
    assert.deepEqual(JSON.parse(JSON.stringify(match)), { regex: "v[0-9]+" }, "dumps show the pattern only");
  });

  it("analyze suppressions match `*` globs without a regex", () => {
    const s = parseSuppression("MSH0101=VirtualService *.de(fault)*");
    assert.equal(s.matches("VirtualService reviews.de(fault)"), true);
    assert.equal(s.matches("VirtualService reviews.default"), false, "parentheses are literal");
    assert.equal(s.matches(`VirtualService ${"a".repeat(10000)}.de(fault)x`), true);
    assert.equal(parseSuppression("MSH0101=*").matches("anything"), true);
    assert.equal(parseSuppression("MSH0101=a*b*a").matches("aba"), true);
    assert.equal(parseSuppression("MSH0101=a*b*a").matches("ab"), false);
  });
});

// Uses of JavaScript's backtracking engine left in host/: each on a pattern
// fixed in the source, never on configured or requested text. A new use must
// be added here with that justification, or go through host/regex/engine.ts.
const FIXED_PATTERN_USES: ReadonlyArray<{ file: string; call: string }> = [
  { file: "host/daemon/duration.ts", call: ".matchAll(PART)" },
  { file: "host/cli/meshctl/simulate/tokens.ts", call: ".matchAll(PLACEHOLDER)" },
  { file: "host/cli/meshctl/analyze/source_lines.ts", call: ".matchAll(re)" },
  // Not JavaScript: Lua's string.match in the text of the Redis quota script.
  { file: "host/hubs/quota_lua.ts", call: '.match(member, "%.(%d+)' },
];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith(".ts") ? [path] : [];
  });
}

describe("no backtracking regex on configured input (source scan of host/)", () => {
  it("no RegExp is built at run time, and String methods that build one get fixed patterns only", () => {
    const found: string[] = [];
    for (const path of sources(HOST)) {
      const file = relative(ROOT, path);
      const text = readFileSync(path, "utf8");
      for (const m of text.matchAll(/\bRegExp\s*\(/g)) found.push(`${file}: RegExp( at offset ${m.index}`);
      // match/matchAll/search/split with a string or a variable compile it as a regex (split does not, but a RegExp variable would backtrack).
      for (const m of text.matchAll(/\.(match|matchAll)\(\s*([^/\s)][^)]*)\)/g)) {
        const call = `.${m[1]}(${m[2]})`;
        if (!FIXED_PATTERN_USES.some((u) => u.file === file && u.call === call)) found.push(`${file}: ${call}`);
      }
    }
    assert.deepEqual(found, [], "compile configured patterns with host/regex/engine.ts (or list a fixed-pattern use in FIXED_PATTERN_USES)");
  });

  it("each allowed use is still there and names a pattern literal of the source", () => {
    for (const u of FIXED_PATTERN_USES) {
      const text = readFileSync(join(ROOT, u.file), "utf8");
      assert.ok(text.includes(u.call), `${u.file} no longer has ${u.call}: remove it from the list`);
    }
    const all = sources(HOST).map((p) => readFileSync(p, "utf8")).join("\n");
    for (const name of ["PART", "PLACEHOLDER", "re"]) assert.match(all, new RegExp(`const ${name} = /`), `${name} is a regex literal`);
  });
});

describe("regexes accepted but not applied are compiled too", () => {
  const vs = (route: string) =>
    decodeDocuments(
      parseDocuments(`apiVersion: networking.mesh.io/v1\nkind: VirtualService\nmetadata: {name: r, namespace: default}\nspec:\n  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n    ${route}\n`, "vs.yaml"),
      filterChecks(FilterModule.load()),
    );

  it("rewrite.uriRegexRewrite.match and corsPolicy.allowOrigins[].regex: refused naming the field, else a warning", () => {
    const bad = vs(String.raw`rewrite: {uriRegexRewrite: {match: "(a)\\1", rewrite: "/x"}}`);
    assert.deepEqual(bad.errors.map((e) => e.fieldPath), ["spec.http[0].rewrite.uriRegexRewrite.match"]);
    const cors = vs(String.raw`corsPolicy: {allowOrigins: [{exact: "https://a"}, {regex: "a(?=b)"}]}`);
    assert.deepEqual(cors.errors.map((e) => e.fieldPath), ["spec.http[0].corsPolicy.allowOrigins[1].regex"]);
    const good = vs(String.raw`rewrite: {uriRegexRewrite: {match: "^/v1/(.*)", rewrite: "/\\1"}}`);
    assert.deepEqual(good.errors, []);
    assert.deepEqual(good.warnings.map((w) => w.fieldPath), ["spec.http[0].rewrite.uriRegexRewrite"]);
  });
});
