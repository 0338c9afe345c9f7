// Who may have which identity (caller_authentication.ts) and how tokens are read and checked
// (service_account_token.ts), in-process with real jose keys and an injected clock.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { authorizeCaller, authorizeImpersonation, bearerTokenOf } from "../../host/anchor/caller_authentication.ts";
import { parseTrustedNodeAccounts } from "../../host/anchor/options.ts";
import { AnchorConfigError, AnchorError } from "../../host/anchor/errors.ts";
import { ServiceAccountTokenVerifier, serviceAccountOfSubject, tokenSettingsFrom } from "../../host/anchor/service_account_token.ts";
import { parseSpiffeIdentity } from "../../host/anchor/spiffe.ts";
import { loadOrCreateIssuerKey, mintServiceAccountToken } from "../../host/anchor/token_issuer.ts";
import { tempDir } from "../support/processes.ts";

const NOW = Date.UTC(2026, 0, 1);
const fooBar = parseSpiffeIdentity("spiffe://cluster.local/ns/foo/sa/bar");

async function refusedWith(p: Promise<unknown>, code: string, message: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => e instanceof AnchorError && e.code === code && message.test(e.message));
}

describe("bearer tokens and subjects", () => {
  it("reads `Bearer <token>` (scheme case-insensitive), nothing else", () => {
    assert.equal(bearerTokenOf("Bearer abc.def.ghi"), "abc.def.ghi");
    assert.equal(bearerTokenOf("bearer  abc"), "abc");
    assert.equal(bearerTokenOf("Basic dXNlcjpwYXNz"), undefined);
    assert.equal(bearerTokenOf("Bearer"), undefined);
    assert.equal(bearerTokenOf(undefined), undefined);
  });

  it("takes namespace and service account from system:serviceaccount:<ns>:<sa> only", () => {
    assert.deepEqual(serviceAccountOfSubject("system:serviceaccount:foo:bar"), { namespace: "foo", serviceAccount: "bar" });
    for (const bad of ["foo:bar", "system:serviceaccount:foo", "system:serviceaccount:foo:bar:baz", "system:serviceaccount::bar", undefined]) {
      assert.equal(serviceAccountOfSubject(bad), undefined, String(bad));
    }
  });

  it("reads JWT_POLICY, TOKEN_ISSUER, AUDIENCE and TOKEN_JWKS (the flag wins)", () => {
    assert.deepEqual(tokenSettingsFrom({}, ""), { policy: "third-party-jwt", issuer: "", audiences: ["mesh-ca"], jwks: "" });
    assert.deepEqual(tokenSettingsFrom({ JWT_POLICY: "first-party-jwt", AUDIENCE: "x" }, "k.json"), {
      policy: "first-party-jwt",
      issuer: "",
      audiences: [],
      jwks: "k.json",
    });
    assert.deepEqual(tokenSettingsFrom({ AUDIENCE: "a, b", TOKEN_ISSUER: "iss", TOKEN_JWKS: "env.json" }, undefined), {
      policy: "third-party-jwt",
      issuer: "iss",
      audiences: ["a", "b"],
      jwks: "env.json",
    });
    assert.throws(() => tokenSettingsFrom({ JWT_POLICY: "none" }, ""), AnchorConfigError);
    assert.throws(() => tokenSettingsFrom({}, "ftp://keys"), /expected a file or an http\(s\) URL/);
  });
});

describe("authorizeCaller", async () => {
  const issuer = await loadOrCreateIssuerKey(tempDir("authz-caller-"));
  const verifier = new ServiceAccountTokenVerifier(
    { policy: "third-party-jwt", issuer: "mesh-token-issuer", audiences: ["mesh-ca"], jwks: issuer.jwksFile },
    () => NOW,
  );
  const token = (ns: string, sa: string, extra: object = {}) => mintServiceAccountToken(issuer, { namespace: ns, serviceAccount: sa, now: NOW, ...extra });

  it("accepts a token for exactly the CSR's namespace and service account", async () => {
    assert.equal(await authorizeCaller(fooBar, { bearerToken: await token("foo", "bar") }, verifier), "token");
  });

  it("refuses a token of another namespace or service account (IDENTITY_NOT_AUTHORIZED)", async () => {
    await refusedWith(
      authorizeCaller(fooBar, { bearerToken: await token("other", "bar") }, verifier),
      "IDENTITY_NOT_AUTHORIZED",
      /system:serviceaccount:other:bar may not ask for/,
    );
    await refusedWith(
      authorizeCaller(fooBar, { bearerToken: await token("foo", "admin") }, verifier),
      "IDENTITY_NOT_AUTHORIZED",
      /system:serviceaccount:foo:admin may not ask for/,
    );
  });

  it("refuses no credential, and a token when tokens are not configured (UNAUTHENTICATED)", async () => {
    await refusedWith(authorizeCaller(fooBar, {}, verifier), "UNAUTHENTICATED", /no credential/);
    await refusedWith(authorizeCaller(fooBar, { bearerToken: await token("foo", "bar") }, undefined), "UNAUTHENTICATED", /not configured/);
  });

  it("checks exp with 60 s of skew and nbf on the injected clock", async () => {
    const expiredLongAgo = await token("foo", "bar", { now: NOW - 2 * 3_600_000, ttlMs: 3_600_000 });
    await refusedWith(authorizeCaller(fooBar, { bearerToken: expiredLongAgo }, verifier), "UNAUTHENTICATED", /token is expired/);
    const justExpired = await token("foo", "bar", { now: NOW - 3_630_000, ttlMs: 3_600_000 });
    assert.equal(await authorizeCaller(fooBar, { bearerToken: justExpired }, verifier), "token", "30 s past exp is within the skew");
    const future = await token("foo", "bar", { now: NOW + 3_600_000 });
    await refusedWith(authorizeCaller(fooBar, { bearerToken: future }, verifier), "UNAUTHENTICATED", /claim nbf/);
  });

  it("a verified client certificate decides before any token", async () => {
    assert.equal(await authorizeCaller(fooBar, { verifiedCertificateUris: [fooBar.uri] }, verifier), "certificate");
    await refusedWith(
      authorizeCaller(fooBar, { verifiedCertificateUris: ["spiffe://cluster.local/ns/foo/sa/sleep"], bearerToken: await token("foo", "bar") }, verifier),
      "IDENTITY_NOT_AUTHORIZED",
      /the client certificate proves spiffe:\/\/cluster.local\/ns\/foo\/sa\/sleep; it may not ask for/,
    );
  });
});

describe("a registration authority asking on a workload's behalf (ImpersonatedIdentity)", () => {
  const trusted = new Set(["mesh-system/disco-discovery"]);
  const disco = { verifiedCertificateUris: ["spiffe://cluster.local/ns/mesh-system/sa/disco-discovery"] };

  it("is allowed for a trusted caller proven by its certificate, for exactly the CSR's identity", () => {
    assert.equal(authorizeImpersonation(fooBar, fooBar.uri, disco, trusted), "registration-authority");
  });

  it("is refused without a certificate, for an untrusted caller, or for another identity than the CSR's", () => {
    const refused = (f: () => unknown, code: string, message: RegExp) =>
      assert.throws(f, (e: unknown) => e instanceof AnchorError && e.code === code && message.test(e.message));
    refused(() => authorizeImpersonation(fooBar, fooBar.uri, { bearerToken: "t" }, trusted), "UNAUTHENTICATED", /client certificate/);
    refused(
      () => authorizeImpersonation(fooBar, fooBar.uri, { verifiedCertificateUris: ["spiffe://cluster.local/ns/foo/sa/bar"] }, trusted),
      "IDENTITY_NOT_AUTHORIZED",
      /not a trusted node account .*mesh-system\/disco-discovery/,
    );
    refused(() => authorizeImpersonation(fooBar, fooBar.uri, disco, new Set()), "IDENTITY_NOT_AUTHORIZED", /none/);
    refused(
      () => authorizeImpersonation(fooBar, "spiffe://cluster.local/ns/foo/sa/admin", disco, trusted),
      "IDENTITY_NOT_AUTHORIZED",
      /differs from the identity the CSR asks for/,
    );
  });

  it("--trusted-node-accounts takes <namespace>/<service-account> entries, naming a bad one", () => {
    assert.deepEqual(parseTrustedNodeAccounts(" mesh-system/disco-discovery, a/b ", "--trusted-node-accounts"), ["mesh-system/disco-discovery", "a/b"]);
    assert.deepEqual(parseTrustedNodeAccounts("", "CA_TRUSTED_NODE_ACCOUNTS"), []);
    assert.throws(
      () => parseTrustedNodeAccounts("disco-discovery", "CA_TRUSTED_NODE_ACCOUNTS"),
      (e: unknown) => e instanceof AnchorConfigError && /CA_TRUSTED_NODE_ACCOUNTS: expected <namespace>\/<service-account>/.test((e as Error).message),
    );
  });
});
