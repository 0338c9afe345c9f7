import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { base64url } from "jose";
import { InlineKeySet } from "../../host/security/jwt/jwks.ts";
import { JWT_MESSAGES, algorithmsForKey, audienceAllowed, isFailure, parseJwt, verifyToken } from "../../host/security/jwt/verifier.ts";
import { type SigningKey, Clock, jwksOf, mint, signingKey } from "./support.ts";

// Envelope checks and messages from google/jwt_verify_lib (security.md §4.3).

const enc = (o: unknown) => base64url.encode(typeof o === "string" ? o : JSON.stringify(o));
const HDR = enc({ alg: "RS256", kid: "k" });
const PAY = enc({ iss: "i", sub: "s" });

describe("parseJwt", () => {
  const rows: Array<[string, string, string]> = [
    ["two parts", `${HDR}.${PAY}`, JWT_MESSAGES.JWT_BAD_FORMAT],
    ["four parts", `${HDR}.${PAY}.c2ln.x`, JWT_MESSAGES.JWT_BAD_FORMAT],
    ["empty signature", `${HDR}.${PAY}.`, JWT_MESSAGES.JWT_BAD_FORMAT],
    ["header not base64url", `a+b.${PAY}.c2ln`, JWT_MESSAGES.JWT_HEADER_BAD_BASE64],
    ["header not JSON", `${enc("{nope")}.${PAY}.c2ln`, JWT_MESSAGES.JWT_HEADER_BAD_JSON],
    ["header a JSON list", `${enc([1])}.${PAY}.c2ln`, JWT_MESSAGES.JWT_HEADER_BAD_JSON],
    ["alg missing", `${enc({ kid: "k" })}.${PAY}.c2ln`, JWT_MESSAGES.JWT_HEADER_BAD_ALG],
    ["alg a number", `${enc({ alg: 256 })}.${PAY}.c2ln`, JWT_MESSAGES.JWT_HEADER_BAD_ALG],
    ["alg none", `${enc({ alg: "none" })}.${PAY}.c2ln`, JWT_MESSAGES.JWT_HEADER_ALG_NOT_SUPPORTED],
    ["alg RS1", `${enc({ alg: "RS1" })}.${PAY}.c2ln`, JWT_MESSAGES.JWT_HEADER_ALG_NOT_SUPPORTED],
    ["kid a number", `${enc({ alg: "RS256", kid: 1 })}.${PAY}.c2ln`, JWT_MESSAGES.JWT_HEADER_BAD_KID],
    ["payload not base64url", `${HDR}.%%%.c2ln`, JWT_MESSAGES.JWT_PAYLOAD_BAD_BASE64],
    ["payload not JSON", `${HDR}.${enc("nope")}.c2ln`, JWT_MESSAGES.JWT_PAYLOAD_BAD_JSON],
    ["sub a number", `${HDR}.${enc({ sub: 1 })}.c2ln`, "Jwt payload [sub] field is not a string"],
    ["nbf a float", `${HDR}.${enc({ nbf: 1.5 })}.c2ln`, "Jwt payload [nbf] field is not an integer"],
    ["iat negative", `${HDR}.${enc({ iat: -1 })}.c2ln`, "Jwt payload [iat] field is not a positive 64 bit integer"],
    ["aud a number list", `${HDR}.${enc({ aud: [1] })}.c2ln`, "Jwt payload [aud] field is not a string or string list"],
    ["signature not base64url", `${HDR}.${PAY}.a+b`, JWT_MESSAGES.JWT_SIGNATURE_BAD_BASE64],
  ];
  for (const [name, token, message] of rows) {
    it(`refuses: ${name}`, () => {
      const r = parseJwt(token);
      assert.ok(isFailure(r));
      assert.equal(r.message, message);
      assert.equal(r.status, 401);
    });
  }
  it("accepts a well-formed envelope and keeps the payload segment", () => {
    const r = parseJwt(`${HDR}.${PAY}.c2ln`);
    assert.ok(!isFailure(r));
    assert.equal(r.payloadSegment, PAY);
    assert.equal(r.payload.iss, "i");
  });
});

describe("key types and algorithms", () => {
  it("each key type allows only its own algorithms; symmetric keys none", () => {
    assert.deepEqual(algorithmsForKey({ kty: "RSA" }), ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512"]);
    assert.deepEqual(algorithmsForKey({ kty: "RSA", alg: "RS256" }), ["RS256"]);
    assert.deepEqual(algorithmsForKey({ kty: "EC", crv: "P-256" }), ["ES256"]);
    assert.deepEqual(algorithmsForKey({ kty: "EC", crv: "P-384" }), ["ES384"]);
    assert.deepEqual(algorithmsForKey({ kty: "OKP", crv: "Ed25519" }), ["EdDSA"]);
    assert.deepEqual(algorithmsForKey({ kty: "oct" }), []);
  });

  it("audiences ignore http(s):// and a trailing slash; empty list = any", () => {
    assert.ok(audienceAllowed({ aud: "https://a.example/" }, ["a.example"]));
    assert.ok(audienceAllowed({ aud: ["x", "a.example"] }, ["http://a.example"]));
    assert.ok(!audienceAllowed({ aud: "b.example" }, ["a.example"]));
    assert.ok(audienceAllowed({}, []));
  });
});

describe("verifyToken", () => {
  const clock = new Clock();
  let rsa: SigningKey;
  let ed: SigningKey;
  let ps: SigningKey;
  before(async () => {
    [rsa, ed, ps] = await Promise.all([signingKey("RS256", "r"), signingKey("EdDSA", "e"), signingKey("PS256", "p")]);
  });

  it("EdDSA and PS256 tokens verify; a token without kid tries every key", async () => {
    const keySet = new InlineKeySet(jwksOf(rsa, ed, ps));
    const rules = [{ issuer: "i", audiences: [], keySet }];
    for (const k of [ed, ps, rsa]) {
      const r = await verifyToken(await mint(k, { iss: "i", sub: "s" }, clock), rules, { now: clock.now });
      assert.ok(r.ok, `${k.alg}: ${JSON.stringify(r)}`);
    }
    const twoRsa = new InlineKeySet(jwksOf(await signingKey("RS256", "other"), rsa));
    const noKid = await mint(rsa, { iss: "i", sub: "s" }, clock, { kid: undefined });
    assert.ok((await verifyToken(noKid, [{ issuer: "i", audiences: [], keySet: twoRsa }], { now: clock.now })).ok);
  });

  it("a token with a kid is also tried against keys without a kid (upstream key selection)", async () => {
    const { kid: _drop, ...noKid } = rsa.publicJwk;
    const keySet = new InlineKeySet({ keys: [noKid] });
    const r = await verifyToken(await mint(rsa, { iss: "i", sub: "s" }, clock), [{ issuer: "i", audiences: [], keySet }], { now: clock.now });
    assert.ok(r.ok, JSON.stringify(r));
    const rogue = await signingKey("RS256", "r");
    const bad = await verifyToken(await mint(rogue, { iss: "i", sub: "s" }, clock), [{ issuer: "i", audiences: [], keySet }], { now: clock.now });
    assert.ok(!bad.ok && bad.failure.message === JWT_MESSAGES.JWT_VERIFICATION_FAILED);
  });

  it("a PS256 token whose key says alg RS256 finds no key", async () => {
    const jwk = { ...ps.publicJwk, alg: "RS256" };
    const keySet = new InlineKeySet({ keys: [jwk] });
    const r = await verifyToken(await mint(ps, { iss: "i", sub: "s" }, clock), [{ issuer: "i", audiences: [], keySet }], { now: clock.now });
    assert.ok(!r.ok);
    assert.equal(r.failure.message, JWT_MESSAGES.JWKS_NO_MATCHING_KEY);
  });

  it("two rules with one issuer: a token passes when either accepts it (audiences combine permissively)", async () => {
    const keySet = new InlineKeySet(jwksOf(rsa));
    const rules = [
      { issuer: "i", audiences: ["only-this"], keySet },
      { issuer: "i", audiences: [], keySet },
    ];
    assert.ok((await verifyToken(await mint(rsa, { iss: "i", sub: "s" }, clock), rules, { now: clock.now })).ok);
  });
});
