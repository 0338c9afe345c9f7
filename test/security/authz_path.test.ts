import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { PATH_NORMALIZATIONS, type PathNormalization, normalizePath } from "../../host/security/authz/path.ts";

// Path normalization modes (security.md §5.3); BASE is the default. The
// upstream rows are the mesh's own expectations per mode (what the app
// receives), from its path-normalization integration test.

describe("normalizePath", () => {
  const rows: Array<[PathNormalization, string, string]> = [
    ["BASE", "/a/./b/../c", "/a/c"],
    ["BASE", "/public/../private", "/private"],
    ["BASE", "/../../etc", "/etc"],
    ["BASE", "/a/b/..", "/a/"],
    ["BASE", "/%2E%2E/x", "/x"],
    ["BASE", "/%7euser/%41", "/~user/A"],
    ["BASE", "/a%2fb", "/a%2fb"],
    ["BASE", "/a\\b", "/a/b"],
    ["BASE", "//a//b", "//a//b"],
    ["BASE", "/x?q=/../y", "/x?q=/../y"],
    ["MERGE_SLASHES", "//a//b/", "/a/b/"],
    ["DECODE_AND_MERGE_SLASHES", "/a%2F%2Fb%5Cc", "/a/b/c"],
    ["DECODE_AND_MERGE_SLASHES", "/a%2f..%2fb", "/b"],
    ["NONE", "/a/../b", "/a/../b"],
    // Escapes that decode into escapes: repeated until nothing changes.
    ["BASE", "/a/%%32%65%%32%65/admin", "/admin"],
    ["DECODE_AND_MERGE_SLASHES", "/admin%%32%66x", "/admin/x"],
    ["MERGE_SLASHES", "/admin%%32%66x", "/admin%2fx"],
  ];
  const upstream: Array<[string, Record<Exclude<PathNormalization, "NONE">, string>]> = [
    ["/", { BASE: "/", MERGE_SLASHES: "/", DECODE_AND_MERGE_SLASHES: "/" }],
    ["/app/../admin", { BASE: "/admin", MERGE_SLASHES: "/admin", DECODE_AND_MERGE_SLASHES: "/admin" }],
    ["/app//", { BASE: "/app//", MERGE_SLASHES: "/app/", DECODE_AND_MERGE_SLASHES: "/app/" }],
    ["/app/%2f", { BASE: "/app/%2f", MERGE_SLASHES: "/app/%2f", DECODE_AND_MERGE_SLASHES: "/app/" }],
    ["/app%2f/", { BASE: "/app%2f/", MERGE_SLASHES: "/app%2f/", DECODE_AND_MERGE_SLASHES: "/app/" }],
    ["/xyz%30..//abc", { BASE: "/xyz0..//abc", MERGE_SLASHES: "/xyz0../abc", DECODE_AND_MERGE_SLASHES: "/xyz0../abc" }],
    ["/app/%2E./admin", { BASE: "/admin", MERGE_SLASHES: "/admin", DECODE_AND_MERGE_SLASHES: "/admin" }],
    ["/app\\admin", { BASE: "/app/admin", MERGE_SLASHES: "/app/admin", DECODE_AND_MERGE_SLASHES: "/app/admin" }],
    ["/app/\\/\\/\\admin", { BASE: "/app//////admin", MERGE_SLASHES: "/app/admin", DECODE_AND_MERGE_SLASHES: "/app/admin" }],
    ["/%2Fapp%5cadmin%5Cabc", { BASE: "/%2Fapp%5cadmin%5Cabc", MERGE_SLASHES: "/%2Fapp%5cadmin%5Cabc", DECODE_AND_MERGE_SLASHES: "/app/admin/abc" }],
    [
      "/%5Capp%2f%5c%2F%2e%2e%2fadmin%5c\\abc",
      { BASE: "/%5Capp%2f%5c%2F..%2fadmin%5c/abc", MERGE_SLASHES: "/%5Capp%2f%5c%2F..%2fadmin%5c/abc", DECODE_AND_MERGE_SLASHES: "/app/admin/abc" },
    ],
    ["/app//../admin", { BASE: "/app/admin", MERGE_SLASHES: "/app/admin", DECODE_AND_MERGE_SLASHES: "/app/admin" }],
    ["/app//../../admin", { BASE: "/admin", MERGE_SLASHES: "/admin", DECODE_AND_MERGE_SLASHES: "/admin" }],
    ["/%c0%2e%c0%2e/admin", { BASE: "/%c0.%c0./admin", MERGE_SLASHES: "/%c0.%c0./admin", DECODE_AND_MERGE_SLASHES: "/%c0.%c0./admin" }],
    ["/app#foo", { BASE: "/app", MERGE_SLASHES: "/app", DECODE_AND_MERGE_SLASHES: "/app" }],
  ];
  // Left alone under every mode: overlong UTF-8, double encoding, lookalikes, path parameters, case.
  for (const input of [
    "/0x2e0x2e/admin",
    "/%252e%252e/admin",
    "/%252e%252e%252fadmin",
    "/%25c0%25ae%25c0%25ae/admin",
    "/%c1%9cadmin",
    "/%c0%ae%c0%ae/admin",
    "/%c0%afadmin",
    "/.../admin",
    "/..;/admin",
    "/;/admin",
    "/admin;a=b/xyz",
    "/admin,a=b/xyz",
    "/Admin",
    "/ADMIN",
  ]) {
    upstream.push([input, { BASE: input, MERGE_SLASHES: input, DECODE_AND_MERGE_SLASHES: input }]);
  }
  for (const [input, byMode] of upstream) for (const [mode, out] of Object.entries(byMode)) rows.push([mode as PathNormalization, input, out]);
  for (const [mode, input, out] of rows) {
    it(`${mode}: ${input} → ${out}`, () => {
      const r = normalizePath(input, mode);
      assert.ok(r.ok);
      assert.equal(r.path, out);
    });
  }
  it("DECODE_AND_MERGE_SLASHES: /admin%XX for every byte but NUL: unreserved characters, / and \\ decoded, the rest kept as sent", () => {
    for (let i = 1; i <= 0xff; i++) {
      const hex = i.toString(16).padStart(2, "0");
      const ch = String.fromCharCode(i);
      const decoded = /[A-Za-z0-9\-._~]/.test(ch) ? ch : ch === "/" || ch === "\\" ? "/" : `%${hex}`;
      const r = normalizePath(`/admin%${hex}`, "DECODE_AND_MERGE_SLASHES");
      assert.ok(r.ok);
      assert.equal(r.path, ch === "." ? "/admin." : `/admin${decoded}`, `%${hex}`);
    }
  });

  it("matchPath leaves the query out; the fragment is dropped", () => {
    const r = normalizePath("/a/../b?x=1#f");
    assert.deepEqual(r, { ok: true, path: "/b?x=1", matchPath: "/b" });
  });
  it("an encoded NUL is refused, also when it only appears after decoding", () => {
    assert.deepEqual(normalizePath("/a%00b"), { ok: false, status: 400, reason: "invalid_path" });
    assert.deepEqual(normalizePath("/a%%30%30b"), { ok: false, status: 400, reason: "invalid_path" });
  });

  // Paths over the characters normalization cares about.
  const unit = fc.constantFrom("/", "/", ".", "..", "\\", "%", "%2e", "%2E", "%2f", "%2F", "%5c", "%5C", "%32", "%65", "%66", "%25", "a", "b", "%41", "?", "#");
  const path = fc.array(unit, { maxLength: 16 }).map((u) => "/" + u.join(""));
  const mode = fc.constantFrom(...PATH_NORMALIZATIONS);

  it("property: the result is a fixed point (normalizing it again changes nothing)", () => {
    fc.assert(
      fc.property(path, mode, (p, m) => {
        const once = normalizePath(p, m);
        if (!once.ok) return;
        const twice = normalizePath(once.path, m);
        assert.ok(twice.ok);
        assert.equal(twice.path, once.path, `${m}: ${p}`);
      }),
      { numRuns: 2000 },
    );
  });

  it("property: path is matchPath followed by the target's query, changed or not, with or without one", () => {
    fc.assert(
      fc.property(path, mode, (p, m) => {
        const r = normalizePath(p, m);
        if (!r.ok) return;
        const noFragment = p.split("#")[0];
        const q = noFragment.indexOf("?");
        assert.equal(r.path, r.matchPath + (q < 0 ? "" : noFragment.slice(q)), `${m}: ${p}`);
      }),
      { numRuns: 2000 },
    );
  });

  it("property: no dot segment, encoded or not, survives; no slash-merging mode leaves //; DECODE leaves no %2F or %5C", () => {
    fc.assert(
      fc.property(path, fc.constantFrom<PathNormalization>("BASE", "MERGE_SLASHES", "DECODE_AND_MERGE_SLASHES"), (p, m) => {
        const r = normalizePath(p, m);
        if (!r.ok) return;
        const segments = r.matchPath.split("/").map((s) => s.replace(/%2e/gi, "."));
        assert.ok(!segments.includes(".") && !segments.includes(".."), `${m}: ${p} → ${r.matchPath}`);
        assert.ok(!r.matchPath.includes("\\"), `${m}: ${p} → ${r.matchPath}`);
        if (m !== "BASE") assert.ok(!r.matchPath.includes("//"), `${m}: ${p} → ${r.matchPath}`);
        if (m === "DECODE_AND_MERGE_SLASHES") assert.ok(!/%2f|%5c/i.test(r.matchPath), `${m}: ${p} → ${r.matchPath}`);
      }),
      { numRuns: 2000 },
    );
  });
});
