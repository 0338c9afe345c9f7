// The TLS Envoy's outbound clusters originate, shape by shape, as upstream's
// cluster builder writes it: auto mutual TLS (transport_socket_matches on the
// endpoints' tlsMode metadata, the destination's service accounts as SANs),
// what turns it off (enableAutoMtls, a namespace's DISABLE, MESH_EXTERNAL, an
// ORIGINAL_DST cluster with an instance without sidecar), and each
// DestinationRule mode with its fields, on a sidecar and on a gateway. Every
// resource is decoded strictly with Envoy's v3 protos (all Any types known).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { filterChecks } from "../../host/config/catalog.ts";
import { parseDocuments } from "../../host/config/documents.ts";
import { meshSnapshot, resourcesFor, type SnapshotOptions } from "../../host/discovery/mesh_snapshot.ts";
import type { ResourceSet } from "../../host/discovery/resource_set.ts";
import { CLUSTER, ENDPOINT } from "../../host/discovery/type_urls.ts";
import { DEFAULT_DOMAIN } from "../../host/mesh/hosts.ts";
import { loadDocuments } from "../../host/config/config_dir.ts";
import { FilterModule } from "../../host/wasm/filter_module.ts";
import { decodeAnyStrict, envoyRoot } from "../support/envoy_protos.ts";
import { lbEndpoints, originated, socketFor } from "./support/envoy_upstream_eval.ts";

const checks = filterChecks(FilterModule.load());
const WEB = "web.shop.svc.cluster.local";
const DB = "db.shop.svc.cluster.local";

// Two web pods with a sidecar (two service accounts), one without; a headless db whose pods all have one.
const MESH = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {clusterIP: 10.96.0.10, selector: {app: web}, ports: [{name: http, port: 80}, {name: grpc, port: 9000}]}
---
apiVersion: v1
kind: Endpoints
metadata: {name: web, namespace: shop}
subsets: [{addresses: [{ip: 10.0.1.1, targetRef: {kind: Pod, name: web-1}}, {ip: 10.0.1.2, targetRef: {kind: Pod, name: web-2}}, {ip: 10.0.1.3, targetRef: {kind: Pod, name: legacy-1}}], ports: [{name: http, port: 80}, {name: grpc, port: 9000}]}]
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: shop, labels: {app: web, version: v1, security.mesh.io/tlsMode: mesh}}
spec: {serviceAccountName: web, containers: [{name: web, image: web}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web-2, namespace: shop, labels: {app: web, version: v2, security.mesh.io/tlsMode: mesh}}
spec: {serviceAccountName: web-canary, containers: [{name: web, image: web}]}
---
apiVersion: v1
kind: Pod
metadata: {name: legacy-1, namespace: shop, labels: {app: web, version: v1}}
spec: {serviceAccountName: legacy, containers: [{name: web, image: web}]}
---
apiVersion: v1
kind: Service
metadata: {name: db, namespace: shop}
spec: {clusterIP: None, selector: {app: db}, ports: [{name: tcp, port: 5432}]}
---
apiVersion: v1
kind: Endpoints
metadata: {name: db, namespace: shop}
subsets: [{addresses: [{ip: 10.0.2.1, targetRef: {kind: Pod, name: db-0}}], ports: [{name: tcp, port: 5432}]}]
---
apiVersion: v1
kind: Pod
metadata: {name: db-0, namespace: shop, labels: {app: db, security.mesh.io/tlsMode: mesh}}
spec: {serviceAccountName: db, containers: [{name: db, image: db}]}
---
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: {name: api, namespace: shop}
spec:
  hosts: [api.example.com]
  location: MESH_EXTERNAL
  ports: [{number: 443, name: https, protocol: HTTPS}]
  resolution: DNS
  subjectAltNames: [api.example.com]
`;

const sidecar = { id: "sidecar~10.0.9.1~client-1.shop~shop.svc.cluster.local", cluster: "", metadata: {}, userAgentName: "envoy" };
const gateway = { id: "router~10.0.9.2~egress-1.shop~shop.svc.cluster.local", cluster: "", metadata: { LABELS: { app: "egress" } }, userAgentName: "envoy" };

function served(extra = "", node: typeof sidecar = sidecar, options: SnapshotOptions = {}): ResourceSet {
  const loaded = loadDocuments(parseDocuments(MESH + extra, "mesh.yaml"), ["mesh.yaml"], checks, DEFAULT_DOMAIN);
  return resourcesFor(meshSnapshot(1, loaded, "mesh-system", options), node);
}

/** Every resource of a type, decoded strictly (throws on a field or Any type Envoy's protos do not have), by name. */
function decoded(set: ResourceSet, type: string): Map<string, Record<string, any>> {
  const root = envoyRoot();
  return new Map([...set.get(type)!].map(([name, r]) => [name, decodeAnyStrict(root, r.any).object]));
}

/** What the cluster originates to each of its endpoints (by address), read as Envoy reads it. */
function perEndpoint(set: ResourceSet, cluster: string): Record<string, string> {
  const c = decoded(set, CLUSTER).get(cluster)!;
  const assignment = c.load_assignment ?? decoded(set, ENDPOINT).get(cluster);
  return Object.fromEntries(lbEndpoints(assignment).map((e) => [e.endpoint.address.socket_address.address, originated(socketFor(c, e)).mode]));
}

const dr = (host: string, trafficPolicy: string, extra = "") => `---
apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: {name: dr, namespace: shop}
spec: {host: ${host}, trafficPolicy: ${trafficPolicy}${extra}}
`;
const peer = (namespace: string, mode: string) => `---
apiVersion: security.mesh.io/v1
kind: PeerAuthentication
metadata: {name: default, namespace: ${namespace}}
spec: {mtls: {mode: ${mode}}}
`;

describe("Envoy's outbound clusters: auto mutual TLS", () => {
  it("mutual TLS to the endpoints with a sidecar, plain text to the others, every resource decoding strictly", () => {
    const set = served();
    decoded(set, CLUSTER); // every cluster decodes, every Any known
    const c = decoded(set, CLUSTER).get(`outbound|80||${WEB}`)!;
    assert.equal(c.transport_socket, undefined);
    assert.deepEqual(
      c.transport_socket_matches.map((m: any) => m.name),
      ["tlsMode-mesh", "tlsMode-disabled"],
    );
    assert.deepEqual(perEndpoint(set, `outbound|80||${WEB}`), { "10.0.1.1": "MESH_MUTUAL", "10.0.1.2": "MESH_MUTUAL", "10.0.1.3": "DISABLE" });
    const mtls = originated(c.transport_socket_matches[0].transport_socket);
    assert.deepEqual(
      mtls.sans,
      ["spiffe://cluster.local/ns/shop/sa/legacy", "spiffe://cluster.local/ns/shop/sa/web", "spiffe://cluster.local/ns/shop/sa/web-canary"],
      "secure naming: every service account of the service",
    );
    assert.equal(mtls.sni, `outbound_.80_._.${WEB}`);
    assert.deepEqual(mtls.alpn, ["mesh"]);
    assert.deepEqual(originated(decoded(set, CLUSTER).get(`outbound|9000||${WEB}`)!.transport_socket_matches[0].transport_socket).alpn, ["mesh", "h2"]);
    const endpoints = lbEndpoints(decoded(set, ENDPOINT).get(`outbound|80||${WEB}`));
    assert.deepEqual(
      endpoints.map((e) => e.metadata?.filter_metadata?.["envoy.transport_socket_match"]?.fields?.tlsMode?.stringValue ?? null),
      ["mesh", "mesh", null],
    );
  });

  it("--trust-domain names the identities", () => {
    const c = decoded(served("", sidecar, { trustDomain: "example.org" }), CLUSTER).get(`outbound|80||${WEB}`)!;
    assert.equal(originated(c.transport_socket_matches[0].transport_socket).sans![0], "spiffe://example.org/ns/shop/sa/legacy");
  });

  it("off: enableAutoMtls false, the destination's namespace (or the mesh) DISABLE, a MESH_EXTERNAL ServiceEntry", () => {
    assert.deepEqual(perEndpoint(served("", sidecar, { enableAutoMtls: false }), `outbound|80||${WEB}`), {
      "10.0.1.1": "DISABLE",
      "10.0.1.2": "DISABLE",
      "10.0.1.3": "DISABLE",
    });
    assert.deepEqual(perEndpoint(served(peer("shop", "DISABLE")), `outbound|80||${WEB}`)["10.0.1.1"], "DISABLE");
    assert.deepEqual(perEndpoint(served(peer("mesh-system", "DISABLE")), `outbound|80||${WEB}`)["10.0.1.1"], "DISABLE");
    assert.deepEqual(
      perEndpoint(served(peer("mesh-system", "DISABLE") + peer("shop", "STRICT")), `outbound|80||${WEB}`)["10.0.1.1"],
      "MESH_MUTUAL",
      "the namespace's mode wins over the mesh's",
    );
    const api = decoded(served(), CLUSTER).get("outbound|443||api.example.com")!;
    assert.equal(api.transport_socket ?? api.transport_socket_matches, undefined);
  });

  it("a workload-level DISABLE does not turn it off (the spec's era): a DestinationRule must", () => {
    const workloadDisable = `---
apiVersion: security.mesh.io/v1
kind: PeerAuthentication
metadata: {name: web, namespace: shop}
spec: {selector: {matchLabels: {app: web}}, mtls: {mode: DISABLE}}
`;
    assert.equal(perEndpoint(served(workloadDisable), `outbound|80||${WEB}`)["10.0.1.1"], "MESH_MUTUAL");
    assert.equal(perEndpoint(served(workloadDisable + dr("web", "{tls: {mode: DISABLE}}")), `outbound|80||${WEB}`)["10.0.1.1"], "DISABLE");
  });

  it("a headless Service: mutual TLS only when every instance has a sidecar, the ORIGINAL_DST cluster holding the socket itself", () => {
    const db = decoded(served(), CLUSTER).get(`outbound|5432||${DB}`)!;
    assert.equal(db.type, "ORIGINAL_DST");
    assert.equal(db.transport_socket_matches, undefined);
    assert.deepEqual(originated(db.transport_socket).sans, ["spiffe://cluster.local/ns/shop/sa/db"]);
    const mixed = `---
apiVersion: v1
kind: Endpoints
metadata: {name: db, namespace: shop}
subsets: [{addresses: [{ip: 10.0.2.1, targetRef: {kind: Pod, name: db-0}}, {ip: 10.0.2.2}], ports: [{name: tcp, port: 5432}]}]
`;
    assert.equal(decoded(served(mixed), CLUSTER).get(`outbound|5432||${DB}`)!.transport_socket, undefined, "an instance without sidecar: plain text");
    const eds = decoded(served("", sidecar, { serving: { edsForHeadless: true } }), CLUSTER).get(`outbound|5432||${DB}`)!;
    assert.deepEqual(
      eds.transport_socket_matches.map((m: any) => m.name),
      ["tlsMode-mesh", "tlsMode-disabled"],
    );
    const mixedEds = decoded(served(mixed, sidecar, { serving: { edsForHeadless: true } }), CLUSTER).get(`outbound|5432||${DB}`)!;
    assert.equal(mixedEds.transport_socket_matches, undefined, "upstream's inference for a headless Service holds whatever the cluster's type");
  });
});

describe("Envoy's outbound clusters: DestinationRule tls", () => {
  it("MESH_MUTUAL forces mutual TLS to every endpoint, with the rule's names when it gives them; DISABLE forces plain text", () => {
    assert.deepEqual(perEndpoint(served(dr("web", "{tls: {mode: MESH_MUTUAL}}")), `outbound|80||${WEB}`), {
      "10.0.1.1": "MESH_MUTUAL",
      "10.0.1.2": "MESH_MUTUAL",
      "10.0.1.3": "MESH_MUTUAL",
    });
    const named = originated(
      decoded(served(dr("web", "{tls: {mode: MESH_MUTUAL, sni: web.internal, subjectAltNames: [spiffe://cluster.local/ns/shop/sa/web]}}")), CLUSTER).get(
        `outbound|80||${WEB}`,
      )!.transport_socket,
    );
    assert.deepEqual([named.sni, named.sans], ["web.internal", ["spiffe://cluster.local/ns/shop/sa/web"]]);
    assert.deepEqual(perEndpoint(served(dr("web", "{tls: {mode: DISABLE}}")), `outbound|80||${WEB}`)["10.0.1.1"], "DISABLE");
  });

  it("per port and per subset, the subset's cluster named with its SNI", () => {
    const set = served(
      dr(
        "web",
        "{portLevelSettings: [{port: {number: 9000}, tls: {mode: DISABLE}}]}",
        ", subsets: [{name: v1, labels: {version: v1}, trafficPolicy: {tls: {mode: MESH_MUTUAL}}}]",
      ),
    );
    assert.equal(perEndpoint(set, `outbound|80||${WEB}`)["10.0.1.1"], "MESH_MUTUAL", "port 80: auto mutual TLS");
    assert.equal(perEndpoint(set, `outbound|9000||${WEB}`)["10.0.1.1"], "DISABLE");
    assert.deepEqual(
      perEndpoint(set, `outbound|9000|v1|${WEB}`),
      { "10.0.1.1": "MESH_MUTUAL", "10.0.1.3": "MESH_MUTUAL" },
      "the subset's own tls, over the port's",
    );
    assert.equal(originated(decoded(set, CLUSTER).get(`outbound|9000|v1|${WEB}`)!.transport_socket).sni, `outbound_.9000_.v1_.${WEB}`);
  });

  it("SIMPLE: the CA file as upstream's file-root SDS secret (the system roots without one), SNI and SANs; auto SNI without sni", () => {
    const set = served(
      dr("web", "{tls: {mode: SIMPLE, caCertificates: /etc/web/ca.pem, sni: web.example, subjectAltNames: [web.example]}}") +
        dr("api.example.com", "{tls: {mode: SIMPLE}}").replace("name: dr", "name: api"),
    );
    const web = decoded(set, CLUSTER).get(`outbound|80||${WEB}`)!;
    assert.deepEqual(originated(web.transport_socket), {
      mode: "SIMPLE",
      sni: "web.example",
      sans: ["web.example"],
      alpn: undefined,
      certificate: undefined,
      roots: "file-root:/etc/web/ca.pem",
    });
    assert.equal(web.typed_extension_protocol_options, undefined, "sni given: no auto SNI");
    assert.deepEqual(originated(decoded(set, CLUSTER).get(`outbound|9000||${WEB}`)!.transport_socket).alpn, ["h2"]);
    const api = decoded(set, CLUSTER).get("outbound|443||api.example.com")!;
    assert.deepEqual(
      originated(api.transport_socket),
      { mode: "SIMPLE", sni: undefined, sans: ["api.example.com"], alpn: undefined, certificate: undefined, roots: "file-root:system" },
      "a ServiceEntry's subjectAltNames check the server",
    );
    const options = api.typed_extension_protocol_options["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"];
    assert.deepEqual(options.upstream_http_protocol_options, { auto_sni: true, auto_san_validation: true });
    assert.deepEqual(options.explicit_http_config, { http_protocol_options: {} });
  });

  it("SIMPLE with insecureSkipVerify checks nothing; MUTUAL presents the rule's certificate files", () => {
    const skip = decoded(served(dr("web", "{tls: {mode: SIMPLE, insecureSkipVerify: true}}")), CLUSTER).get(`outbound|80||${WEB}`)!;
    assert.deepEqual(skip.transport_socket.typed_config.common_tls_context.validation_context, {});
    assert.deepEqual(skip.typed_extension_protocol_options["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"].upstream_http_protocol_options, {
      auto_sni: true,
    });
    const socket = decoded(
      served(dr("web", "{tls: {mode: MUTUAL, clientCertificate: /etc/c.pem, privateKey: /etc/k.pem, caCertificates: /etc/ca.pem, caCrl: /etc/crl.pem}}")),
      CLUSTER,
    ).get(`outbound|80||${WEB}`)!.transport_socket;
    const mutual = originated(socket);
    assert.deepEqual([mutual.mode, mutual.certificate, mutual.roots], ["MUTUAL", "file-cert:/etc/c.pem~/etc/k.pem", "file-root:/etc/ca.pem"]);
    assert.deepEqual(socket.typed_config.common_tls_context.combined_validation_context.default_validation_context.crl, { filename: "/etc/crl.pem" });
  });

  it("credentialName: a gateway fetches the orchestrator Secret over ADS (and its -cacert); a sidecar originates nothing, as upstream", () => {
    const rule = dr("api.example.com", "{tls: {mode: MUTUAL, credentialName: api-client}}");
    const atGateway = decoded(served(rule, gateway), CLUSTER).get("outbound|443||api.example.com")!;
    const context = atGateway.transport_socket.typed_config.common_tls_context;
    assert.deepEqual(
      context.tls_certificate_sds_secret_configs.map((s: any) => [s.name, Object.keys(s.sds_config)]),
      [["kubernetes://api-client", ["ads", "initial_fetch_timeout", "resource_api_version"]]],
    );
    assert.equal(context.combined_validation_context.validation_context_sds_secret_config.name, "kubernetes://api-client-cacert");
    const atSidecar = decoded(served(rule), CLUSTER).get("outbound|443||api.example.com")!;
    assert.equal(atSidecar.transport_socket, undefined);
  });

  it("a subset only the client's namespace defines gets its cluster and load assignment", () => {
    const own = `---
apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: {name: mine, namespace: shop}
spec: {host: ${WEB}, subsets: [{name: canary, labels: {version: v2}}]}
`;
    const other = { ...sidecar, id: "sidecar~10.0.9.3~client-1.other~other.svc.cluster.local" };
    const mine = served(own.replace("namespace: shop", "namespace: other"), other);
    assert.deepEqual(perEndpoint(mine, `outbound|80|canary|${WEB}`), { "10.0.1.2": "MESH_MUTUAL" });
    assert.equal(
      served(own.replace("namespace: shop", "namespace: other")).get(CLUSTER)!.has(`outbound|80|canary|${WEB}`),
      false,
      "not for a client of another namespace",
    );
  });
});
