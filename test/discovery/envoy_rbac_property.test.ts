// Property test: for AuthorizationPolicies drawn from every field and
// condition key the decoder accepts, and requests drawn from the same small
// vocabulary (so that matches are frequent), the RBAC filters served to
// Envoy, encoded and decoded with Envoy's v3 protos and read with Envoy's
// RBAC semantics, allow exactly the requests our authorization engine
// (host/security/authz) allows. PROPERTY_RUNS=<n> draws more (default 400).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { Resource } from "../../host/config/catalog.ts";
import type { AuthzCondition, AuthzOperation, AuthzRule, AuthzSource } from "../../host/config/resources/security.ts";
import { httpRbacFilters } from "../../host/discovery/envoy_rbac.ts";
import { AuthorizationEngine } from "../../host/security/authz/engine.ts";
import type { AuthzRequest } from "../../host/security/authz/matcher.ts";
import { packJson } from "../../host/wire/envoy_protos.ts";
import { decodeAnyStrict, envoyRoot } from "../support/envoy_protos.ts";
import { matchingPolicy, rbacAllows } from "./support/envoy_rbac_eval.ts";

const PRINCIPALS = ["cluster.local/ns/a/sa/x", "cluster.local/ns/a/*", "*/sa/x", "*"];
const NAMESPACES = ["a", "ab", "a*", "*b", "*"];
const REQUEST_PRINCIPALS = ["iss1/u1", "iss1/*", "*/u1", "https://i/t/u1", "https://i/*", "*t/u1", "*"];
const IPS = ["10.0.0.0/8", "10.1.2.3", "192.168.0.0/16"];
const HOSTS = ["Web.A", "*.a", "web*", "*"];
const METHODS = ["GET", "POST"];
const PATHS = ["/x", "/x/*", "*/y", "*"];
const PORTS = [80, 8080];
const VALUES: Record<string, readonly string[]> = {
  "request.headers[x-k]": ["v1", "v*", "*"],
  "source.ip": IPS,
  "remote.ip": IPS,
  "source.namespace": NAMESPACES,
  "source.principal": PRINCIPALS,
  "request.auth.principal": REQUEST_PRINCIPALS,
  "request.auth.audiences": ["aud1", "aud*"],
  "request.auth.presenter": ["app1", "*"],
  "request.auth.claims[groups]": ["g1", "g*"],
  "request.auth.claims[scope]": ["read", "write"],
  "request.auth.claims[nested][k]": ["v", "*"],
  "destination.ip": ["10.9.0.0/16", "10.9.9.9"],
  "destination.port": ["80", "8080"],
  "connection.sni": ["web.a", "*.a"],
};

const list = <T>(values: readonly T[]) => fc.subarray([...values], { minLength: 1, maxLength: 2 });
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 3 });

/** An object with the fields that are present (the decoder's form: absent fields are undefined, present ones non-empty). */
function present<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

const source: fc.Arbitrary<AuthzSource> = fc
  .record({
    principals: maybe(list(PRINCIPALS)),
    notPrincipals: maybe(list(PRINCIPALS)),
    requestPrincipals: maybe(list(REQUEST_PRINCIPALS)),
    notRequestPrincipals: maybe(list(REQUEST_PRINCIPALS)),
    namespaces: maybe(list(NAMESPACES)),
    notNamespaces: maybe(list(NAMESPACES)),
    ipBlocks: maybe(list(IPS)),
    notIpBlocks: maybe(list(IPS)),
    remoteIpBlocks: maybe(list(IPS)),
    notRemoteIpBlocks: maybe(list(IPS)),
  })
  .map(present)
  .filter((s) => Object.keys(s).length > 0);

const operation: fc.Arbitrary<AuthzOperation> = fc
  .record({
    hosts: maybe(list(HOSTS)),
    notHosts: maybe(list(HOSTS)),
    ports: maybe(list(PORTS)),
    notPorts: maybe(list(PORTS)),
    methods: maybe(list(METHODS)),
    notMethods: maybe(list(METHODS)),
    paths: maybe(list(PATHS)),
    notPaths: maybe(list(PATHS)),
  })
  .map(present)
  .filter((o) => Object.keys(o).length > 0);

const condition: fc.Arbitrary<AuthzCondition> = fc
  .constantFrom(...Object.keys(VALUES))
  .chain((key) => fc.record({ key: fc.constant(key), values: maybe(list(VALUES[key])), notValues: maybe(list(VALUES[key])) }))
  .map(present)
  .filter((c) => c.values !== undefined || c.notValues !== undefined);

const rule: fc.Arbitrary<AuthzRule> = fc.record({
  from: fc.array(source, { maxLength: 2 }),
  to: fc.array(operation, { maxLength: 2 }),
  when: fc.array(condition, { maxLength: 2 }),
});

const policy = (i: number) =>
  fc
    .record({ action: fc.constantFrom("ALLOW" as const, "DENY" as const, "AUDIT" as const), rules: fc.array(rule, { maxLength: 2 }) })
    .map((spec) => ({ kind: "AuthorizationPolicy", name: `p${i}`, namespace: "a", spec }) as unknown as Resource<"AuthorizationPolicy">);

const policies = fc.integer({ min: 1, max: 3 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => policy(i))));

const payload = fc.option(
  fc.record({
    iss: fc.constantFrom("iss1", "https://i/t", "https://i", "other"),
    sub: fc.constantFrom("u1", "u2", "t/u1"),
    aud: fc.constantFrom("aud1", "aud2", ["aud2", "aud1"]),
    azp: fc.constantFrom("app1", "app2"),
    groups: fc.constantFrom(["g1"], ["g2", "g3"], "g1"),
    scope: fc.constantFrom("read write", "write", "read"),
    nested: fc.constantFrom({ k: "v" }, { k: "w" }, {}),
  }),
  { nil: undefined },
);

const request: fc.Arbitrary<AuthzRequest> = fc
  .record({
    method: fc.constantFrom(...METHODS, "PUT"),
    path: fc.constantFrom("/x", "/x/y", "/z/y?q=1", "/", "/xy"),
    host: fc.constantFrom("web.a", "WEB.A:80", "api.b", "web"),
    headers: fc.constantFrom(
      [],
      [["x-k", "v1"]],
      [
        ["x-k", "v2"],
        ["x-k", "v1"],
      ],
      [["x-k", "w"]],
    ) as fc.Arbitrary<Array<[string, string]>>,
    sourceIp: fc.constantFrom("10.1.2.3", "192.168.1.1", "8.8.8.8"),
    remoteIp: fc.constantFrom(undefined, "10.1.2.3", "8.8.8.8"),
    destinationIp: fc.constantFrom("10.9.9.9", "10.9.1.1", "10.8.0.1"),
    destinationPort: fc.constantFrom(...PORTS, 9090),
    sni: fc.constantFrom(undefined, "web.a", "x.a", "b"),
    peerPrincipal: fc.constantFrom(undefined, "cluster.local/ns/a/sa/x", "cluster.local/ns/ab/sa/y", "cluster.local/ns/b/sa/x"),
    authPayload: payload,
  })
  .map((r) => present({ ...r, requestPrincipal: r.authPayload ? `${r.authPayload.iss}/${r.authPayload.sub}` : undefined }) as AuthzRequest);

describe("RBAC served to Envoy against our authorization engine", () => {
  it("allows exactly what the engine allows, for policies over every field and condition key", () => {
    const root = envoyRoot();
    const reasons = new Set<string>();
    let audits = 0;
    fc.assert(
      fc.property(policies, fc.array(request, { minLength: 1, maxLength: 8 }), (ps, requests) => {
        const engine = AuthorizationEngine.create(ps);
        // What Envoy gets: each filter encoded with Envoy's protos and decoded strictly.
        const filters = httpRbacFilters(ps).map((f: any) => {
          const { "@type": type, ...config } = f.typed_config;
          const any = packJson(type.slice(type.lastIndexOf("/") + 1), config);
          return { name: f.name, typed_config: decodeAnyStrict(root, any).object };
        });
        // AUDIT never changes a decision: the same policies without them decide the same.
        const withoutAudit = AuthorizationEngine.create(ps.filter((p) => p.spec.action !== "AUDIT"));
        const log = filters.find((f) => f.typed_config.rules?.action === "LOG");
        for (const r of requests) {
          const decision = engine.evaluate(r);
          reasons.add(decision.reason);
          assert.equal(rbacAllows(filters, r), decision.allowed, JSON.stringify(r));
          const { audited, ...rest } = decision;
          assert.deepEqual(rest, withoutAudit.evaluate(r), JSON.stringify(r));
          // Envoy's LOG filter marks exactly the requests the engine audits.
          assert.equal(log !== undefined && matchingPolicy(log.typed_config.rules, r) !== undefined, audited !== undefined, JSON.stringify(r));
          if (audited) audits++;
        }
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 400) },
    );
    // The draw reaches every kind of decision: denied by a DENY rule, allowed by an ALLOW rule, no ALLOW rule matching, no ALLOW policy.
    assert.deepEqual([...reasons].sort(), ["allowed_by_policy", "denied_by_policy", "no_allow_policy", "no_allow_policy_matched"]);
    assert.ok(audits > 0, "some requests were audited");
  });
});
