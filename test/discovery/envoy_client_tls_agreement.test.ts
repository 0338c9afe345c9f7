// Property test: Envoy and the Node sidecar originate the same client TLS.
// For DestinationRules drawn over every place a `tls` can be (client, service
// and root namespaces; host level, port level, subset, subset port level;
// every mode), PeerAuthentications at mesh and namespace level, the mesh's
// enableAutoMtls, a destination with or without a sidecar, and a call to
// either port with or without a subset, the outbound cluster disco-discovery
// serves an Envoy (decoded strictly with Envoy's v3 protos, its socket for
// the endpoint chosen by Envoy's transport_socket_matches rules from the
// served load assignment) originates what the Node sidecar originates for the
// same call: plain text, mutual TLS with the mesh certificate, or SIMPLE /
// MUTUAL TLS, which the Node sidecar refuses with 503 (docs/sidecar.md). On a
// sidecar, a `credentialName` gives Envoy no TLS at all, as upstream
// (docs/discovery.md). PROPERTY_RUNS=<n> draws more (default 150).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { EndpointFlag } from "../../host/hub/clusters.ts";
import { filterChecks } from "../../host/config/catalog.ts";
import { parseDocuments } from "../../host/config/documents.ts";
import { meshSnapshot, resourcesFor } from "../../host/discovery/mesh_snapshot.ts";
import { CLUSTER, ENDPOINT } from "../../host/discovery/type_urls.ts";
import { DEFAULT_DOMAIN } from "../../host/mesh/hosts.ts";
import { loadDocuments } from "../../host/config/config_dir.ts";
import { DEFAULT_MESH_SETTINGS } from "../../host/proxy/mesh_config.ts";
import { ClusterManager } from "../../host/proxy/cluster/cluster_manager.ts";
import { RouteTable } from "../../host/proxy/router/routes.ts";
import { FilterModule } from "../../host/wasm/filter_module.ts";
import { decodeAnyStrict, envoyRoot } from "../support/envoy_protos.ts";
import { lbEndpoints, originated, socketFor } from "./support/envoy_upstream_eval.ts";

const HOST = "web.shop.svc.cluster.local";
const SA = "spiffe://cluster.local/ns/shop/sa/web-sa";
const PORTS = [80, 9000] as const;
const checks = filterChecks(FilterModule.load());
const RUNS = Number(process.env.PROPERTY_RUNS ?? 150);

/** Every DestinationRule `tls` shape, by what it asks for. */
const TLS = [
  "{mode: DISABLE}",
  "{mode: MESH_MUTUAL}",
  `{mode: MESH_MUTUAL, subjectAltNames: ["spiffe://cluster.local/ns/shop/sa/other"], sni: mesh.example}`,
  "{mode: SIMPLE}",
  "{mode: SIMPLE, caCertificates: /etc/ca.pem, sni: web.example, subjectAltNames: [web.example]}",
  "{mode: SIMPLE, insecureSkipVerify: true}",
  "{mode: MUTUAL, clientCertificate: /etc/c.pem, privateKey: /etc/k.pem, caCertificates: /etc/ca.pem}",
  "{mode: SIMPLE, credentialName: web-cred}",
];
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 2 });
const tls = fc.constantFrom(...TLS);
const portLevel = fc.record({ port: fc.constantFrom(...PORTS), tls: maybe(tls) });
const policy = fc.record({ tls: maybe(tls), portLevel: maybe(portLevel) });
const rule = fc.record({ policy: maybe(policy), subsetPolicy: maybe(policy) });
const MODES = ["STRICT", "PERMISSIVE", "DISABLE", "UNSET"] as const;

const world = fc
  .record({
    clientRule: maybe(rule),
    serviceRule: maybe(rule),
    rootRule: maybe(rule),
    meshMode: maybe(fc.constantFrom(...MODES.filter((m) => m !== "UNSET"))),
    namespaceMode: maybe(fc.constantFrom(...MODES)),
    autoMtls: fc.boolean(),
    sidecar: fc.boolean(),
    port: fc.constantFrom(...PORTS),
    subset: fc.boolean(),
    // A call to subset v1 needs a rule that defines it (every drawn rule does).
  })
  .map((w) => ({ ...w, subset: w.subset && Boolean(w.clientRule ?? w.serviceRule ?? w.rootRule) }));
type World = typeof world extends fc.Arbitrary<infer W> ? W : never;
type Rule = NonNullable<World["clientRule"]>;
type Policy = NonNullable<Rule["policy"]>;

function policyYaml(p: Policy): string {
  const fields = [
    p.tls ? `tls: ${p.tls}` : "",
    p.portLevel ? `portLevelSettings: [{port: {number: ${p.portLevel.port}}${p.portLevel.tls ? `, tls: ${p.portLevel.tls}` : ""}}]` : "",
  ].filter(Boolean);
  return `{${fields.join(", ")}}`;
}

function ruleYaml(name: string, namespace: string, host: string, r: Rule): string {
  const subset = `{name: v1, labels: {version: v1}${r.subsetPolicy ? `, trafficPolicy: ${policyYaml(r.subsetPolicy)}` : ""}}`;
  return `---
apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: {name: ${name}, namespace: ${namespace}}
spec: {host: "${host}"${r.policy ? `, trafficPolicy: ${policyYaml(r.policy)}` : ""}, subsets: [${subset}]}
`;
}

const peer = (namespace: string, mode: string) => `---
apiVersion: security.mesh.io/v1
kind: PeerAuthentication
metadata: {name: default, namespace: ${namespace}}
spec: {mtls: {mode: ${mode}}}
`;

function meshYaml(w: World): string {
  return [
    `apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {clusterIP: 10.96.0.10, selector: {app: web}, ports: [{name: http, port: 80}, {name: grpc, port: 9000}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: shop, labels: {app: web, version: v1${w.sidecar ? ", security.mesh.io/tlsMode: mesh" : ""}}}
spec: {serviceAccountName: web-sa, containers: [{name: web, image: web, ports: [{containerPort: 80}, {containerPort: 9000}]}]}
---
apiVersion: v1
kind: Endpoints
metadata: {name: web, namespace: shop}
subsets: [{addresses: [{ip: 10.0.1.1, targetRef: {kind: Pod, name: web-1}}], ports: [{name: http, port: 80}, {name: grpc, port: 9000}]}]
`,
    w.clientRule ? ruleYaml("from-client", "client", HOST, w.clientRule) : "",
    w.serviceRule ? ruleYaml("own", "shop", "web", w.serviceRule) : "",
    w.rootRule ? ruleYaml("mesh-wide", "mesh-system", "*.local", w.rootRule) : "",
    w.meshMode ? peer("mesh-system", w.meshMode) : "",
    w.namespaceMode ? peer("shop", w.namespaceMode) : "",
    w.subset
      ? `---
apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata: {name: web, namespace: client}
spec: {hosts: [${HOST}], http: [{route: [{destination: {host: ${HOST}, subset: v1, port: {number: ${w.port}}}}]}]}
`
      : "",
  ].join("");
}

/** What the Node sidecar originates for the call: its route's client TLS, or the mode it refuses (503). */
function nodeSidecar(w: World, text: string): string {
  const loaded = loadDocuments(parseDocuments(text, "mesh.yaml"), ["mesh.yaml"], checks, DEFAULT_DOMAIN);
  const endpoints = new Map<string, EndpointFlag>(
    PORTS.map((port) => [
      `${HOST}:${port}`,
      {
        host: HOST,
        servicePort: port,
        name: `${HOST}:${port}`,
        address: { host: "10.0.1.1", port },
        sidecar: w.sidecar,
        serviceAccount: "web-sa",
        labels: { app: "web", version: "v1" },
      },
    ]),
  );
  const workload = { name: "client-1", namespace: "client", labels: { app: "client" }, serviceAccount: "client", ports: [], sidecar: true };
  const mesh = { ...DEFAULT_MESH_SETTINGS, enableAutoMtls: w.autoMtls };
  const policy = new RouteTable(
    loaded.mesh,
    mesh,
    { workload, containerPort: 8080, gateway: false },
    new ClusterManager(loaded.mesh, mesh, workload, endpoints),
  );
  const r = policy.outbound({ authority: `${HOST}:${w.port}`, method: "GET", path: "/", headers: [] }, new Map());
  if (r.kind === "forward") {
    assert.equal(r.route.includes("|v1"), w.subset, `the call went to the subset asked for: ${r.route}`);
    return r.mtls ? r.mtls.mode : "DISABLE";
  }
  const refused = /^tls mode (SIMPLE|MUTUAL) is not supported/.exec(r.reply.body);
  assert.ok(refused, `unexpected reply ${JSON.stringify(r)}`);
  return refused[1];
}

/** What the Envoy of a client pod in the same namespace is served for the call, read as Envoy uses it. */
function envoy(w: World, text: string): ReturnType<typeof originated> {
  const loaded = loadDocuments(parseDocuments(text, "mesh.yaml"), ["mesh.yaml"], checks, DEFAULT_DOMAIN);
  const set = resourcesFor(meshSnapshot(1, loaded, "mesh-system", { enableAutoMtls: w.autoMtls }), {
    id: "sidecar~10.0.2.1~client-1.client~client.svc.cluster.local",
    cluster: "",
    metadata: {},
    userAgentName: "envoy",
  });
  const name = `outbound|${w.port}|${w.subset ? "v1" : ""}|${HOST}`;
  const root = envoyRoot();
  const cluster = decodeAnyStrict(root, set.get(CLUSTER)!.get(name)!.any).object;
  const assignment = decodeAnyStrict(root, set.get(ENDPOINT)!.get(name)!.any).object;
  const [endpoint] = lbEndpoints(assignment);
  assert.ok(endpoint, `the load assignment of ${name} has the endpoint`);
  return originated(socketFor(cluster, endpoint));
}

/** The tls settings that decide (as written), to check what Envoy's socket carries. */
function decidingTls(w: World): string | undefined {
  const r = w.clientRule ?? w.serviceRule ?? w.rootRule;
  if (!r) return undefined;
  const at = (p: Policy | undefined, fallback: string | undefined) => (p?.portLevel?.port === w.port ? p.portLevel.tls : (p?.tls ?? fallback));
  const base = at(r.policy, undefined);
  return w.subset && r.subsetPolicy ? at(r.subsetPolicy, base) : base;
}

describe("client TLS: Envoy's outbound clusters and the Node sidecar agree", () => {
  it(`over DestinationRule, PeerAuthentication and mesh combinations (${RUNS} draws)`, () => {
    fc.assert(
      fc.property(world, (w) => {
        const text = meshYaml(w);
        const node = nodeSidecar(w, text);
        const served = envoy(w, text);
        const written = decidingTls(w);
        if (written?.includes("credentialName")) assert.equal(served.mode, "DISABLE", "a credential on a sidecar gives no TLS (upstream)");
        else assert.equal(served.mode, node, `Envoy originates ${served.mode}, the Node sidecar ${node}\n${text}`);
        if (served.mode === "MESH_MUTUAL") {
          const custom = written?.includes("subjectAltNames");
          assert.deepEqual(served.sans, custom ? ["spiffe://cluster.local/ns/shop/sa/other"] : [SA], "secure naming: the destination's service account");
          assert.equal(served.sni, custom ? "mesh.example" : `outbound_.${w.port}_.${w.subset ? "v1" : ""}_.${HOST}`);
          assert.deepEqual(served.alpn, w.port === 9000 ? ["mesh", "h2"] : ["mesh"]);
        }
      }),
      { numRuns: RUNS },
    );
  });
});
