import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { extractTokens, removeQueryParams, tokenFromHeaderValue, tokenLocations } from "../../host/security/jwt/extractor.ts";

// Envoy jwt_authn extractor behaviour (security.md §4.2).

describe("token extraction", () => {
  it("prefix is searched case-sensitively; the token runs over the JWT alphabet", () => {
    assert.equal(tokenFromHeaderValue("Bearer a.b.c", "Bearer "), "a.b.c");
    assert.equal(tokenFromHeaderValue("Bearer   a.b.c, other", "Bearer "), "a.b.c");
    assert.equal(tokenFromHeaderValue("bearer a.b.c", "Bearer "), undefined);
    assert.equal(tokenFromHeaderValue("Basic dXNlcg==", "Bearer "), undefined);
    assert.equal(tokenFromHeaderValue("a.b.c", ""), "a.b.c");
    assert.equal(tokenFromHeaderValue("Bearer ", "Bearer "), undefined);
  });

  it("defaults are Authorization Bearer then query access_token; configured locations replace them", () => {
    assert.deepEqual(tokenLocations({ fromHeaders: [], fromParams: [] }), [
      { kind: "header", name: "authorization", prefix: "Bearer " },
      { kind: "param", name: "access_token" },
    ]);
    assert.deepEqual(tokenLocations({ fromHeaders: [{ name: "X-Token", prefix: "" }], fromParams: [] }), [{ kind: "header", name: "x-token", prefix: "" }]);
  });

  it("every occurrence is extracted, headers before parameters", () => {
    const locations = tokenLocations({ fromHeaders: [], fromParams: [] });
    const found = extractTokens(
      {
        headers: [
          ["authorization", "Bearer h1"],
          ["authorization", "Bearer h2"],
        ],
        path: "/p?access_token=q1&access_token=q2",
      },
      locations,
    );
    assert.deepEqual(
      found.map((t) => t.token),
      ["h1", "h2", "q1", "q2"],
    );
  });

  it("a consumed query token is removed from the forwarded path, the rest kept", () => {
    assert.equal(removeQueryParams("/p?a=1&access_token=x&b=2#f", new Set(["access_token"])), "/p?a=1&b=2#f");
    assert.equal(removeQueryParams("/p?access_token=x", new Set(["access_token"])), "/p");
    assert.equal(removeQueryParams("/p?a=1", new Set()), "/p?a=1");
  });
});
