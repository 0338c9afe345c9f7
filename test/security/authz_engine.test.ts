import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AuthorizationEngine, RBAC_DENIED_BODY, authorizationPoliciesFor } from "../../host/security/authz/engine.ts";
import type { AuthzRequest } from "../../host/security/authz/matcher.ts";
import { normalizePath } from "../../host/security/authz/path.ts";
import { catalogOf } from "./support.ts";

// Spec rules 12–13 and upstream AuthorizationPolicy semantics (security.md §5).

const workload = { namespace: "foo", labels: { app: "httpbin" } };

function policy(name: string, spec: Record<string, unknown>, namespace = "foo"): string {
  return `---
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: { name: ${name}, namespace: ${namespace} }
spec: ${JSON.stringify(spec)}
`;
}

function engine(...docs: string[]): AuthorizationEngine {
  const c = catalogOf(docs.join("\n"));
  return AuthorizationEngine.create(authorizationPoliciesFor(c.byKind.AuthorizationPolicy, workload));
}

function req(over: Partial<AuthzRequest> = {}): AuthzRequest {
  return { method: "GET", path: "/ip", host: "httpbin.foo:8000", headers: [], sourceIp: "10.0.0.5", destinationPort: 80, ...over };
}

const selector = { matchLabels: { app: "httpbin" } };
const PRINCIPAL = "testing@secure.mesh.io/testing@secure.mesh.io";

describe("rules 12 and 13", () => {
  const rule12 = policy("require-jwt", { selector, action: "DENY", rules: [{ from: [{ source: { notRequestPrincipals: ["*"] } }] }] });
  const rule13 = policy("require-jwt-headers", {
    selector,
    action: "DENY",
    rules: [{ from: [{ source: { notRequestPrincipals: ["*"] } }], to: [{ operation: { paths: ["/headers"] } }] }],
  });

  it("rule 12: DENY notRequestPrincipals [*] without a valid token → 403 RBAC: access denied, naming policy and rule", () => {
    const d = engine(rule12).evaluate(req());
    assert.deepEqual(d, {
      allowed: false,
      policy: "foo/require-jwt",
      ruleIndex: 0,
      action: "DENY",
      reason: "denied_by_policy",
      status: 403,
      body: RBAC_DENIED_BODY,
    });
    assert.equal(RBAC_DENIED_BODY, "RBAC: access denied");
  });

  it("rule 12: with a request principal → allowed (no ALLOW policy)", () => {
    const d = engine(rule12).evaluate(req({ requestPrincipal: PRINCIPAL }));
    assert.deepEqual(d, { allowed: true, policy: null, ruleIndex: null, action: null, reason: "no_allow_policy" });
  });

  const rows: Array<[string, string, boolean]> = [
    ["/headers", "the listed path", false],
    ["/headers?a=1", "query ignored", false],
    ["/ip", "another path", true],
    ["/Headers", "paths are case-sensitive", true],
    ["/headers/", "trailing slash is another path", true],
    ["/ip/../headers", "dot segments removed first", false],
    ["/%68eaders", "unreserved percent-encoding decoded first", false],
    ["/a/%2E%2E/headers", "encoded dot segments", false],
    ["\\headers", "backslash is a slash", false],
    ["/./headers#frag", "fragment dropped", false],
  ];
  // The sidecar normalizes once at the listener edge; the engine decides on that path.
  for (const [path, why, allowed] of rows) {
    it(`rule 13: ${path} (${why}) → ${allowed ? "allowed" : "403"}`, () => {
      const normalized = normalizePath(path);
      assert.ok(normalized.ok);
      assert.equal(engine(rule13).evaluate(req({ path: normalized.path })).allowed, allowed);
    });
  }
});

describe("evaluation order and policy shapes", () => {
  it("DENY is evaluated before ALLOW", () => {
    const e = engine(
      policy("allow-all", { action: "ALLOW", rules: [{}] }),
      policy("deny-post", { action: "DENY", rules: [{ to: [{ operation: { methods: ["POST"] } }] }] }),
    );
    assert.equal(e.evaluate(req({ method: "POST" })).policy, "foo/deny-post");
    const ok = e.evaluate(req());
    assert.deepEqual([ok.allowed, ok.policy, ok.ruleIndex, ok.reason], [true, "foo/allow-all", 0, "allowed_by_policy"]);
  });

  it("with ALLOW policies a request matching none → 403 (no_allow_policy_matched)", () => {
    const d = engine(policy("allow-get", { action: "ALLOW", rules: [{ to: [{ operation: { methods: ["GET"] } }] }] })).evaluate(req({ method: "PUT" }));
    assert.deepEqual(d, {
      allowed: false,
      policy: null,
      ruleIndex: null,
      action: null,
      reason: "no_allow_policy_matched",
      status: 403,
      body: RBAC_DENIED_BODY,
    });
  });

  it("ALLOW without rules and spec {} allow nothing; DENY without rules does nothing; rules [{}] match everything", () => {
    assert.equal(engine(policy("nothing", { action: "ALLOW" })).evaluate(req()).allowed, false);
    assert.equal(engine(policy("empty", {})).evaluate(req()).allowed, false);
    assert.equal(engine(policy("noop", { action: "DENY" })).evaluate(req()).allowed, true);
    assert.equal(engine(policy("deny-all", { action: "DENY", rules: [{}] })).evaluate(req()).allowed, false);
  });

  it("rules are ORed (the index of the first matching rule is reported); fields are ANDed", () => {
    const e = engine(
      policy("p", {
        action: "DENY",
        rules: [{ to: [{ operation: { methods: ["DELETE"], paths: ["/admin*"] } }] }, { to: [{ operation: { paths: ["/secret"] } }] }],
      }),
    );
    assert.equal(e.evaluate(req({ method: "DELETE", path: "/admin/x" })).ruleIndex, 0);
    assert.equal(e.evaluate(req({ method: "GET", path: "/admin/x" })).allowed, true, "method and path are ANDed");
    assert.equal(e.evaluate(req({ path: "/secret" })).ruleIndex, 1);
  });

  it("entries of from are ORed, and from/to/when are ANDed", () => {
    const e = engine(
      policy("p", {
        action: "DENY",
        rules: [
          {
            from: [{ source: { namespaces: ["bar"] } }, { source: { ipBlocks: ["192.168.0.0/16"] } }],
            to: [{ operation: { paths: ["/x"] } }],
            when: [{ key: "request.headers[x-env]", values: ["prod"] }],
          },
        ],
      }),
    );
    const env: Array<[string, string]> = [["x-env", "prod"]];
    assert.equal(e.evaluate(req({ path: "/x", headers: env, peerPrincipal: "cluster.local/ns/bar/sa/sleep" })).allowed, false);
    assert.equal(e.evaluate(req({ path: "/x", headers: env, sourceIp: "192.168.3.4" })).allowed, false);
    assert.equal(e.evaluate(req({ path: "/x", headers: env })).allowed, true, "no source entry matches");
    assert.equal(e.evaluate(req({ path: "/x", sourceIp: "192.168.3.4" })).allowed, true, "when does not hold");
    assert.equal(e.evaluate(req({ path: "/y", headers: env, sourceIp: "192.168.3.4" })).allowed, true, "to does not match");
  });

  it("policies apply from the workload's namespace and the root namespace, by selector", () => {
    const c = catalogOf(
      [
        policy("mesh-wide", { action: "DENY", rules: [{}] }, "mesh-system"),
        policy("root-selector", { selector: { matchLabels: { app: "httpbin" } }, action: "DENY", rules: [{}] }, "mesh-system"),
        policy("other-ns", { action: "DENY", rules: [{}] }, "bar"),
        policy("other-app", { selector: { matchLabels: { app: "reviews" } }, action: "DENY", rules: [{}] }),
      ].join("\n"),
    );
    assert.deepEqual(
      authorizationPoliciesFor(c.byKind.AuthorizationPolicy, workload).map((p) => p.name),
      ["mesh-wide", "root-selector"],
    );
  });
});

describe("matching forms", () => {
  const deny = (operation: Record<string, unknown>) => engine(policy("p", { action: "DENY", rules: [{ to: [{ operation }] }] }));
  const table: Array<[string, Record<string, unknown>, Partial<AuthzRequest>, boolean]> = [
    ["exact path", { paths: ["/a"] }, { path: "/a" }, true],
    ["exact path, other", { paths: ["/a"] }, { path: "/ab" }, false],
    ["prefix abc*", { paths: ["/api/*"] }, { path: "/api/v1" }, true],
    ["prefix abc*, other", { paths: ["/api/*"] }, { path: "/apix" }, false],
    ["suffix *abc", { paths: ["*.png"] }, { path: "/img/a.png" }, true],
    ["suffix *abc, other", { paths: ["*.png"] }, { path: "/img/a.jpg" }, false],
    ["presence *", { paths: ["*"] }, { path: "/anything" }, true],
    ["methods exact (case-sensitive)", { methods: ["GET"] }, { method: "get" }, false],
    ["methods prefix", { methods: ["P*"] }, { method: "PATCH" }, true],
    ["hosts case-insensitive", { hosts: ["HTTPBIN.foo:8000"] }, { host: "httpbin.FOO:8000" }, true],
    ["hosts include the port the client sent", { hosts: ["httpbin.foo"] }, { host: "httpbin.foo:8000" }, false],
    ["hosts suffix", { hosts: ["*.foo:8000"] }, { host: "httpbin.foo:8000" }, true],
    ["ports are container ports", { ports: ["80"] }, { destinationPort: 80 }, true],
    ["ports: the service port does not match", { ports: ["8000"] }, { destinationPort: 80 }, false],
    ["notPaths", { notPaths: ["/healthz"] }, { path: "/healthz" }, false],
    ["notPaths, other path", { notPaths: ["/healthz"] }, { path: "/x" }, true],
    ["notMethods", { notMethods: ["GET", "HEAD"] }, { method: "POST" }, true],
    ["notHosts", { notHosts: ["*.internal"] }, { host: "a.internal" }, false],
    ["notPorts", { notPorts: [80] }, { destinationPort: 8080 }, true],
    ["paths and notPaths both", { paths: ["/api/*"], notPaths: ["/api/public*"] }, { path: "/api/public/x" }, false],
    ["paths and notPaths both, private", { paths: ["/api/*"], notPaths: ["/api/public*"] }, { path: "/api/private" }, true],
  ];
  for (const [name, operation, over, matches] of table) {
    it(`${name} → ${matches ? "matches" : "no match"}`, () => {
      assert.equal(deny(operation).evaluate(req(over)).allowed, !matches);
    });
  }

  const source = (s: Record<string, unknown>) => engine(policy("p", { action: "DENY", rules: [{ from: [{ source: s }] }] }));
  const peer = "cluster.local/ns/bar/sa/sleep";
  const sources: Array<[string, Record<string, unknown>, Partial<AuthzRequest>, boolean]> = [
    ["principals exact", { principals: [peer] }, { peerPrincipal: peer }, true],
    ["principals on plain text (no peer identity)", { principals: ["*"] }, {}, false],
    ["notPrincipals [*] on plain text", { notPrincipals: ["*"] }, {}, true],
    ["notPrincipals [*] on mTLS", { notPrincipals: ["*"] }, { peerPrincipal: peer }, false],
    ["principals suffix", { principals: ["*/sa/sleep"] }, { peerPrincipal: peer }, true],
    ["namespaces", { namespaces: ["bar"] }, { peerPrincipal: peer }, true],
    ["namespaces, other", { namespaces: ["foo"] }, { peerPrincipal: peer }, false],
    ["notNamespaces", { notNamespaces: ["foo"] }, { peerPrincipal: peer }, true],
    ["notNamespaces on plain text", { notNamespaces: ["foo"] }, {}, true],
    ["requestPrincipals exact", { requestPrincipals: [PRINCIPAL] }, { requestPrincipal: PRINCIPAL }, true],
    ["requestPrincipals issuer prefix", { requestPrincipals: ["testing@secure.mesh.io/*"] }, { requestPrincipal: PRINCIPAL }, true],
    ["requestPrincipals [*] without token", { requestPrincipals: ["*"] }, {}, false],
    ["notRequestPrincipals exact", { notRequestPrincipals: [PRINCIPAL] }, { requestPrincipal: PRINCIPAL }, false],
    ["ipBlocks v4 CIDR", { ipBlocks: ["10.0.0.0/24"] }, { sourceIp: "10.0.0.5" }, true],
    ["ipBlocks v4 CIDR, outside", { ipBlocks: ["10.0.1.0/24"] }, { sourceIp: "10.0.0.5" }, false],
    ["ipBlocks v4 address", { ipBlocks: ["10.0.0.5"] }, { sourceIp: "10.0.0.5" }, true],
    ["ipBlocks v4-mapped peer address", { ipBlocks: ["10.0.0.0/8"] }, { sourceIp: "::ffff:10.0.0.5" }, true],
    ["ipBlocks v6 CIDR", { ipBlocks: ["2001:db8::/32"] }, { sourceIp: "2001:db8:1::7" }, true],
    ["ipBlocks v6 CIDR, outside", { ipBlocks: ["2001:db8::/32"] }, { sourceIp: "2001:db9::7" }, false],
    ["ipBlocks v6 vs a v4 peer", { ipBlocks: ["::/0"] }, { sourceIp: "10.0.0.5" }, false],
    ["notIpBlocks", { notIpBlocks: ["10.0.0.0/8"] }, { sourceIp: "192.168.1.1" }, true],
    ["notIpBlocks, inside", { notIpBlocks: ["10.0.0.0/8"] }, { sourceIp: "10.1.1.1" }, false],
    ["remoteIpBlocks use the original client address", { remoteIpBlocks: ["203.0.113.0/24"] }, { sourceIp: "10.0.0.5", remoteIp: "203.0.113.9" }, true],
    ["fields of one source are ANDed", { namespaces: ["bar"], ipBlocks: ["10.9.0.0/16"] }, { peerPrincipal: peer, sourceIp: "10.0.0.5" }, false],
  ];
  for (const [name, s, over, matches] of sources) {
    it(`${name} → ${matches ? "matches" : "no match"}`, () => {
      assert.equal(source(s).evaluate(req(over)).allowed, !matches);
    });
  }

  const when = (w: Record<string, unknown>) => engine(policy("p", { action: "DENY", rules: [{ when: [w] }] }));
  const payload = { iss: "i", sub: "s", aud: ["a1", "a2"], azp: "web", groups: ["dev", "ops"], scope: "read write", org: { team: "blue" }, level: 3 };
  const conditions: Array<[string, Record<string, unknown>, Partial<AuthzRequest>, boolean]> = [
    ["request.headers exact", { key: "request.headers[X-Env]", values: ["prod"] }, { headers: [["x-env", "prod"]] }, true],
    ["request.headers absent", { key: "request.headers[x-env]", values: ["*"] }, {}, false],
    ["request.headers notValues absent", { key: "request.headers[x-env]", notValues: ["prod"] }, {}, true],
    ["request.auth.claims list", { key: "request.auth.claims[groups]", values: ["ops"] }, { authPayload: payload }, true],
    ["request.auth.claims nested", { key: "request.auth.claims[org][team]", values: ["blue"] }, { authPayload: payload }, true],
    ["request.auth.claims scope split on spaces", { key: "request.auth.claims[scope]", values: ["write"] }, { authPayload: payload }, true],
    ["request.auth.claims number", { key: "request.auth.claims[level]", values: ["3"] }, { authPayload: payload }, true],
    ["request.auth.claims notValues", { key: "request.auth.claims[groups]", notValues: ["admin"] }, { authPayload: payload }, true],
    ["request.auth.claims without token", { key: "request.auth.claims[groups]", values: ["*"] }, {}, false],
    ["request.auth.audiences", { key: "request.auth.audiences", values: ["a2"] }, { authPayload: payload }, true],
    ["request.auth.presenter", { key: "request.auth.presenter", values: ["web"] }, { authPayload: payload }, true],
    ["request.auth.principal", { key: "request.auth.principal", values: ["i/s"] }, { requestPrincipal: "i/s" }, true],
    ["source.ip", { key: "source.ip", values: ["10.0.0.0/8"] }, {}, true],
    ["source.ip notValues", { key: "source.ip", notValues: ["10.0.0.0/8"] }, {}, false],
    ["remote.ip", { key: "remote.ip", values: ["203.0.113.9"] }, { remoteIp: "203.0.113.9" }, true],
    ["destination.ip", { key: "destination.ip", values: ["fd00::/8"] }, { destinationIp: "fd00::1" }, true],
    ["destination.port", { key: "destination.port", values: ["80"] }, {}, true],
    ["source.namespace", { key: "source.namespace", values: ["bar"] }, { peerPrincipal: peer }, true],
    ["source.principal", { key: "source.principal", values: [peer] }, { peerPrincipal: peer }, true],
    ["connection.sni", { key: "connection.sni", values: ["*.foo.svc.cluster.local"] }, { sni: "outbound_.8000_._.httpbin.foo.svc.cluster.local" }, true],
    ["values and notValues both", { key: "request.auth.claims[groups]", values: ["dev"], notValues: ["ops"] }, { authPayload: payload }, false],
  ];
  for (const [name, w, over, holds] of conditions) {
    it(`when ${name} → ${holds ? "holds" : "does not hold"}`, () => {
      assert.equal(when(w).evaluate(req(over)).allowed, !holds);
    });
  }
});

describe("AUDIT and CUSTOM (security.md §5.1: CUSTOM → DENY → ALLOW; AUDIT only marks)", () => {
  const audit = policy("audit-admin", { selector, action: "AUDIT", rules: [{ to: [{ operation: { paths: ["/admin*"] } }] }] });
  const deny = policy("deny-admin-delete", { selector, action: "DENY", rules: [{ to: [{ operation: { methods: ["DELETE"], paths: ["/admin*"] } }] }] });
  const allowGet = policy("allow-get", { selector, action: "ALLOW", rules: [{ to: [{ operation: { methods: ["GET"] } }] }] });

  it("an AUDIT match marks the decision and never changes it", () => {
    const e = engine(audit, deny, allowGet);
    assert.deepEqual(e.evaluate(req({ path: "/admin/x" })), {
      allowed: true,
      policy: "foo/allow-get",
      ruleIndex: 0,
      action: "ALLOW",
      reason: "allowed_by_policy",
      audited: { policy: "foo/audit-admin", ruleIndex: 0 },
    });
    assert.deepEqual(e.evaluate(req({ method: "DELETE", path: "/admin/x" })), {
      allowed: false,
      policy: "foo/deny-admin-delete",
      ruleIndex: 0,
      action: "DENY",
      reason: "denied_by_policy",
      status: 403,
      body: RBAC_DENIED_BODY,
      audited: { policy: "foo/audit-admin", ruleIndex: 0 },
    });
    assert.equal(e.evaluate(req({ method: "POST", path: "/admin" })).allowed, false, "no ALLOW matched: denied, and audited");
    assert.equal(e.evaluate(req({ path: "/ip" })).audited, undefined);
    // A workload with only AUDIT policies: everything allowed, as without policies.
    assert.deepEqual(engine(audit).evaluate(req({ method: "DELETE", path: "/admin" })), {
      allowed: true,
      policy: null,
      ruleIndex: null,
      action: null,
      reason: "no_allow_policy",
      audited: { policy: "foo/audit-admin", ruleIndex: 0 },
    });
    assert.deepEqual(engine(audit).size, { custom: 0, audit: 1, deny: 0, allow: 0 });
  });

  const custom = (name: string, provider: string, paths: string[]) =>
    policy(name, { selector, action: "CUSTOM", provider: { name: provider }, rules: [{ to: [{ operation: { paths } }] }] });

  it("CUSTOM: only the requests its rules match go to the provider; CUSTOM never takes part in evaluate", () => {
    const e = engine(custom("ext-authz", "sample-ext-authz-http", ["/headers"]), deny);
    assert.deepEqual(e.custom(req({ path: "/headers" })), { kind: "ask", provider: "sample-ext-authz-http", match: { policy: "foo/ext-authz", ruleIndex: 0 } });
    assert.deepEqual(e.custom(req({ path: "/ip" })), { kind: "none" });
    assert.deepEqual(e.evaluate(req({ path: "/headers" })), { allowed: true, policy: null, ruleIndex: null, action: null, reason: "no_allow_policy" });
    assert.deepEqual(e.customProviders, ["sample-ext-authz-http"]);
  });

  it("CUSTOM policies naming two providers for one workload: what they match is denied (upstream's deny-all), the rest is not", () => {
    const e = engine(custom("a", "one", ["/a"]), custom("b", "two", ["/b"]));
    const c = e.custom(req({ path: "/b" }));
    assert.equal(c.kind, "invalid");
    assert.match(c.kind === "invalid" ? c.why : "", /only one extension provider .* one, two/);
    assert.deepEqual(e.custom(req({ path: "/c" })), { kind: "none" });
  });
});
