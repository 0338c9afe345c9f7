// What shapes a push, computed from the mesh model (pure): the documents in a
// proxy's view (DISCO_SCOPE_PUSHES), endpoint-only changes
// (DISCO_ENABLE_EDS_DEBOUNCE), the fallthrough route
// (DISCO_ENABLE_FALLTHROUGH_ROUTE), HTTP/1.0 and the initial fetch timeout
// (DISCO_HTTP10, DISCO_INITIAL_FETCH_TIMEOUT), HTTP on 443
// (DISCO_BLOCK_HTTP_ON_443) and the listener conflicts counted by
// disco_conflict_*, disco_endpoint_not_ready and endpoint_no_pod.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { filterChecks } from "../../host/config/catalog.ts";
import { parseDocuments } from "../../host/config/documents.ts";
import { endpointCounts, meshConflicts } from "../../host/discovery/conflicts.ts";
import { meshSnapshot, resourcesFor } from "../../host/discovery/mesh_snapshot.ts";
import { changedKinds, isEndpointChange } from "../../host/discovery/push_scope.ts";
import { CLUSTER, CONFIG_DOCUMENT, LISTENER, ROUTE } from "../../host/discovery/type_urls.ts";
import { DEFAULT_DOMAIN } from "../../host/mesh/hosts.ts";
import { loadDocuments } from "../../host/config/config_dir.ts";
import { FilterModule } from "../../host/wasm/filter_module.ts";
import { decodeAnyStrict, envoyRoot } from "../support/envoy_protos.ts";

const checks = filterChecks(FilterModule.load());
const load = (text: string) => loadDocuments(parseDocuments(text, "mesh.yaml"), ["mesh.yaml"], checks, DEFAULT_DOMAIN);
const policy = (name: string, namespace: string, path = "/admin") => `apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: {name: ${name}, namespace: ${namespace}}
spec: {action: DENY, rules: [{to: [{operation: {paths: ["${path}"]}}]}]}
`;
const mesh = (barPath = "/admin") => `apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {ports: [{port: 80, name: http, targetPort: 8080}, {port: 81, name: tcp-raw, targetPort: 8080}], selector: {app: web}}
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: shop, labels: {app: web}}
spec: {containers: [{name: web, ports: [{containerPort: 8080}]}]}
---
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: {name: db, namespace: shop}
spec: {hosts: [db.example.com], ports: [{number: 80, name: tcp, protocol: TCP}], resolution: DNS}
---
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: {name: plain-443, namespace: shop}
spec: {hosts: [plain.example.com], ports: [{number: 443, name: http, protocol: HTTP}], resolution: DNS}
---
apiVersion: security.mesh.io/v1
kind: PeerAuthentication
metadata: {name: strict, namespace: bar}
spec: {mtls: {mode: STRICT}}
---
${policy("deny-foo", "foo")}---
${policy("deny-bar", "bar", barPath)}---
${policy("deny-all", "mesh-system")}`;
const MESH = mesh();

const agent = (namespace: string) => ({
  id: `sidecar~10.0.0.1~a.${namespace}~${namespace}.svc.cluster.local`,
  cluster: "",
  metadata: {},
  userAgentName: "disco-agent",
});

describe("push scope and listener conflicts from the mesh model", () => {
  const snapshot = meshSnapshot(1, load(MESH), "mesh-system");

  it("a sidecar is served the policies of its namespace and the root namespace, and every other kind", () => {
    const names = [...resourcesFor(snapshot, agent("foo")).get(CONFIG_DOCUMENT)!.keys()].sort();
    assert.ok(names.includes("AuthorizationPolicy/foo/deny-foo"));
    assert.ok(names.includes("AuthorizationPolicy/mesh-system/deny-all"));
    assert.ok(!names.includes("AuthorizationPolicy/bar/deny-bar"), "another namespace's policy is out of foo's view");
    assert.ok(names.includes("PeerAuthentication/bar/strict"), "a destination's PeerAuthentication stays (client auto mTLS)");
    const unscoped = [...resourcesFor(snapshot, agent("foo"), false).get(CONFIG_DOCUMENT)!.keys()];
    assert.ok(unscoped.includes("AuthorizationPolicy/bar/deny-bar"), "unscoped: every document");
  });

  it("only a change of Endpoints documents is an endpoint change", () => {
    const docs = (text: string) => meshSnapshot(2, load(text), "mesh-system").all.get(CONFIG_DOCUMENT)!;
    const endpoints = (ip: string) =>
      `---\napiVersion: v1\nkind: Endpoints\nmetadata: {name: web, namespace: shop}\nsubsets: [{addresses: [{ip: ${ip}}], ports: [{port: 8080}]}]\n`;
    const before = docs(MESH + endpoints("10.0.0.1"));
    assert.deepEqual([...changedKinds(before, docs(MESH + endpoints("10.0.0.2")))], ["Endpoints"]);
    assert.equal(isEndpointChange(changedKinds(before, docs(MESH + endpoints("10.0.0.2")))), true);
    const policyChanged = changedKinds(before, docs(mesh("/other") + endpoints("10.0.0.2")));
    assert.equal(isEndpointChange(policyChanged), false);
    assert.equal(isEndpointChange(new Set()), false, "no change is no endpoint change");
  });

  it("EndpointSlice changes are endpoint changes too; a Pod change is a config change (its labels select policies)", () => {
    assert.equal(isEndpointChange(new Set(["EndpointSlice"])), true);
    assert.equal(isEndpointChange(new Set(["Endpoints", "EndpointSlice"])), true);
    assert.equal(isEndpointChange(new Set(["EndpointSlice", "Pod"])), false);
  });

  it("DISCO_ENABLE_FALLTHROUGH_ROUTE=false leaves out Envoy's allow_any route", () => {
    const envoy = { id: "sidecar~10.0.0.9~client-1.shop~shop.svc.cluster.local", cluster: "", metadata: {}, userAgentName: "envoy" };
    const hosts = (fallthroughRoute: boolean) => {
      const set = resourcesFor(meshSnapshot(1, load(MESH), "mesh-system", { serving: { fallthroughRoute } }), envoy);
      return (decodeAnyStrict(envoyRoot(), set.get(ROUTE)!.get("80")!.any).object.virtual_hosts as Array<{ name: string }>).map((v) => v.name);
    };
    assert.ok(hosts(true).includes("allow_any"));
    assert.ok(!hosts(false).includes("allow_any"));
    assert.ok(hosts(false).includes("web.shop.svc.cluster.local:80"));
  });

  it("DISCO_HTTP10 lets Envoy's outbound HTTP listeners accept HTTP/1.0; DISCO_INITIAL_FETCH_TIMEOUT sets every served config source's initial_fetch_timeout", () => {
    const envoy = { id: "sidecar~10.0.0.9~client-1.shop~shop.svc.cluster.local", cluster: "", metadata: {}, userAgentName: "envoy" };
    const served = (serving: { acceptHttp10?: boolean; initialFetchTimeoutMs?: number }) => {
      const set = resourcesFor(meshSnapshot(1, load(MESH), "mesh-system", { serving }), envoy);
      const listener = decodeAnyStrict(envoyRoot(), set.get(LISTENER)!.get("0.0.0.0_80")!.any).object as {
        filter_chains: Array<{ filters: Array<{ name: string; typed_config: Record<string, unknown> }> }>;
      };
      // The chain of the connection manager (the first one drops traffic to the pod's own address).
      const hcm = listener.filter_chains.find((c) => c.filters[0]!.name === "envoy.filters.network.http_connection_manager")!.filters[0]!.typed_config as {
        http_protocol_options?: { accept_http_10?: boolean };
        rds: { config_source: { initial_fetch_timeout?: string } };
      };
      const clusterJson = decodeAnyStrict(envoyRoot(), set.get(CLUSTER)!.get("outbound|80||web.shop.svc.cluster.local")!.any).object as {
        eds_cluster_config: { eds_config: { initial_fetch_timeout?: string } };
      };
      // The strict decoder gives a Duration back in its JSON form ("1.5s").
      const ms = (d: string | undefined) => (d === undefined ? undefined : Number(d.replace(/s$/, "")) * 1000);
      return {
        http10: hcm.http_protocol_options?.accept_http_10 === true,
        rdsTimeout: ms(hcm.rds.config_source.initial_fetch_timeout),
        edsTimeout: ms(clusterJson.eds_cluster_config.eds_config.initial_fetch_timeout),
      };
    };
    // The spec's defaults: no HTTP/1.0, and 0s (wait for the first answer as long as it takes) written out, since Envoy's own default is 15 s.
    assert.deepEqual(served({}), { http10: false, rdsTimeout: 0, edsTimeout: 0 });
    assert.deepEqual(served({ acceptHttp10: true, initialFetchTimeoutMs: 1500 }), { http10: true, rdsTimeout: 1500, edsTimeout: 1500 });
  });

  it("DISCO_BLOCK_HTTP_ON_443 (default true): an HTTP service on 443 gets no outbound HTTP listener; false serves it", () => {
    const envoy = { id: "sidecar~10.0.0.9~client-1.shop~shop.svc.cluster.local", cluster: "", metadata: {}, userAgentName: "envoy" };
    const listeners = (blockHttpOn443?: boolean) => [
      ...resourcesFor(meshSnapshot(1, load(MESH), "mesh-system", blockHttpOn443 === undefined ? {} : { serving: { blockHttpOn443 } }), envoy)
        .get(LISTENER)!
        .keys(),
    ];
    assert.ok(!listeners().includes("0.0.0.0_443"), "TLS to any external host on 443 keeps going through the passthrough");
    assert.ok(listeners().includes("0.0.0.0_80"));
    assert.ok(listeners(false).includes("0.0.0.0_443"), "plain.example.com:443 is HTTP");
  });

  it("listener conflicts: a TCP port under an HTTP listener, HTTP on 443, a container port both HTTP and TCP", () => {
    const c = meshConflicts(snapshot.catalog, snapshot.registry, snapshot.services, snapshot.envoy.serving);
    assert.equal(c.outboundTcpOverHttp, 1, "db.example.com:80 (TCP) under the HTTP listener 0.0.0.0_80");
    assert.equal(c.outboundHttpOverHttps, 1, "plain.example.com:443 is HTTP");
    assert.equal(c.inbound, 1, "web-1:8080 is targeted by http (80) and tcp-raw (81)");
    const clean = meshSnapshot(1, load(policy("p", "foo")), "mesh-system");
    assert.deepEqual(meshConflicts(clean.catalog, clean.registry, clean.services, clean.envoy.serving), {
      duplicateClusters: 0,
      duplicateSubsets: 0,
      duplicateVirtualServiceDomains: 0,
      outboundTcpOverHttp: 0,
      outboundTcpOverTcp: 0,
      outboundHttpOverHttps: 0,
      inbound: 0,
    });
  });

  it("listener conflicts: address-less services on one outbound TCP port beyond the first (their wildcard chain passes through)", () => {
    const entry = (name: string, protocol: string) => `---
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: {name: ${name}, namespace: shop}
spec: {hosts: [${name}.example.com], ports: [{number: 6379, name: p, protocol: ${protocol}}], resolution: DNS}
`;
    const three = meshSnapshot(1, load(entry("a", "REDIS") + entry("b", "REDIS") + entry("c", "REDIS")), "mesh-system", { serving: { kvstoreFilter: true } });
    assert.equal(meshConflicts(three.catalog, three.registry, three.services, three.envoy.serving).outboundTcpOverTcp, 2);
    const off = meshSnapshot(1, load(entry("a", "REDIS") + entry("b", "REDIS")), "mesh-system");
    assert.equal(
      meshConflicts(off.catalog, off.registry, off.services, off.envoy.serving).outboundTcpOverTcp,
      0,
      "without the Redis filter no listener: the passthrough carries them",
    );
  });

  it("Endpoints addresses: not ready ones, and ready ones without a known Pod", () => {
    const docs = `apiVersion: v1
kind: Service
metadata: {name: db, namespace: foo}
spec: {ports: [{name: tcp-postgres, port: 5432}]}
---
apiVersion: v1
kind: Endpoints
metadata: {name: db, namespace: foo}
subsets:
- addresses: [{ip: 10.1.2.3}, {ip: 10.1.2.4, targetRef: {kind: Pod, name: db-0}}, {ip: 10.1.2.5, targetRef: {kind: Pod, name: gone}}]
  notReadyAddresses: [{ip: 10.1.2.9}, {ip: 10.1.2.10}]
  ports: [{name: tcp-postgres, port: 5432}]
---
apiVersion: v1
kind: Pod
metadata: {name: db-0, namespace: foo, labels: {app: db}}
spec: {containers: [{name: db, ports: [{containerPort: 5432}]}]}
`;
    assert.deepEqual(endpointCounts(load(docs).mesh), { notReady: 2, noPod: 2 });
    assert.deepEqual(endpointCounts(load(MESH).mesh), { notReady: 0, noPod: 0 });
  });

  it("with the registry, not-ready Pods of a Service without Endpoints count as not ready too", () => {
    const pod = (name: string, ready: string) =>
      `---\napiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, namespace: foo, labels: {app: web}}\nspec: {containers: [{name: web, ports: [{containerPort: 8080}]}]}\nstatus: {phase: Running, podIP: 10.3.0.${name.length}, conditions: [{type: Ready, status: "${ready}"}]}\n`;
    const docs = `apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: foo}\nspec: {selector: {app: web}, ports: [{name: http, port: 80, targetPort: 8080}]}\n${pod("a", "True")}${pod("bb", "False")}`;
    const catalog = load(docs).mesh;
    assert.deepEqual(endpointCounts(catalog, meshSnapshot(1, load(docs), "mesh-system").registry), { notReady: 1, noPod: 0 });
    assert.deepEqual(endpointCounts(catalog), { notReady: 0, noPod: 0 });
  });
});
