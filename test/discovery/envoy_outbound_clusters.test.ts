// The cluster side of what Envoy is served, from the mesh model (pure), per
// spec 2 variable, in its default and changed shape, every resource decoded
// strictly with Envoy's v3 protos: headless Services (ORIGINAL_DST, or EDS
// under DISCO_ENABLE_EDS_FOR_HEADLESS_SERVICES) and their pod listeners
// (DISCO_ENABLE_HEADLESS_SERVICE_POD_LISTENERS), ServiceEntry DNS resolution
// (STRICT_DNS / LOGICAL_DNS, DISCO_RESPECT_DNS_TTL), and a gateway's clusters
// (DISCO_FILTER_GATEWAY_CLUSTER_CONFIG, DISCO_SCOPE_GATEWAY_TO_NAMESPACE).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { filterChecks } from "../../host/config/catalog.ts";
import { parseDocuments } from "../../host/config/documents.ts";
import type { EnvoyServing } from "../../host/discovery/envoy_sidecar.ts";
import { MODULE_CLUSTER } from "../../host/discovery/envoy_wasm.ts";
import { meshSnapshot, resourcesFor, type SnapshotOptions } from "../../host/discovery/mesh_snapshot.ts";
import type { ResourceSet } from "../../host/discovery/resource_set.ts";
import { CLUSTER, ENDPOINT, LISTENER } from "../../host/discovery/type_urls.ts";
import { DEFAULT_DOMAIN } from "../../host/mesh/hosts.ts";
import { loadDocuments } from "../../host/config/config_dir.ts";
import { FilterModule } from "../../host/wasm/filter_module.ts";
import { decodeAnyStrict, envoyRoot } from "../support/envoy_protos.ts";
import { CLUSTER_MESH, DB } from "./support/cluster_mesh.ts";

const checks = filterChecks(FilterModule.load());
const load = (text: string) => loadDocuments(parseDocuments(text, "mesh.yaml"), ["mesh.yaml"], checks, DEFAULT_DOMAIN);

const envoy = (ip = "10.0.0.9", type = "sidecar", labels?: Record<string, string>) => ({
  id: `${type}~${ip}~client-1.shop~shop.svc.cluster.local`,
  cluster: "",
  metadata: labels ? { LABELS: labels } : {},
  userAgentName: "envoy",
});
const gateway = envoy("10.0.0.20", "router", { app: "ingress" });

function served(serving: Partial<EnvoyServing> = {}, node = envoy(), options: SnapshotOptions = {}, extra = ""): ResourceSet {
  return resourcesFor(meshSnapshot(1, load(CLUSTER_MESH + extra), "mesh-system", { ...options, serving }), node);
}

/** A mesh-wide RequestAuthentication whose keys Envoy fetches from a remote JWKS (through a DNS cluster). */
const REMOTE_JWKS = `---
apiVersion: security.mesh.io/v1
kind: RequestAuthentication
metadata: {name: jwt, namespace: mesh-system}
spec: {jwtRules: [{issuer: "https://issuer.example.com", jwksUri: "https://issuer.example.com/jwks.json"}]}
`;
const JWKS_CLUSTER = "jwks|issuer.example.com|443";

/** Every resource of a type, decoded strictly (throws on any field or Any type Envoy's protos do not have), by name. */
function decoded(set: ResourceSet, type: string): Map<string, Record<string, any>> {
  const root = envoyRoot();
  return new Map([...set.get(type)!].map(([name, r]) => [name, decodeAnyStrict(root, r.any).object]));
}
const clusters = (set: ResourceSet) => decoded(set, CLUSTER);
const outbound = (set: ResourceSet) => [...set.get(CLUSTER)!.keys()].filter((n) => n.startsWith("outbound|")).sort();

describe("Envoy's outbound clusters by service resolution, and the gateway's clusters", () => {
  it("every Cluster and Listener served in every shape decodes strictly with Envoy's v3 protos", () => {
    const shapes: Array<[Partial<EnvoyServing>, ReturnType<typeof envoy>]> = [
      [{}, envoy()],
      [{ edsForHeadless: true, headlessPodListeners: false, respectDnsTtl: false }, envoy()],
      [{ filterGatewayClusters: true, scopeGatewayToNamespace: true }, gateway],
    ];
    for (const [serving, node] of shapes) {
      const set = served(serving, node);
      // decoded() throws on the first field or Any type Envoy's protos do not know.
      for (const type of [CLUSTER, LISTENER, ENDPOINT]) assert.ok(decoded(set, type).size > 0, type);
    }
  });

  it("DISCO_ENABLE_EDS_FOR_HEADLESS_SERVICES (default false): a headless Service is an ORIGINAL_DST cluster; true serves its endpoints over EDS; a ClusterIP Service is EDS either way", () => {
    const byDefault = clusters(served());
    for (const port of [5432, 8080]) {
      const c = byDefault.get(`outbound|${port}||${DB}`)!;
      assert.equal(c.type, "ORIGINAL_DST");
      assert.equal(c.lb_policy, "CLUSTER_PROVIDED");
      assert.equal(c.eds_cluster_config, undefined);
    }
    assert.equal(byDefault.get("outbound|80||web.shop.svc.cluster.local")!.type, "EDS");
    const eds = clusters(served({ edsForHeadless: true })).get(`outbound|5432||${DB}`)!;
    assert.equal(eds.type, "EDS");
    assert.equal(eds.lb_policy ?? "ROUND_ROBIN", "ROUND_ROBIN", "ROUND_ROBIN is the enum's default, left out by the decoder");
    assert.equal(eds.eds_cluster_config.service_name, `outbound|5432||${DB}`);
    // The load assignment the EDS cluster names is served (the pods' addresses).
    assert.ok(served({ edsForHeadless: true }).get(ENDPOINT)!.has(`outbound|5432||${DB}`));
  });

  it("a ServiceEntry resolution NONE is an ORIGINAL_DST cluster, as upstream's", () => {
    const c = clusters(served()).get("outbound|7000||any.example.com")!;
    assert.equal(c.type, "ORIGINAL_DST");
    assert.equal(c.lb_policy, "CLUSTER_PROVIDED");
  });

  it("DISCO_ENABLE_HEADLESS_SERVICE_POD_LISTENERS (default true): a listener per pod of a headless Service's TCP port, TCP to its cluster; not for HTTP ports nor the proxy's own address; false: none", () => {
    const listeners = decoded(served(), LISTENER);
    const pods = [...listeners.keys()].filter((n) => n.startsWith("10.0.1.")).sort();
    assert.deepEqual(pods, ["10.0.1.1_5432", "10.0.1.2_5432"]);
    const l = listeners.get("10.0.1.1_5432")!;
    assert.deepEqual(l.address, { socket_address: { address: "10.0.1.1", port_value: 5432 } });
    assert.equal(l.bind_to_port, false);
    assert.equal(l.traffic_direction, "OUTBOUND");
    const tcp = l.filter_chains[0].filters[0];
    assert.equal(tcp.name, "envoy.filters.network.tcp_proxy");
    assert.equal(tcp.typed_config.cluster, `outbound|5432||${DB}`);
    // A pod of the service is not sent to itself through an outbound listener.
    assert.deepEqual(
      [...served({}, envoy("10.0.1.1")).get(LISTENER)!.keys()].filter((n) => n.startsWith("10.0.1.")),
      ["10.0.1.2_5432"],
    );
    assert.deepEqual(
      [...served({ headlessPodListeners: false }).get(LISTENER)!.keys()].filter((n) => n.startsWith("10.0.1.")),
      [],
    );
  });

  it("a ServiceEntry resolution DNS is a STRICT_DNS cluster of its endpoints (its host when it has none), DNS_ROUND_ROBIN a LOGICAL_DNS one; subsets take their endpoints", () => {
    const byName = clusters(served());
    const api = byName.get("outbound|443||api.example.com")!;
    assert.equal(api.type, "STRICT_DNS");
    assert.equal(api.dns_lookup_family, "V4_ONLY");
    assert.equal(api.eds_cluster_config, undefined);
    const endpoints = (c: Record<string, any>) =>
      c.load_assignment.endpoints.flatMap((l: any) =>
        l.lb_endpoints.map(
          (e: any) => `${e.endpoint.address.socket_address.address}:${e.endpoint.address.socket_address.port_value}/${e.load_balancing_weight}`,
        ),
      );
    assert.deepEqual(endpoints(api), ["a.api.example.com:443/1", "b.api.example.com:443/3"]);
    assert.equal(api.load_assignment.endpoints[0].load_balancing_weight, 4, "the locality carries its endpoints' weight");
    assert.deepEqual(endpoints(byName.get("outbound|443|v2|api.example.com")!), ["b.api.example.com:443/3"]);
    assert.deepEqual(endpoints(byName.get("outbound|80||bare.example.com")!), ["bare.example.com:80/1"]);
    const legacy = byName.get("outbound|9000||legacy.example.com")!;
    assert.equal(legacy.type, "LOGICAL_DNS");
    assert.deepEqual(endpoints(legacy), ["legacy.example.com:9000/1"]);
  });

  it("DISCO_RESPECT_DNS_TTL (default true): every DNS cluster (ServiceEntry DNS, a remote filter module's host, a remote JWKS host) has respect_dns_ttl; false leaves it out; EDS clusters never", () => {
    const remote = { module: { remote: { uri: "https://modules.example.com/filter.wasm", sha256: "0".repeat(64), cluster: MODULE_CLUSTER } } };
    const ttl = (respectDnsTtl?: boolean) => {
      const byName = clusters(served(respectDnsTtl === undefined ? {} : { respectDnsTtl }, envoy(), remote, REMOTE_JWKS));
      return [
        "outbound|443||api.example.com",
        "outbound|9000||legacy.example.com",
        MODULE_CLUSTER,
        JWKS_CLUSTER,
        "outbound|80||web.shop.svc.cluster.local",
      ].map((n) => byName.get(n)!.respect_dns_ttl === true);
    };
    assert.deepEqual(ttl(), [true, true, true, true, false]);
    assert.deepEqual(ttl(false), [false, false, false, false, false]);
    assert.equal(clusters(served({}, envoy(), remote)).get(MODULE_CLUSTER)!.type, "STRICT_DNS");
  });

  it("DISCO_FILTER_GATEWAY_CLUSTER_CONFIG (default false): a gateway gets every cluster; true: only those its Gateways' VirtualServices route or mirror to; sidecars are not filtered", () => {
    const all = outbound(served());
    assert.deepEqual(outbound(served({}, gateway)), all);
    assert.deepEqual(outbound(served({ filterGatewayClusters: true }, gateway)), [
      "outbound|80||bare.example.com",
      "outbound|80||web.shop.svc.cluster.local",
      "outbound|9000||legacy.example.com",
    ]);
    assert.deepEqual(outbound(served({ filterGatewayClusters: true })), all, "a sidecar keeps every cluster");
    // The clusters every proxy needs stay.
    for (const name of ["hub_server", "PassthroughCluster", "BlackHoleCluster"])
      assert.ok(served({ filterGatewayClusters: true }, gateway).get(CLUSTER)!.has(name));
    // A gateway no Gateway selects routes nowhere.
    assert.deepEqual(outbound(served({ filterGatewayClusters: true }, envoy("10.0.0.21", "router", { app: "other" }))), []);
  });

  it("DISCO_SCOPE_GATEWAY_TO_NAMESPACE (default false): a gateway workload is selected by Gateways of every namespace; true: of its own only", () => {
    const filtered = (scopeGatewayToNamespace: boolean) => outbound(served({ filterGatewayClusters: true, scopeGatewayToNamespace }, gateway));
    assert.ok(filtered(false).includes("outbound|80||bare.example.com"), "partner's Gateway selects the shop gateway too");
    assert.deepEqual(filtered(true), ["outbound|80||web.shop.svc.cluster.local"]);
  });
});
