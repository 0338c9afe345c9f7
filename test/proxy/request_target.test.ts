import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { normalizeRequestTarget } from "../../host/proxy/http/request_target.ts";

// The request target at the listener edge (docs/security.md "Request targets").

describe("normalizeRequestTarget", () => {
  const ok: Array<[string, string, string | undefined, string, string, string]> = [
    // method, target, Host header, → form, path, authority
    ["GET", "/admin", "httpbin.foo:8000", "origin", "/admin", "httpbin.foo:8000"],
    ["GET", "/public/../admin?x=1#f", "h", "origin", "/admin?x=1", "h"],
    ["GET", "http://httpbin.foo:8000/admin", "httpbin.foo:8000", "absolute", "/admin", "httpbin.foo:8000"],
    ["GET", "HTTP://HTTPBIN.FOO:8000/a/../admin", "httpbin.foo:8000", "absolute", "/admin", "httpbin.foo:8000"],
    ["GET", "http://httpbin.foo/admin", "httpbin.foo:80", "absolute", "/admin", "httpbin.foo:80"],
    ["GET", "http://httpbin.foo:80/admin", "httpbin.foo", "absolute", "/admin", "httpbin.foo"],
    ["GET", "https://h:443/x", "h", "absolute", "/x", "h"],
    ["GET", "http://h", "h", "absolute", "/", "h"],
    ["GET", "http://h?q=1", "h", "absolute", "/?q=1", "h"],
    ["GET", "http://[::1]:8000/x", "[::1]:8000", "absolute", "/x", "[::1]:8000"],
    ["GET", "http://h:8000/x", undefined, "absolute", "/x", "h:8000"],
    ["OPTIONS", "*", "h", "asterisk", "*", "h"],
  ];
  for (const [method, target, host, form, path, authority] of ok) {
    it(`${method} ${target} (Host ${host ?? "absent"}) → ${form} ${path}`, () => {
      assert.deepEqual(normalizeRequestTarget(method, target, host), { ok: true, form, path, authority });
    });
  }

  const refused: Array<[string, string, string | undefined, string]> = [
    ["GET", "http://evil.example/admin", "httpbin.foo:8000", "authority_mismatch"],
    ["GET", "http://httpbin.foo:8001/admin", "httpbin.foo:8000", "authority_mismatch"],
    ["GET", "https://h/x", "h:80", "authority_mismatch"],
    ["GET", "*", "h", "asterisk_form"],
    ["POST", "*", "h", "asterisk_form"],
    ["GET", "http://user@h/x", "h", "invalid_target"],
    ["GET", "ftp://h/x", "h", "invalid_target"],
    ["GET", "http:///x", "h", "invalid_target"],
    ["GET", "admin", "h", "invalid_target"],
    ["GET", "/a%00", "h", "invalid_path"],
    ["GET", "http://h/a%00", "h", "invalid_path"],
  ];
  for (const [method, target, host, reason] of refused) {
    it(`${method} ${target} (Host ${host ?? "absent"}) → 400 ${reason}`, () => {
      const r = normalizeRequestTarget(method, target, host);
      assert.equal(r.ok, false);
      assert.equal(!r.ok && r.status, 400);
      assert.equal(!r.ok && r.reason, reason);
    });
  }

  it("the mode decides the path: DECODE_AND_MERGE_SLASHES decodes %2F, BASE keeps it and the //, NONE keeps everything", () => {
    const path = (mode: "NONE" | "BASE" | "DECODE_AND_MERGE_SLASHES") => {
      const r = normalizeRequestTarget("GET", "http://h/a/..//admin%2Fx", "h", mode);
      return r.ok ? r.path : r.reason;
    };
    assert.equal(path("BASE"), "//admin%2Fx");
    assert.equal(path("DECODE_AND_MERGE_SLASHES"), "/admin/x");
    assert.equal(path("NONE"), "/a/..//admin%2Fx");
  });
});
