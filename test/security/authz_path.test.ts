import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type PathNormalization, normalizePath } from "../../host/security/authz/path.ts";

// Path normalization modes (security.md §5.3); BASE is the default.

describe("normalizePath", () => {
  const rows: Array<[PathNormalization, string, string]> = [
    ["BASE", "/a/./b/../c", "/a/c"],
    ["BASE", "/public/../private", "/private"],
    ["BASE", "/../../etc", "/etc"],
    ["BASE", "/a/b/..", "/a/"],
    ["BASE", "/%2E%2E/x", "/x"],
    ["BASE", "/%7euser/%41", "/~user/A"],
    ["BASE", "/a%2fb", "/a%2Fb"],
    ["BASE", "/a\\b", "/a/b"],
    ["BASE", "//a//b", "//a//b"],
    ["BASE", "/x?q=/../y", "/x?q=/../y"],
    ["MERGE_SLASHES", "//a//b/", "/a/b/"],
    ["DECODE_AND_MERGE_SLASHES", "/a%2F%2Fb%5Cc", "/a/b/c"],
    ["DECODE_AND_MERGE_SLASHES", "/a%2f..%2fb", "/b"],
    ["NONE", "/a/../b", "/a/../b"],
  ];
  for (const [mode, input, out] of rows) {
    it(`${mode}: ${input} → ${out}`, () => {
      const r = normalizePath(input, mode);
      assert.ok(r.ok);
      assert.equal(r.path, out);
    });
  }
  it("matchPath leaves the query out; the fragment is dropped", () => {
    const r = normalizePath("/a/../b?x=1#f");
    assert.deepEqual(r, { ok: true, path: "/b?x=1", matchPath: "/b" });
  });
  it("an encoded NUL is refused", () => {
    assert.deepEqual(normalizePath("/a%00b"), { ok: false, status: 400, reason: "invalid_path" });
  });
});
