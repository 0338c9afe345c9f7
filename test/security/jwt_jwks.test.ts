import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Authenticator, jwtRulesFor } from "../../host/security/jwt/authenticator.ts";
import { DEFAULT_JWKS_COOLDOWN_MS, type FetchLike, JwksCache, JwksError, RemoteKeySet } from "../../host/security/jwt/jwks.ts";
import { type SigningKey, Clock, JwksServer, catalogOf, jwksOf, mint, signingKey } from "./support.ts";

// Key-set fetching, caching and refetch on an unknown kid, against a real HTTP server; time is an injected clock.

const ISS = "testing@secure.mesh.io";
let key1: SigningKey;
let key2: SigningKey;
let key3: SigningKey;
const server = new JwksServer();

before(async () => {
  [key1, key2, key3] = await Promise.all([signingKey("RS256", "key-1"), signingKey("ES256", "key-2"), signingKey("RS256", "key-3")]);
  await server.start();
});
after(() => server.stop());

function fresh(): void {
  server.status = 200;
  server.body = jwksOf(key1);
}

describe("RemoteKeySet", () => {
  it("concurrent callers share one fetch; the set is cached until maxAge, then refetched", async () => {
    fresh();
    const clock = new Clock();
    const set = new RemoteKeySet(server.url, { now: clock.now, maxAgeMs: 60_000 });
    const start = server.requests;
    const all = await Promise.all(Array.from({ length: 10 }, () => set.keysFor({ kid: "key-1" })));
    assert.equal(server.requests - start, 1);
    assert.ok(all.every((k) => k === all[0]));
    clock.advance(59);
    await set.keysFor({ kid: "key-1" });
    assert.equal(server.requests - start, 1);
    clock.advance(1);
    await set.keysFor({ kid: "key-1" });
    assert.equal(server.requests - start, 2);
  });

  it("an unknown kid refetches at most once per cooldown", async () => {
    fresh();
    const clock = new Clock();
    const set = new RemoteKeySet(server.url, { now: clock.now, cooldownMs: 30_000 });
    const start = server.requests;
    await set.keysFor({ kid: "key-1" });
    server.body = jwksOf(key1, key2); // key-2 rotated in
    clock.advance(10);
    let keys = await set.keysFor({ kid: "key-2" });
    assert.equal(server.requests - start, 1, "inside the cooldown: no refetch");
    assert.ok(!keys.jwks.keys.some((k) => k.kid === "key-2"));
    clock.advance(21);
    keys = await set.keysFor({ kid: "key-2" });
    assert.equal(server.requests - start, 2);
    assert.ok(keys.jwks.keys.some((k) => k.kid === "key-2"));
    clock.advance(5);
    await set.keysFor({ kid: "key-9" });
    await set.keysFor({ kid: "key-9" });
    assert.equal(server.requests - start, 2, "unknown kid again inside the new cooldown: no refetch");
  });

  it("tokens arriving while a refetch is under way wait for it instead of being refused", async () => {
    fresh();
    const clock = new Clock();
    const set = new RemoteKeySet(server.url, { now: clock.now, cooldownMs: 1_000 });
    await set.keysFor({ kid: "key-1" });
    const start = server.requests;
    server.body = jwksOf(key1, key3);
    clock.advance(1);
    const all = await Promise.all(Array.from({ length: 5 }, () => set.keysFor({ kid: "key-3" })));
    assert.equal(server.requests - start, 1, "one refetch for all of them");
    assert.ok(all.every((k) => k.jwks.keys.some((j) => j.kid === "key-3")));
    assert.equal(set.stats.kidRefetches, 1);
  });

  it("a failed refresh keeps the last good set and is retried once per cooldown", async () => {
    fresh();
    const clock = new Clock();
    const set = new RemoteKeySet(server.url, { now: clock.now, maxAgeMs: 60_000, cooldownMs: 30_000 });
    const start = server.requests;
    const first = await set.keysFor({ kid: "key-1" });
    server.status = 500;
    clock.advance(61);
    assert.equal(await set.keysFor({ kid: "key-1" }), first);
    assert.equal(await set.keysFor({ kid: "key-1" }), first);
    assert.equal(server.requests - start, 2, "one failed refresh, not one per request");
    assert.equal(set.stats.fetchFailures, 1);
    clock.advance(30);
    server.status = 200;
    server.body = jwksOf(key1, key3);
    const next = await set.keysFor({ kid: "key-1" });
    assert.notEqual(next, first);
    assert.equal(next.jwks.keys.length, 2);
  });

  it("a set whose refreshes keep failing is dropped after maxStaleMs", async () => {
    fresh();
    const clock = new Clock();
    const set = new RemoteKeySet(server.url, { now: clock.now, maxAgeMs: 1_000, cooldownMs: 1_000, maxStaleMs: 10_000 });
    await set.keysFor({});
    server.status = 503;
    clock.advance(5);
    await set.keysFor({});
    clock.advance(7);
    await assert.rejects(set.keysFor({}), (e: unknown) => e instanceof JwksError && e.code === "JWKS_FETCH_FAILED");
  });

  it("a first fetch that fails throws, and is not retried inside the cooldown", async () => {
    server.status = 500;
    const clock = new Clock();
    const set = new RemoteKeySet(server.url, { now: clock.now, cooldownMs: 30_000 });
    const start = server.requests;
    await assert.rejects(set.keysFor({ kid: "key-1" }), (e: unknown) => e instanceof JwksError && e.code === "JWKS_FETCH_FAILED" && /HTTP 500/.test(e.message));
    await assert.rejects(set.keysFor({ kid: "key-1" }), JwksError);
    assert.equal(server.requests - start, 1);
    clock.advance(30);
    fresh();
    assert.equal((await set.keysFor({ kid: "key-1" })).jwks.keys.length, 1);
    assert.equal(server.requests - start, 2);
  });

  it("a body that is not a key set is refused", async () => {
    server.status = 200;
    server.body = { hello: "world" };
    const set = new RemoteKeySet(server.url, { now: new Clock().now });
    await assert.rejects(set.keysFor({}), (e: unknown) => e instanceof JwksError && e.code === "JWKS_INVALID");
    server.body = "<html>";
    await assert.rejects(new RemoteKeySet(server.url).keysFor({}), (e: unknown) => e instanceof JwksError && e.code === "JWKS_INVALID");
  });

  it("the fetch is injectable; a timeout is a fetch failure", async () => {
    const calls: string[] = [];
    const timeout: FetchLike = async (url, init) => {
      calls.push(url);
      assert.ok(init.signal instanceof AbortSignal);
      throw Object.assign(new Error("timed out"), { name: "TimeoutError" });
    };
    const set = new RemoteKeySet("https://keys.example/jwks.json", { fetch: timeout, timeoutMs: 5_000 });
    await assert.rejects(set.keysFor({}), (e: unknown) => e instanceof JwksError && /no answer within 5000 ms/.test(e.message));
    assert.deepEqual(calls, ["https://keys.example/jwks.json"]);
  });
});

describe("JwksCache and the authenticator", () => {
  it("key rotation with the default cooldown: the new key passes within seconds, the removed key stops at that refetch", async () => {
    assert.ok(DEFAULT_JWKS_COOLDOWN_MS >= 1_000 && DEFAULT_JWKS_COOLDOWN_MS <= 5_000, "a short cooldown by default");
    fresh();
    const clock = new Clock();
    const yaml = `
apiVersion: security.mesh.io/v1beta1
kind: RequestAuthentication
metadata: { name: jwt, namespace: foo }
spec:
  jwtRules: [{ issuer: "${ISS}", jwksUri: "${server.url}" }]
`;
    const rules = jwtRulesFor(catalogOf(yaml).byKind.RequestAuthentication, { namespace: "foo", labels: {} });
    const cache = new JwksCache({ now: clock.now });
    const authn = Authenticator.create(rules, { jwks: cache, now: clock.now });
    const req = (t: string) => ({
      method: "GET",
      path: "/",
      host: "h",
      scheme: "http",
      headers: [["authorization", `Bearer ${t}`]] as Array<[string, string]>,
    });
    const claims = () => ({ iss: ISS, sub: "alice", exp: clock.seconds + 600 });
    const outcome = async (key: SigningKey) => {
      const r = await authn.authenticate(req(await mint(key, claims(), clock)));
      return r.outcome === "denied" ? `${r.status} ${r.body}` : r.outcome;
    };
    const start = server.requests;
    assert.equal(await outcome(key1), "authenticated");
    server.body = jwksOf(key3); // key-3 published, key-1 withdrawn
    assert.equal(await outcome(key3), "401 Jwks doesn't have key to match kid or alg from Jwt", "inside the cooldown of the first fetch");
    assert.equal(await outcome(key1), "authenticated", "the cached set still holds key-1");
    clock.advance(DEFAULT_JWKS_COOLDOWN_MS / 1000);
    assert.equal(await outcome(key3), "authenticated", "the unknown kid refetched the set");
    assert.equal(await outcome(key1), "401 Jwks doesn't have key to match kid or alg from Jwt", "the withdrawn key is gone with the refetch");
    assert.equal(server.requests - start, 2);
    for (let i = 0; i < 20; i++) assert.match(await outcome(key2), /^401 /);
    assert.equal(server.requests - start, 2, "made-up kids inside the cooldown cost no fetch");
  });

  it("rules naming one URI share one key set", () => {
    const cache = new JwksCache();
    const a = cache.keySetFor({ jwksUri: "https://k/jwks.json" });
    assert.equal(cache.keySetFor({ jwksUri: "https://k/jwks.json" }), a);
    assert.notEqual(cache.keySetFor({ jwksUri: "https://k/other.json" }), a);
  });

  it("a token signed by a key rotated in after the first fetch passes once the cooldown allows a refetch", async () => {
    fresh();
    const clock = new Clock();
    const yaml = `
apiVersion: security.mesh.io/v1beta1
kind: RequestAuthentication
metadata: { name: jwt, namespace: foo }
spec:
  jwtRules: [{ issuer: "${ISS}", jwksUri: "${server.url}" }]
`;
    const rules = jwtRulesFor(catalogOf(yaml).byKind.RequestAuthentication, { namespace: "foo", labels: {} });
    const authn = Authenticator.create(rules, { jwks: new JwksCache({ now: clock.now, cooldownMs: 30_000 }), now: clock.now });
    const req = (t: string) => ({
      method: "GET",
      path: "/",
      host: "h",
      scheme: "http",
      headers: [["authorization", `Bearer ${t}`]] as Array<[string, string]>,
    });
    const claims = () => ({ iss: ISS, sub: "alice", exp: clock.seconds + 600 });
    assert.equal((await authn.authenticate(req(await mint(key1, claims(), clock)))).outcome, "authenticated");
    server.body = jwksOf(key1, key2);
    clock.advance(5);
    const early = await authn.authenticate(req(await mint(key2, claims(), clock)));
    assert.equal(early.outcome === "denied" && `${early.status} ${early.body}`, "401 Jwks doesn't have key to match kid or alg from Jwt");
    clock.advance(30);
    assert.equal((await authn.authenticate(req(await mint(key2, claims(), clock)))).outcome, "authenticated");
  });
});
