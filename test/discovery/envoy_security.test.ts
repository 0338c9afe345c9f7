import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import type protobuf from "protobufjs";
import { filterChecks } from "../../host/config/catalog.ts";
import { parseDocuments } from "../../host/config/documents.ts";
import { meshSnapshot, resourcesFor } from "../../host/discovery/mesh_snapshot.ts";
import { CLUSTER, LISTENER } from "../../host/discovery/type_urls.ts";
import { envoyBootstrap } from "../../host/discovery/envoy_bootstrap.ts";
import { DEFAULT_DOMAIN } from "../../host/mesh/hosts.ts";
import { loadDocuments } from "../../host/config/config_dir.ts";
import { AuthorizationEngine, authorizationPoliciesFor } from "../../host/security/authz/engine.ts";
import type { AuthzRequest } from "../../host/security/authz/matcher.ts";
import { FilterModule } from "../../host/wasm/filter_module.ts";
import { decodeAnyStrict, decodeStrict, envoyRoot } from "../support/envoy_protos.ts";
import { matchingPolicy, rbacAllows } from "./support/envoy_rbac_eval.ts";
import { type ExtensionProviders, decodeExtensionProviders } from "../../host/config/extension_providers.ts";
import { Field } from "../../host/config/decode.ts";
import { parseYaml } from "../../host/config/yaml.ts";
import { EXT_AUTHZ_MESH_CONFIG } from "../support/ext_authz_sample.ts";

// Authentication and authorization as an Envoy sidecar is served them:
// upstream's samples (renamed) become Envoy's native jwt_authn and RBAC
// filters before the module, and filter chains per mutual TLS mode; every
// resource decodes strictly with Envoy's v3 protos, and the RBAC filters
// decide as our own authorization engine does on the same requests.

const BOOKINFO = `apiVersion: v1
kind: Service
metadata: {name: reviews, namespace: default}
spec: {ports: [{port: 9080, name: http}], selector: {app: reviews}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: reviews-v2, namespace: default}
spec:
  selector: {matchLabels: {app: reviews, version: v2}}
  template:
    metadata: {labels: {app: reviews, version: v2}}
    spec: {serviceAccountName: bookinfo-reviews, containers: [{name: reviews, image: reviews, ports: [{containerPort: 9080}]}]}
---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: {name: allow-nothing, namespace: default}
spec: {}
---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: {name: productpage-viewer, namespace: default}
spec:
  selector: {matchLabels: {app: productpage}}
  action: ALLOW
  rules:
  - to: [{operation: {methods: ["GET"]}}]
---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: {name: reviews-viewer, namespace: default}
spec:
  selector: {matchLabels: {app: reviews}}
  action: ALLOW
  rules:
  - from: [{source: {principals: ["cluster.local/ns/default/sa/bookinfo-productpage"]}}]
    to: [{operation: {methods: ["GET"]}}]
---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: {name: deny-admin, namespace: mesh-system}
spec:
  action: DENY
  rules:
  - to: [{operation: {paths: ["/admin*"], notMethods: ["OPTIONS"]}}]
  - from: [{source: {notNamespaces: ["default", "mesh-system"]}}]
`;

const JWKS = JSON.stringify({
  keys: [
    {
      kty: "RSA",
      e: "AQAB",
      n: "xAE7eB6qugXyCAG3yhh7pkDkT65pHymX-P7KfIupjf59vsdo91bSP9C8H07pSAGQO1MV_xFj9VswgsCg4R6otmg5PV2He95lZdHtOcU5DXIg_pbhLdKXbi66GlVeK6ABZOUW3WYtnNHD-91gVuoeJT_DwtGGcp4ignkgXfkiEm4sw-4sfb4qdt5oLbyVpmW6x9cfa7vs2WTfURiCrBoUqgBo_-4WTiULmmHSGZHOjzwa8WtrtOQGsAFjIbno85jp6MnGGGZPYZbDAa_b3y5u-YpW7ypZrvD8BgtKVjgtQgZhLAGezMt0ua3DRrWnKqTZ0BJ_EyxOGuHJrLsn00fnMQ",
    },
  ],
});

const HTTPBIN = `apiVersion: v1
kind: Service
metadata: {name: httpbin, namespace: foo}
spec: {ports: [{port: 8000, name: http, targetPort: 8080}, {port: 9000, name: http-admin}], selector: {app: httpbin}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: httpbin, namespace: foo}
spec:
  selector: {matchLabels: {app: httpbin}}
  template:
    metadata: {labels: {app: httpbin}}
    spec: {serviceAccountName: httpbin, containers: [{name: httpbin, image: httpbin, ports: [{containerPort: 8080}, {containerPort: 9000}]}]}
---
apiVersion: security.mesh.io/v1
kind: PeerAuthentication
metadata: {name: default, namespace: foo}
spec: {mtls: {mode: STRICT}}
---
apiVersion: security.mesh.io/v1
kind: PeerAuthentication
metadata: {name: httpbin, namespace: foo}
spec:
  selector: {matchLabels: {app: httpbin}}
  portLevelMtls:
    9000: {mode: DISABLE}
---
apiVersion: security.mesh.io/v1
kind: RequestAuthentication
metadata: {name: jwt-example, namespace: foo}
spec:
  selector: {matchLabels: {app: httpbin}}
  jwtRules:
  - issuer: "testing@secure.mesh.io"
    jwksUri: "https://keys.example.com:8443/jwt/samples/jwks.json"
    forwardOriginalToken: true
    outputPayloadToHeader: x-jwt-payload
  - issuer: "https://accounts.example.com/tenant"
    jwks: '${JWKS}'
    fromHeaders: [{name: x-jwt-assertion}]
    fromParams: [token]
    outputClaimToHeaders: [{header: x-group, claim: group}]
---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: {name: require-jwt, namespace: foo}
spec:
  selector: {matchLabels: {app: httpbin}}
  action: ALLOW
  rules:
  - from: [{source: {requestPrincipals: ["*"]}}]
  - from: [{source: {requestPrincipals: ["https://accounts.example.com/tenant/alice"]}}]
    to: [{operation: {paths: ["/tenant/*"]}}]
    when: [{key: "request.auth.claims[groups]", values: ["group1"]}]
  - from: [{source: {namespaces: ["ops-*"]}}]
    to: [{operation: {ports: ["9000"], hosts: ["Admin.Example.com"]}}]
`;

const BOOKINFO_NODE = {
  id: "sidecar~10.1.0.7~reviews-v2-5b667bcbf8-xq2sn.default~default.svc.cluster.local",
  cluster: "",
  metadata: {},
  userAgentName: "envoy",
};
const HTTPBIN_NODE = { id: "sidecar~10.1.0.8~httpbin-7d9f6b8c5-abcde.foo~foo.svc.cluster.local", cluster: "", metadata: {}, userAgentName: "envoy" };

type Json = Record<string, any>;

function served(yaml: string, node: typeof BOOKINFO_NODE, extensionProviders?: ExtensionProviders) {
  // Throws naming the field of any document that does not decode.
  const loaded = loadDocuments(parseDocuments(yaml, "mesh.yaml"), ["mesh.yaml"], filterChecks(FilterModule.load()), DEFAULT_DOMAIN);
  const set = resourcesFor(meshSnapshot(1, loaded, "mesh-system", extensionProviders ? { extensionProviders } : {}), node);
  const root = envoyRoot();
  const anyTypes = new Set<string>();
  const decode = (type: string) =>
    [...set.get(type)!.values()].map((r) => {
      const d = decodeAnyStrict(root, r.any);
      for (const t of d.anyTypes) anyTypes.add(t);
      return d.object;
    });
  return { loaded, listeners: decode(LISTENER), clusters: decode(CLUSTER), anyTypes };
}

const inbound = (listeners: Json[]) => listeners.find((l) => l.name === "virtualInbound")!;
const httpFiltersOf = (chain: Json): Json[] => chain.filters[0].typed_config.http_filters;

describe("authentication and authorization served to Envoy", () => {
  let root: protobuf.Root;
  before(() => {
    root = envoyRoot();
  });

  it("bookinfo's HTTP authorization: a DENY rbac filter, then an ALLOW one, then the module and the router; every Any one of Envoy's types", () => {
    const { listeners, anyTypes } = served(BOOKINFO, BOOKINFO_NODE);
    for (const t of [
      "type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC",
      "type.googleapis.com/envoy.extensions.filters.network.rbac.v3.RBAC",
      "type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector",
    ])
      assert.ok(anyTypes.has(t), t);
    const chains = inbound(listeners).filter_chains.filter((c: Json) => c.filter_chain_match.destination_port === 9080);
    // No PeerAuthentication: PERMISSIVE, a mutual TLS chain and a plain-text one with the same filters.
    assert.deepEqual(
      chains.map((c: Json) => [c.filter_chain_match.transport_protocol, c.transport_socket !== undefined]),
      [
        ["tls", true],
        ["raw_buffer", false],
      ],
    );
    const filters = httpFiltersOf(chains[0]);
    assert.deepEqual(
      filters.map((f) => f.name),
      ["envoy.filters.http.rbac", "envoy.filters.http.rbac", "mesh.hub_client", "envoy.filters.http.router"],
    );
    const [deny, allow] = filters.slice(0, 2).map((f) => f.typed_config.rules);
    assert.equal(deny.action, "DENY");
    assert.deepEqual(Object.keys(deny.policies), ["ns[mesh-system]-policy[deny-admin]-rule[0]", "ns[mesh-system]-policy[deny-admin]-rule[1]"]);
    assert.equal(allow.action ?? "ALLOW", "ALLOW");
    // allow-nothing adds no rule; reviews-viewer's one rule: GET from productpage's identity.
    assert.deepEqual(Object.keys(allow.policies), ["ns[default]-policy[reviews-viewer]-rule[0]"]);
    const rule = allow.policies["ns[default]-policy[reviews-viewer]-rule[0]"];
    assert.deepEqual(rule.principals, [{ authenticated: { principal_name: { exact: "spiffe://cluster.local/ns/default/sa/bookinfo-productpage" } } }]);
    assert.deepEqual(rule.permissions, [{ header: { name: ":method", string_match: { exact: "GET" } } }]);
    assert.deepEqual(deny.policies["ns[mesh-system]-policy[deny-admin]-rule[1]"].principals, [
      {
        not_id: {
          or_ids: {
            ids: [
              { authenticated: { principal_name: { safe_regex: { regex: ".*/ns/default/.*" } } } },
              { authenticated: { principal_name: { safe_regex: { regex: ".*/ns/mesh-system/.*" } } } },
            ],
          },
        },
      },
    ]);
  });

  it("TCP traffic passed through is held to the same policies: an ALLOW rule needing HTTP is left out, a DENY rule needing HTTP matches more", () => {
    const { listeners } = served(BOOKINFO, BOOKINFO_NODE);
    const fallback = inbound(listeners).default_filter_chain;
    const [deny, allow] = fallback.filters.slice(0, 2).map((f: Json) => f.typed_config.rules);
    assert.equal(fallback.filters[2].name, "envoy.filters.network.tcp_proxy");
    // reviews-viewer's rule reads the method: it cannot allow a TCP connection (nothing is allowed).
    assert.deepEqual(allow.policies ?? {}, {});
    // deny-admin's rule 0 reads the path and method only: on TCP it denies everything.
    assert.deepEqual(deny.policies["ns[mesh-system]-policy[deny-admin]-rule[0]"].permissions, [{ any: true }]);
  });

  it("the generated RBAC decides as our authorization engine on the same requests", () => {
    const { listeners, loaded } = served(BOOKINFO, BOOKINFO_NODE);
    const filters = httpFiltersOf(inbound(listeners).filter_chains[0]).filter((f) => f.name === "envoy.filters.http.rbac");
    const engine = AuthorizationEngine.create(
      authorizationPoliciesFor(loaded.mesh.byKind.AuthorizationPolicy, { namespace: "default", labels: { app: "reviews", version: "v2" } }),
    );
    const base: AuthzRequest = {
      method: "GET",
      path: "/reviews/0",
      host: "reviews:9080",
      headers: [],
      sourceIp: "10.1.0.3",
      destinationPort: 9080,
      peerPrincipal: "cluster.local/ns/default/sa/bookinfo-productpage",
    };
    const cases: Array<[string, AuthzRequest, boolean]> = [
      ["GET from productpage", base, true],
      ["POST from productpage", { ...base, method: "POST" }, false],
      ["GET from ratings' identity", { ...base, peerPrincipal: "cluster.local/ns/default/sa/bookinfo-ratings" }, false],
      ["plain text", { ...base, peerPrincipal: undefined }, false],
      ["GET /admin from productpage", { ...base, path: "/admin/x?y=1" }, false],
      ["from another namespace", { ...base, peerPrincipal: "cluster.local/ns/other/sa/bookinfo-productpage" }, false],
    ];
    for (const [name, request, expected] of cases) {
      assert.equal(engine.evaluate(request).allowed, expected, `engine: ${name}`);
      assert.equal(rbacAllows(filters, request), expected, `Envoy RBAC: ${name}`);
    }
  });

  it("RequestAuthentication: jwt_authn first, a provider per rule, any provider or no token; the remote key set's cluster is served", () => {
    const { listeners, clusters } = served(HTTPBIN, HTTPBIN_NODE);
    const chain = inbound(listeners).filter_chains.find((c: Json) => c.filter_chain_match.destination_port === 8080)!;
    const filters = httpFiltersOf(chain);
    assert.deepEqual(
      filters.map((f) => f.name),
      ["envoy.filters.http.jwt_authn", "envoy.filters.http.rbac", "mesh.hub_client", "envoy.filters.http.router"],
    );
    const jwt = filters[0].typed_config;
    // Providers in issuer order, as the Node sidecar merges them.
    const [tenant, testing] = [jwt.providers["origins-0"], jwt.providers["origins-1"]];
    assert.equal(testing.issuer, "testing@secure.mesh.io");
    assert.deepEqual(testing.remote_jwks.http_uri, {
      uri: "https://keys.example.com:8443/jwt/samples/jwks.json",
      cluster: "jwks|keys.example.com|8443",
      timeout: "5s",
    });
    assert.equal(testing.forward, true);
    assert.equal(testing.forward_payload_header, "x-jwt-payload");
    assert.equal(testing.payload_in_metadata, "payload");
    assert.equal(tenant.issuer, "https://accounts.example.com/tenant");
    assert.equal(JSON.parse(tenant.local_jwks.inline_string).keys[0].kty, "RSA");
    assert.deepEqual(tenant.from_headers, [{ name: "x-jwt-assertion" }]);
    assert.deepEqual(tenant.from_params, ["token"]);
    assert.deepEqual(tenant.claim_to_headers, [{ header_name: "x-group", claim_name: "group" }]);
    assert.deepEqual(jwt.rules, [
      {
        match: { prefix: "/" },
        requires: { requires_any: { requirements: [{ provider_name: "origins-0" }, { provider_name: "origins-1" }, { allow_missing: {} }] } },
      },
    ]);
    const keys = clusters.find((c) => c.name === "jwks|keys.example.com|8443")!;
    assert.equal(keys.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.address, "keys.example.com");
    assert.equal(keys.transport_socket.typed_config.sni, "keys.example.com");
  });

  it("requestPrincipals ['*'] and claims read jwt_authn's payload; Envoy and our engine agree", () => {
    const { listeners, loaded } = served(HTTPBIN, HTTPBIN_NODE);
    const filters = httpFiltersOf(inbound(listeners).filter_chains.find((c: Json) => c.filter_chain_match.destination_port === 8080)!).filter(
      (f) => f.name === "envoy.filters.http.rbac",
    );
    const rules = filters[0].typed_config.rules.policies;
    assert.deepEqual(rules["ns[foo]-policy[require-jwt]-rule[0]"].principals, [
      { metadata: { filter: "envoy.filters.http.jwt_authn", path: [{ key: "payload" }, { key: "iss" }], value: { present_match: true } } },
    ]);
    const engine = AuthorizationEngine.create(
      authorizationPoliciesFor(loaded.mesh.byKind.AuthorizationPolicy, { namespace: "foo", labels: { app: "httpbin" } }),
    );
    const anonymous: AuthzRequest = { method: "GET", path: "/tenant/x", host: "httpbin.foo:8000", headers: [], sourceIp: "10.1.0.3", destinationPort: 8080 };
    const alice = { iss: "https://accounts.example.com/tenant", sub: "alice", groups: ["group1", "group2"] };
    const cases: Array<[string, AuthzRequest, boolean]> = [
      ["no token", anonymous, false],
      ["any valid token", { ...anonymous, requestPrincipal: "testing@secure.mesh.io/bob", authPayload: { iss: "testing@secure.mesh.io", sub: "bob" } }, true],
      [
        "ops namespace to Admin.example.com on 9000",
        { ...anonymous, destinationPort: 9000, host: "admin.EXAMPLE.com", peerPrincipal: "cluster.local/ns/ops-1/sa/x" },
        true,
      ],
      ["ops namespace on 8080", { ...anonymous, peerPrincipal: "cluster.local/ns/ops-1/sa/x" }, false],
      ["dev namespace on 9000", { ...anonymous, destinationPort: 9000, host: "admin.example.com", peerPrincipal: "cluster.local/ns/dev/sa/x" }, false],
    ];
    for (const [name, request, expected] of cases) {
      assert.equal(engine.evaluate(request).allowed, expected, `engine: ${name}`);
      assert.equal(rbacAllows(filters, request), expected, `Envoy RBAC: ${name}`);
    }
    // Rule 1 alone (the principal split at each '/', the claim in a list), against the engine's decision of that rule.
    const ruleOne = { typed_config: { rules: { action: "ALLOW", policies: { r: rules["ns[foo]-policy[require-jwt]-rule[1]"] } } } };
    const requireJwt = loaded.mesh.byKind.AuthorizationPolicy.find((p) => p.name === "require-jwt")!;
    const ruleOneEngine = AuthorizationEngine.create([{ ...requireJwt, spec: { ...requireJwt.spec, rules: [requireJwt.spec.rules[1]] } }]);
    for (const [payload, expected] of [
      [alice, true],
      [{ ...alice, groups: ["group2"] }, false],
      [{ ...alice, sub: "bob" }, false],
      [{ ...alice, iss: "https://accounts.example.com", sub: "tenant/alice" }, true],
    ] as const) {
      const request: AuthzRequest = { ...anonymous, requestPrincipal: `${payload.iss}/${payload.sub}`, authPayload: payload };
      assert.equal(rbacAllows([ruleOne], request), expected, JSON.stringify(payload));
      assert.equal(ruleOneEngine.evaluate(request).allowed, expected, `engine: ${JSON.stringify(payload)}`);
    }
  });

  it("PeerAuthentication STRICT in the namespace with a port-level DISABLE: port 8080 requires mutual TLS over SDS secrets, 9000 is plain text", () => {
    const { listeners } = served(HTTPBIN, HTTPBIN_NODE);
    const chains = inbound(listeners).filter_chains;
    const on = (port: number) => chains.filter((c: Json) => c.filter_chain_match.destination_port === port);
    const [strict] = on(8080);
    assert.equal(on(8080).length, 1);
    assert.equal(strict.filter_chain_match.transport_protocol, undefined, "a plain-text connection reaches the TLS chain and fails its handshake");
    const tls = strict.transport_socket.typed_config;
    assert.equal(tls["@type"], "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext");
    assert.equal(tls.require_client_certificate, true);
    const sds = tls.common_tls_context.tls_certificate_sds_secret_configs[0];
    assert.equal(sds.name, "default");
    assert.equal(sds.sds_config.api_config_source.grpc_services[0].envoy_grpc.cluster_name, "sds-grpc");
    assert.equal(tls.common_tls_context.combined_validation_context.validation_context_sds_secret_config.name, "ROOTCA");
    const [plain] = on(9000);
    assert.equal(on(9000).length, 1);
    assert.equal(plain.transport_socket, undefined);
    // The workload's own mode (STRICT) holds traffic passed through to other ports.
    assert.ok(inbound(listeners).default_filter_chain.transport_socket, "the passthrough requires mutual TLS too");
  });

  it("the bootstrap names the sds-grpc cluster the listeners ask for secrets, on the agent's socket", () => {
    const b = envoyBootstrap({
      discoveryAddress: "127.0.0.1:15010",
      type: "sidecar",
      pod: "httpbin-1",
      namespace: "foo",
      ip: "10.1.0.8",
      labels: {},
      adminPort: 15000,
    });
    decodeStrict(root, "envoy.config.bootstrap.v3.Bootstrap", b);
    const sds = (b.static_resources as Json).clusters.find((c: Json) => c.name === "sds-grpc");
    assert.equal(sds.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.pipe.path, "./var/run/secrets/workload-spiffe-uds/socket");
  });

  // Upstream's ext-authz task (samples/extauthz), renamed: its mesh config's providers and a CUSTOM policy on httpbin's /headers.
  const providers = () => decodeExtensionProviders(Field.root(parseYaml(EXT_AUTHZ_MESH_CONFIG), { file: "mesh.yaml", warnings: [] }).get("extensionProviders"));
  const extAuthzPolicies = (provider: string) => `${HTTPBIN}---
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: {name: ext-authz, namespace: foo}
spec:
  selector: {matchLabels: {app: httpbin}}
  action: CUSTOM
  provider: {name: ${provider}}
  rules:
  - to: [{operation: {paths: ["/headers"]}}]
---
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: {name: audit-admin, namespace: foo}
spec:
  selector: {matchLabels: {app: httpbin}}
  action: AUDIT
  rules:
  - to: [{operation: {paths: ["/admin*"]}}]
`;

  it("CUSTOM (HTTP authorizer) and AUDIT: shadow RBAC + ext_authz enabled by its metadata, then RBAC LOG, DENY?, ALLOW; all of Envoy's types", () => {
    const { listeners, anyTypes, loaded } = served(extAuthzPolicies("sample-ext-authz-http"), HTTPBIN_NODE, providers());
    for (const t of ["type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz"]) assert.ok(anyTypes.has(t), t);
    const filters = httpFiltersOf(inbound(listeners).filter_chains.find((c: Json) => c.filter_chain_match.destination_port === 8080)!);
    assert.deepEqual(
      filters.map((f) => f.name),
      [
        "envoy.filters.http.jwt_authn",
        "envoy.filters.http.rbac",
        "envoy.filters.http.ext_authz",
        "envoy.filters.http.rbac",
        "envoy.filters.http.rbac",
        "mesh.hub_client",
        "envoy.filters.http.router",
      ],
    );
    const [shadow, extAuthz, log, allow] = filters.slice(1, 5).map((f) => f.typed_config);
    assert.equal(shadow.rules, undefined, "the CUSTOM RBAC filter enforces nothing itself");
    assert.equal(shadow.shadow_rules_stat_prefix, "mesh_ext_authz_");
    assert.deepEqual(Object.keys(shadow.shadow_rules.policies), ["mesh-ext-authz-ns[foo]-policy[ext-authz]-rule[0]"]);
    assert.deepEqual(extAuthz.filter_enabled_metadata, {
      filter: "envoy.filters.http.rbac",
      path: [{ key: "mesh_ext_authz_shadow_effective_policy_id" }],
      value: { string_match: { prefix: "mesh-ext-authz" } },
    });
    assert.deepEqual(extAuthz.http_service.server_uri, {
      uri: "http://ext-authz.foo.svc.cluster.local",
      cluster: "outbound|8000||ext-authz.foo.svc.cluster.local",
      timeout: "600s",
    });
    assert.deepEqual(extAuthz.http_service.authorization_request.allowed_headers, { patterns: [{ exact: "x-ext-authz", ignore_case: true }] });
    assert.deepEqual(extAuthz.status_on_error, { code: "Forbidden" });
    assert.equal(extAuthz.transport_api_version, "V3");
    assert.equal(log.rules.action, "LOG");
    assert.deepEqual(Object.keys(log.rules.policies), ["ns[foo]-policy[audit-admin]-rule[0]"]);
    assert.equal(allow.rules.action ?? "ALLOW", "ALLOW");
    // The shadow rules match exactly what our engine sends to the authorizer; the LOG filter what it audits; neither decides.
    const engine = AuthorizationEngine.create(
      authorizationPoliciesFor(loaded.mesh.byKind.AuthorizationPolicy, { namespace: "foo", labels: { app: "httpbin" } }),
    );
    const base: AuthzRequest = {
      method: "GET",
      path: "/headers",
      host: "httpbin.foo:8000",
      headers: [],
      sourceIp: "10.1.0.3",
      destinationPort: 8080,
      requestPrincipal: "i/s",
      authPayload: { iss: "i", sub: "s" },
    };
    for (const path of ["/headers", "/headers?x=1", "/ip", "/admin/users"]) {
      const r = { ...base, path };
      assert.equal(matchingPolicy(shadow.shadow_rules, r) !== undefined, engine.custom(r).kind === "ask", `CUSTOM ${path}`);
      assert.equal(matchingPolicy(log.rules, r) !== undefined, engine.evaluate(r).audited !== undefined, `AUDIT ${path}`);
      assert.equal(
        rbacAllows(
          filters.filter((f) => f.name === "envoy.filters.http.rbac"),
          r,
        ),
        engine.evaluate(r).allowed,
        `decision ${path}`,
      );
    }
  });

  it("CUSTOM with a gRPC authorizer: envoy_grpc to the provider's cluster; on TCP chains a network ext_authz behind network shadow rules", () => {
    const { listeners, anyTypes } = served(extAuthzPolicies("sample-ext-authz-grpc"), HTTPBIN_NODE, providers());
    assert.ok(anyTypes.has("type.googleapis.com/envoy.extensions.filters.network.ext_authz.v3.ExtAuthz"));
    const filters = httpFiltersOf(inbound(listeners).filter_chains.find((c: Json) => c.filter_chain_match.destination_port === 8080)!);
    const extAuthz = filters.find((f) => f.name === "envoy.filters.http.ext_authz")!.typed_config;
    assert.deepEqual(extAuthz.grpc_service, {
      envoy_grpc: { cluster_name: "outbound|9000||ext-authz.foo.svc.cluster.local", authority: "ext-authz.foo.svc.cluster.local" },
      timeout: "600s",
    });
    const tcp = inbound(listeners).default_filter_chain.filters.map((f: Json) => f.name);
    assert.deepEqual(tcp.slice(0, 2), ["envoy.filters.network.rbac", "envoy.filters.network.ext_authz"]);
    assert.equal(tcp.at(-1), "envoy.filters.network.tcp_proxy");
  });
});
