import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Authenticator, AUTHN_PAYLOAD_PROPERTY, type AuthnRequest, type AuthnResult, jwtRulesFor } from "../../host/security/jwt/authenticator.ts";
import { JwksCache } from "../../host/security/jwt/jwks.ts";
import { type SigningKey, Clock, JwksServer, algConfusion, catalogOf, jwksOf, mint, signingKey, unsigned } from "./support.ts";

// Spec rules 8–11 and the Errors table; bodies and statuses from security.md §4.3.

const ISS = "testing@secure.mesh.io";
const workload = { namespace: "foo", labels: { app: "httpbin" } };

let key1: SigningKey;
let key2: SigningKey;
let rogue: SigningKey;
let ec: SigningKey;

before(async () => {
  key1 = await signingKey("RS256", "key-1");
  key2 = await signingKey("RS256", "key-2");
  rogue = await signingKey("RS256", "key-1"); // same kid as key-1, never published
  ec = await signingKey("ES256", "ec-1");
});

function policy(rule: Record<string, unknown>, extra = ""): string {
  return `
apiVersion: security.mesh.io/v1beta1
kind: RequestAuthentication
metadata: { name: jwt-example, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  jwtRules:
    - ${JSON.stringify(rule)}
${extra}`;
}

function authenticator(yaml: string, clock: Clock, jwks = new JwksCache({ now: clock.now })): Authenticator {
  const c = catalogOf(yaml);
  return Authenticator.create(jwtRulesFor(c.byKind.RequestAuthentication, workload), { jwks, now: clock.now });
}

function request(headers: Array<[string, string]> = [], path = "/headers"): AuthnRequest {
  return { method: "GET", path, host: "httpbin.foo:8000", scheme: "http", headers };
}

const bearer = (t: string): Array<[string, string]> => [["authorization", `Bearer ${t}`]];
const REALM = 'Bearer realm="http://httpbin.foo:8000/headers", error="invalid_token"';

function assertDenied(r: AuthnResult, status: number, body: string, realm = REALM): void {
  assert.equal(r.outcome, "denied", `expected a denial, got ${JSON.stringify(r)}`);
  if (r.outcome !== "denied") return;
  assert.equal(r.status, status);
  assert.equal(r.body, body);
  assert.deepEqual(r.responseHeaders, { "www-authenticate": realm });
}

describe("authenticator: inline key set", () => {
  const clock = new Clock();
  let authn: Authenticator;
  before(() => {
    authn = authenticator(policy({ issuer: ISS, jwks: JSON.stringify(jwksOf(key1, ec)), audiences: ["httpbin.foo"] }), clock);
  });
  const claims = () => ({ iss: ISS, sub: "alice", aud: "httpbin.foo", exp: clock.seconds + 3600 });

  it("rule 8: no token → anonymous, no principal", async () => {
    const r = await authn.authenticate(request([["x-other", "1"]]));
    assert.equal(r.outcome, "anonymous");
    assert.equal(r.outcome === "anonymous" && r.reason, "no_token");
  });

  it("a header without the prefix holds no token (Authorization: Basic …)", async () => {
    const r = await authn.authenticate(request([["authorization", "Basic YWxhZGRpbjpvcGVuc2VzYW1l"]]));
    assert.equal(r.outcome, "anonymous");
  });

  it("rule 10: a valid token → principal <iss>/<sub>, payload for mesh.authn_payload, token stripped", async () => {
    const token = await mint(key1, claims(), clock);
    const r = await authn.authenticate(request(bearer(token)));
    assert.equal(r.outcome, "authenticated");
    if (r.outcome !== "authenticated") return;
    assert.equal(r.principal, `${ISS}/alice`);
    assert.equal(JSON.parse(r.payloadJson).sub, "alice");
    assert.deepEqual(AUTHN_PAYLOAD_PROPERTY, ["mesh", "authn_payload"]);
    assert.deepEqual(r.effects.removeHeaders, ["authorization"]);
    assert.deepEqual(r.effects.setHeaders, []);
  });

  it("an EC (ES256) token verifies against the EC key of the set", async () => {
    const r = await authn.authenticate(request(bearer(await mint(ec, claims(), clock))));
    assert.equal(r.outcome, "authenticated");
  });

  it("audiences compare without scheme and trailing slash (upstream check_audience)", async () => {
    const r = await authn.authenticate(request(bearer(await mint(key1, { ...claims(), aud: ["other", "https://httpbin.foo/"] }, clock))));
    assert.equal(r.outcome, "authenticated");
  });

  // The bad-token set of issue 6: never accepted, with upstream's exact status and body.
  const badTokens: Array<[string, () => Promise<string>, number, string]> = [
    ["invalid signature (rogue key, same kid)", () => mint(rogue, claims(), clock), 401, "Jwt verification fails"],
    ["unknown issuer", () => mint(key1, { ...claims(), iss: "evil@example.com" }, clock), 401, "Jwt issuer is not configured"],
    ["malformed: one part", async () => "deadbeef", 401, "Jwt is not in the form of Header.Payload.Signature with two dots and 3 sections"],
    ["malformed: header not JSON", async () => "bm90IGpzb24.eyJpc3MiOiJ4In0.c2ln", 401, "Jwt header is an invalid JSON"],
    [
      "malformed: payload not base64url",
      async () => "eyJhbGciOiJSUzI1NiJ9.@@@.c2ln",
      401,
      "Jwt is not in the form of Header.Payload.Signature with two dots and 3 sections",
    ],
    [
      "alg none, empty signature",
      async () => unsigned(claims(), "key-1"),
      401,
      "Jwt is not in the form of Header.Payload.Signature with two dots and 3 sections",
    ],
    ["alg none, junk signature", async () => unsigned(claims(), "key-1", "c2lnbmF0dXJl"), 401, "Jwt header [alg] is not supported"],
    [
      "algorithm confusion (HS256 keyed with the RSA public key)",
      () => algConfusion(key1, claims()),
      401,
      "Jwks doesn't have key to match kid or alg from Jwt",
    ],
    ["expired", () => mint(key1, { ...claims(), exp: clock.seconds - 1 }, clock), 401, "Jwt is expired"],
    ["not yet valid", () => mint(key1, { ...claims(), nbf: clock.seconds + 60 }, clock), 401, "Jwt not yet valid"],
    ["audience mismatch → 403", () => mint(key1, { ...claims(), aud: "someone-else" }, clock), 403, "Audiences in Jwt are not allowed"],
    [
      "no audience when audiences are required → 403",
      () => mint(key1, { iss: ISS, sub: "alice", exp: clock.seconds + 60 }, clock),
      403,
      "Audiences in Jwt are not allowed",
    ],
    ["signed by an unpublished key (key-2)", () => mint(key2, claims(), clock), 401, "Jwks doesn't have key to match kid or alg from Jwt"],
    [
      "expired and badly signed: expiry reported first (upstream order)",
      () => mint(rogue, { ...claims(), exp: clock.seconds - 5 }, clock),
      401,
      "Jwt is expired",
    ],
    ["iss not a string", () => mint(key1, { ...claims(), iss: 5 as unknown as string }, clock), 401, "Jwt payload [iss] field is not a string"],
    ["exp not an integer", () => mint(key1, { ...claims(), exp: "soon" as unknown as number }, clock), 401, "Jwt payload [exp] field is not an integer"],
  ];
  for (const [name, make, status, body] of badTokens) {
    it(`refuses: ${name} → ${status} ${body}`, async () => {
      assertDenied(await authn.authenticate(request(bearer(await make()))), status, body);
    });
  }

  it("rule 11: accepted until exp, 401 from exp on (clock skew 0)", async () => {
    const c = new Clock();
    const a = authenticator(policy({ issuer: ISS, jwks: JSON.stringify(jwksOf(key1)) }), c);
    const token = await mint(key1, { iss: ISS, sub: "bob", exp: c.seconds + 5 }, c);
    assert.equal((await a.authenticate(request(bearer(token)))).outcome, "authenticated");
    c.advance(4);
    assert.equal((await a.authenticate(request(bearer(token)))).outcome, "authenticated");
    c.advance(1);
    assertDenied(await a.authenticate(request(bearer(token))), 401, "Jwt is expired");
  });

  it("a clock-skew allowance extends exp and nbf by that many seconds", async () => {
    const c = new Clock();
    const rules = jwtRulesFor(catalogOf(policy({ issuer: ISS, jwks: JSON.stringify(jwksOf(key1)) })).byKind.RequestAuthentication, workload);
    const a = Authenticator.create(rules, { jwks: new JwksCache(), now: c.now, clockSkewSeconds: 60 });
    const token = await mint(key1, { iss: ISS, sub: "bob", exp: c.seconds + 5 }, c);
    c.advance(64);
    assert.equal((await a.authenticate(request(bearer(token)))).outcome, "authenticated");
    c.advance(1);
    assertDenied(await a.authenticate(request(bearer(token))), 401, "Jwt is expired");
    const early = await mint(key1, { iss: ISS, sub: "bob", nbf: c.seconds + 60 }, c);
    assert.equal((await a.authenticate(request(bearer(early)))).outcome, "authenticated");
  });

  it("the realm carries the original path with its query, cut to 256 characters", async () => {
    const long = `/p?${"q".repeat(300)}`;
    const r = await authn.authenticate({ ...request(bearer("deadbeef")), path: long });
    assert.equal(r.outcome, "denied");
    if (r.outcome !== "denied") return;
    assert.equal(r.responseHeaders["www-authenticate"], `Bearer realm="http://httpbin.foo:8000${long.slice(0, 256)}", error="invalid_token"`);
  });

  it("CORS preflight bypasses the check; OPTIONS without Origin does not", async () => {
    const pre = await authn.authenticate({
      ...request([...bearer("deadbeef"), ["origin", "https://a"], ["access-control-request-method", "GET"]]),
      method: "OPTIONS",
    });
    assert.equal(pre.outcome, "anonymous");
    const plain = await authn.authenticate({ ...request(bearer("deadbeef")), method: "OPTIONS" });
    assert.equal(plain.outcome, "denied");
  });
});

describe("authenticator: token locations and several tokens", () => {
  const clock = new Clock();
  const claims = (sub = "alice") => ({ iss: ISS, sub, exp: clock.seconds + 3600 });

  it("defaults: Authorization Bearer, then query access_token; every token must be valid", async () => {
    const a = authenticator(policy({ issuer: ISS, jwks: JSON.stringify(jwksOf(key1)) }), clock);
    const good = await mint(key1, claims(), clock);
    const q = await a.authenticate(request([], `/headers?access_token=${good}&x=1`));
    assert.equal(q.outcome, "authenticated");
    assert.equal(q.outcome === "authenticated" && q.effects.path, "/headers?x=1");
    const both = await a.authenticate(request(bearer(good), `/headers?access_token=${good}`));
    assert.equal(both.outcome, "authenticated");
    // A valid header token does not excuse an invalid query token, and vice versa (security.md §4.2, Envoy #31298).
    const bad = await mint(rogue, claims(), clock);
    const mixed = await a.authenticate(request(bearer(good), `/headers?access_token=${bad}`));
    assert.equal(mixed.outcome === "denied" && `${mixed.status} ${mixed.body}`, "401 Jwt verification fails");
    const r = await a.authenticate(request(bearer(bad), `/headers?access_token=${good}`));
    assert.equal(r.outcome, "denied");
  });

  it("two valid tokens: the principal comes from the first location (header)", async () => {
    const a = authenticator(policy({ issuer: ISS, jwks: JSON.stringify(jwksOf(key1)) }), clock);
    const r = await a.authenticate(
      request(bearer(await mint(key1, claims("header-user"), clock)), `/h?access_token=${await mint(key1, claims("query-user"), clock)}`),
    );
    assert.equal(r.outcome === "authenticated" && r.principal, `${ISS}/header-user`);
    assert.equal(r.outcome === "authenticated" && r.payloads.length, 2);
  });

  it("two tokens in the same header, one bad → 401", async () => {
    const a = authenticator(policy({ issuer: ISS, jwks: JSON.stringify(jwksOf(key1)) }), clock);
    const r = await a.authenticate(request([...bearer(await mint(key1, claims(), clock)), ...bearer("deadbeef")]));
    assert.equal(r.outcome, "denied");
  });

  it("fromHeaders {name, prefix} and fromParams replace the defaults", async () => {
    const a = authenticator(
      policy({ issuer: ISS, jwks: JSON.stringify(jwksOf(key1)), fromHeaders: [{ name: "X-Jwt-Assertion", prefix: "Token " }], fromParams: ["my_token"] }),
      clock,
    );
    const good = await mint(key1, claims(), clock);
    assert.equal((await a.authenticate(request([["x-jwt-assertion", `Token ${good}`]]))).outcome, "authenticated");
    assert.equal((await a.authenticate(request([], `/p?my_token=${good}`))).outcome, "authenticated");
    // Authorization is no longer read: a bad token there is simply not a token (security.md §7.7).
    const ignored = await a.authenticate(request(bearer("deadbeef")));
    assert.equal(ignored.outcome, "anonymous");
    // Prefix matching is case-sensitive.
    assert.equal((await a.authenticate(request([["x-jwt-assertion", `token ${good}`]]))).outcome, "anonymous");
  });

  it("forwardOriginalToken keeps the token; outputPayloadToHeader adds the base64url payload; spoofed output headers are stripped", async () => {
    const a = authenticator(
      policy({ issuer: ISS, jwks: JSON.stringify(jwksOf(key1)), forwardOriginalToken: true, outputPayloadToHeader: "X-Jwt-Payload" }),
      clock,
    );
    const token = await mint(key1, claims(), clock);
    const r = await a.authenticate(request([...bearer(token), ["x-jwt-payload", "forged"]]));
    assert.equal(r.outcome, "authenticated");
    if (r.outcome !== "authenticated") return;
    assert.deepEqual(r.effects.removeHeaders, ["x-jwt-payload"]);
    assert.deepEqual(r.effects.setHeaders, [["x-jwt-payload", token.split(".")[1]]]);
    assert.equal(JSON.parse(Buffer.from(r.effects.setHeaders[0][1], "base64url").toString()).sub, "alice");
    const anon = await a.authenticate(request([["x-jwt-payload", "forged"]]));
    assert.deepEqual(anon.outcome === "anonymous" && anon.effects.removeHeaders, ["x-jwt-payload"]);
  });

  it("two rules (issuers) on one location: a token of either passes; a third issuer is not configured", async () => {
    const yaml = `
apiVersion: security.mesh.io/v1beta1
kind: RequestAuthentication
metadata: { name: a, namespace: foo }
spec:
  jwtRules:
    - { issuer: "${ISS}", jwks: '${JSON.stringify(jwksOf(key1))}' }
---
apiVersion: security.mesh.io/v1beta1
kind: RequestAuthentication
metadata: { name: b, namespace: mesh-system }
spec:
  jwtRules:
    - { issuer: other@example.com, jwks: '${JSON.stringify(jwksOf(ec))}' }
`;
    const a = authenticator(yaml, clock);
    assert.equal(a.rules.length, 2);
    assert.equal((await a.authenticate(request(bearer(await mint(key1, claims(), clock))))).outcome, "authenticated");
    assert.equal((await a.authenticate(request(bearer(await mint(ec, { ...claims(), iss: "other@example.com" }, clock))))).outcome, "authenticated");
    assertDenied(await a.authenticate(request(bearer(await mint(ec, { ...claims(), iss: "third" }, clock)))), 401, "Jwt issuer is not configured");
  });

  it("policies of other namespaces or other selectors do not apply", async () => {
    const c = catalogOf(policy({ issuer: ISS, jwks: JSON.stringify(jwksOf(key1)) }));
    assert.equal(jwtRulesFor(c.byKind.RequestAuthentication, { namespace: "bar", labels: { app: "httpbin" } }).length, 0);
    assert.equal(jwtRulesFor(c.byKind.RequestAuthentication, { namespace: "foo", labels: { app: "other" } }).length, 0);
    const none = Authenticator.create([], { jwks: new JwksCache() });
    assert.equal((await none.authenticate(request(bearer("deadbeef")))).outcome, "anonymous");
  });
});

describe("authenticator: remote key set (jwksUri)", () => {
  const server = new JwksServer();
  before(async () => {
    await server.start();
    server.body = jwksOf(key1);
  });
  after(() => server.stop());

  it("fetches once for concurrent requests, verifies, and refuses the bad-token set", async () => {
    const clock = new Clock();
    const a = authenticator(policy({ issuer: ISS, jwksUri: server.url }), clock);
    const before = server.requests;
    const good = await mint(key1, { iss: ISS, sub: "alice", exp: clock.seconds + 60 }, clock);
    const results = await Promise.all(Array.from({ length: 5 }, () => a.authenticate(request(bearer(good)))));
    assert.ok(results.every((r) => r.outcome === "authenticated"));
    assert.equal(server.requests - before, 1);
    for (const token of [
      await mint(rogue, { iss: ISS, sub: "x" }, clock),
      unsigned({ iss: ISS }, "key-1", "abc"),
      await algConfusion(key1, { iss: ISS, sub: "x" }),
    ]) {
      assert.equal((await a.authenticate(request(bearer(token)))).outcome, "denied");
    }
  });

  it("a key set that cannot be fetched → 401 Jwks remote fetch is failed; no token still passes", async () => {
    const clock = new Clock();
    const a = authenticator(policy({ issuer: ISS, jwksUri: "http://127.0.0.1:9/none.json" }), clock);
    assertDenied(await a.authenticate(request(bearer(await mint(key1, { iss: ISS, sub: "a" }, clock)))), 401, "Jwks remote fetch is failed");
    assert.equal((await a.authenticate(request())).outcome, "anonymous");
  });
});
