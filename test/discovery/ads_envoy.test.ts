import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import type protobuf from "protobufjs";
import { DISCOVERY_BIN } from "../../host/demo/binaries.ts";
import { CLUSTER, ENDPOINT, EXTENSION_CONFIG, LISTENER, ROUTE } from "../../host/discovery/type_urls.ts";
import { FilterModule, RELEASE_WASM } from "../../host/wasm/filter_module.ts";
import { decodeAnyStrict, envoyRoot } from "../support/envoy_protos.ts";
import { type Daemon, startDaemon, tempDir } from "../support/processes.ts";
import { type AdsResponse, RawAdsClient } from "./support/raw_ads_client.ts";
import { SIDE_LISTENERS_OFF } from "./support/daemon_args.ts";

// disco-discovery serving an Envoy sidecar (real daemon, real gRPC on
// loopback, the ADS client an Envoy would be): upstream's bookinfo sample and
// the demo's hub client resources in the folder; every resource served
// decodes with Envoy's own v3 protos, every Any known; the filter comes by
// ECDS, so a policy change re-sends the extension configuration and no listener.

const ROOT = join(import.meta.dirname, "..", "..");
const UPSTREAM = join(ROOT, "test", "cli", "fixtures", "upstream");
const REVIEWS = "reviews.default.svc.cluster.local";

const REVIEWS_ROUTES = `apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata: {name: reviews}
spec:
  hosts: [reviews]
  http:
  - match: [{headers: {end-user: {exact: jason}}}]
    route: [{destination: {host: reviews, subset: v2}}]
  - route:
    - {destination: {host: reviews, subset: v1}, weight: 75}
    - {destination: {host: reviews, subset: v3}, weight: 25}
    timeout: 2.5s
    retries: {attempts: 3, perTryTimeout: 1s, retryOn: "5xx,connect-failure"}
---
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: {name: hubs, namespace: mesh-system}
spec:
  hosts: [hubs.mesh-system.svc.cluster.local]
  ports: [{number: 9091, name: grpc, protocol: GRPC}]
  resolution: STATIC
  location: MESH_INTERNAL
  endpoints: [{address: 127.0.0.1}]
`;

/** What an Envoy reports: upstream's node id for a pod of reviews-v2, user agent `envoy`. */
const ENVOY_NODE = {
  id: "sidecar~10.1.0.7~reviews-v2-5b667bcbf8-xq2sn.default~default.svc.cluster.local",
  cluster: "reviews.default",
  user_agent_name: "envoy",
};

interface DiscoveryListening {
  grpc: string;
}

function startDiscovery(dir: string, extra: string[] = []): Promise<Daemon<DiscoveryListening>> {
  return startDaemon<DiscoveryListening>(
    DISCOVERY_BIN,
    ["discovery", "--configDir", dir, "--grpcAddr", "127.0.0.1:0", "--httpAddr", "", ...SIDE_LISTENERS_OFF, ...extra],
    "disco-discovery listening: ",
    undefined,
    { ...process.env, DISCO_DEBOUNCE_AFTER: "100ms" },
  );
}

function folder(): string {
  const dir = tempDir("disco-envoy-");
  for (const f of ["bookinfo.yaml", "bookinfo-networking.yaml"]) copyFileSync(join(UPSTREAM, f), join(dir, f));
  copyFileSync(join(ROOT, "host", "demo", "petstore.yaml"), join(dir, "petstore.yaml"));
  writeFileSync(join(dir, "reviews.yaml"), REVIEWS_ROUTES);
  return dir;
}

/** Subscribes an Envoy-like client the way Envoy does (LDS and CDS wildcard, then the names they refer to), ACKing every response. */
async function subscribeAll(c: RawAdsClient): Promise<Map<string, AdsResponse>> {
  const got = new Map<string, AdsResponse>();
  const take = async (type: string) => {
    const r = await c.next();
    assert.equal(r.type_url, type);
    got.set(type, r);
    return r;
  };
  const root = envoyRoot();
  c.send({ type_url: CLUSTER });
  const clusters = (await take(CLUSTER)).resources.map((r) => decodeAnyStrict(root, r).object);
  c.ack(got.get(CLUSTER)!);
  const eds = clusters.filter((x) => x.type === "EDS").map((x) => x.eds_cluster_config.service_name as string);
  c.send({ type_url: ENDPOINT, resource_names: eds });
  c.ack(await take(ENDPOINT), eds);
  c.send({ type_url: LISTENER });
  const listeners = (await take(LISTENER)).resources.map((r) => decodeAnyStrict(root, r).object);
  c.ack(got.get(LISTENER)!);
  const managers = listeners.flatMap((l) => (l.filter_chains ?? []).flatMap((fc: any) => fc.filters.map((f: any) => f.typed_config)));
  const routeNames = [...new Set(managers.flatMap((m: any) => (m.rds ? [m.rds.route_config_name as string] : [])))];
  const extensionNames = [...new Set(managers.flatMap((m: any) => (m.http_filters ?? []).flatMap((f: any) => (f.config_discovery ? [f.name as string] : []))))];
  c.send({ type_url: ROUTE, resource_names: routeNames });
  c.ack(await take(ROUTE), routeNames);
  c.send({ type_url: EXTENSION_CONFIG, resource_names: extensionNames });
  c.ack(await take(EXTENSION_CONFIG), extensionNames);
  return got;
}

const decodeAll = (root: protobuf.Root, r: AdsResponse) => r.resources.map((x) => decodeAnyStrict(root, x));

describe("disco-discovery serving Envoy sidecars", { timeout: 600_000 }, () => {
  let dir: string;
  let disco: Daemon<DiscoveryListening>;
  let channel: grpc.Client;
  let root: protobuf.Root;

  before(async () => {
    root = envoyRoot();
    dir = folder();
    disco = await startDiscovery(dir);
    channel = new grpc.Client(disco.listening.grpc, grpc.credentials.createInsecure());
  });
  after(async () => {
    channel?.close();
    await disco?.stop();
  });

  it("serves listeners, routes, clusters, load assignments and the filter's extension config that decode strictly with Envoy's v3 protos", async () => {
    const c = new RawAdsClient(channel, ENVOY_NODE);
    const got = await subscribeAll(c);
    const anyTypes = new Set<string>();
    const decoded = new Map<string, Array<Record<string, any>>>();
    for (const [type, r] of got) {
      assert.ok(r.resources.length > 0, `${type}: resources served`);
      const objects = decodeAll(root, r);
      for (const o of objects) for (const t of o.anyTypes) anyTypes.add(t);
      decoded.set(
        type,
        objects.map((o) => o.object),
      );
    }
    // Every Any met, whatever its depth, is one of Envoy's types (decodeAnyStrict throws otherwise).
    assert.ok(anyTypes.has("type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm"));
    assert.ok(anyTypes.has("type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"));

    const listeners = decoded.get(LISTENER)!;
    assert.deepEqual(listeners.map((l) => l.name).sort(), ["0.0.0.0_9080", "0.0.0.0_9091", "virtualInbound", "virtualOutbound"]);
    // Inbound: reviews-v2 is selected by the reviews Service (port 9080): the filter by ECDS, then the router, to the app on 127.0.0.1.
    const inbound = listeners.find((l) => l.name === "virtualInbound")!;
    // No PeerAuthentication in the folder: PERMISSIVE, mutual TLS and plain text on 9080, mutual TLS or not for the passthrough.
    assert.deepEqual(
      inbound.filter_chains.map((fc: any) => [fc.filter_chain_match.destination_port, fc.filter_chain_match.transport_protocol]),
      [
        [9080, "tls"],
        [9080, "raw_buffer"],
        [undefined, "tls"],
      ],
    );
    const inboundHcm = inbound.filter_chains[0].filters[0].typed_config;
    assert.deepEqual(
      inboundHcm.http_filters.map((f: any) => f.name),
      ["mesh.hub_client", "envoy.filters.http.router"],
    );
    assert.deepEqual(inboundHcm.http_filters[0].config_discovery.type_urls, ["type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm"]);
    assert.ok(inboundHcm.http_filters[0].config_discovery.config_source.ads);
    assert.equal(inboundHcm.route_config.virtual_hosts[0].routes[0].route.cluster, "inbound|9080||");
    // Outbound 9080: first upstream's loop guard (connections to the pod's own address are dropped), then RDS over ADS, the same filters.
    const outbound = listeners.find((l) => l.name === "0.0.0.0_9080")!;
    assert.deepEqual(outbound.filter_chains[0].filter_chain_match.prefix_ranges, [{ address_prefix: "10.1.0.7", prefix_len: 32 }]);
    assert.equal(outbound.filter_chains[0].filters[0].typed_config.cluster, "BlackHoleCluster");
    const outboundHcm = outbound.filter_chains[1].filters[0].typed_config;
    assert.equal(outboundHcm.rds.route_config_name, "9080");
    assert.deepEqual(
      outboundHcm.http_filters.map((f: any) => f.name),
      ["mesh.hub_client", "envoy.filters.http.router"],
    );

    // Routes from the VirtualService: the header match to subset v2, then 75/25 between v1 and v3 with timeout and retries.
    const route = decoded.get(ROUTE)!.find((r) => r.name === "9080")!;
    const reviews = route.virtual_hosts.find((v: any) => v.name === `${REVIEWS}:9080`);
    assert.ok(reviews.domains.includes("reviews"), "a client in reviews' namespace may use the short name");
    assert.ok(reviews.domains.includes(`${REVIEWS}:9080`));
    const [byUser, split] = reviews.routes;
    assert.deepEqual(byUser.match.headers, [{ name: "end-user", string_match: { exact: "jason" } }]);
    assert.equal(byUser.route.cluster, `outbound|9080|v2|${REVIEWS}`);
    assert.deepEqual(
      split.route.weighted_clusters.clusters.map((w: any) => [w.name, w.weight]),
      [
        [`outbound|9080|v1|${REVIEWS}`, 75],
        [`outbound|9080|v3|${REVIEWS}`, 25],
      ],
    );
    assert.equal(split.route.timeout, "2.5s");
    assert.deepEqual(split.route.retry_policy, { retry_on: "5xx,connect-failure", num_retries: 3, per_try_timeout: "1s" });
    // A service without a VirtualService goes to its own cluster.
    const ratings = route.virtual_hosts.find((v: any) => v.name === "ratings.default.svc.cluster.local:9080");
    assert.equal(ratings.routes[0].route.cluster, "outbound|9080||ratings.default.svc.cluster.local");

    // Clusters: the subsets of the DestinationRule, the hub as gRPC, hub_server.
    const clusters = new Map(decoded.get(CLUSTER)!.map((c) => [c.name as string, c]));
    for (const name of [`outbound|9080|v1|${REVIEWS}`, `outbound|9080|v2|${REVIEWS}`, "inbound|9080||", "hub_server", "PassthroughCluster"])
      assert.ok(clusters.has(name), name);
    const hub = clusters.get("outbound|9091||hubs.mesh-system.svc.cluster.local")!;
    assert.ok(
      hub.typed_extension_protocol_options["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"].explicit_http_config.http2_protocol_options,
      "gRPC ports are HTTP/2",
    );
    const hubEndpoints = decoded.get(ENDPOINT)!.find((e) => e.cluster_name === "outbound|9091||hubs.mesh-system.svc.cluster.local")!;
    assert.equal(hubEndpoints.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.address, "127.0.0.1");

    // The filter: the module from /etc/mesh/filter.wasm with the folder's hub client configuration, which the module accepts.
    const [extension] = decoded.get(EXTENSION_CONFIG)!;
    assert.equal(extension.name, "mesh.hub_client");
    const plugin = extension.typed_config.config;
    assert.equal(plugin.root_id, "mesh.hub_client");
    assert.deepEqual(plugin.vm_config.code, { local: { filename: "/etc/mesh/filter.wasm" } });
    const module = FilterModule.load();
    const compiled = module.configure(plugin.configuration.value);
    assert.ok("handle" in compiled, "error" in compiled ? compiled.error : "");
    module.release(compiled.handle);
    assert.equal(JSON.parse(plugin.configuration.value).httpClientConfig.defaultDestinationService, "petstore.demo.svc.cluster.local");
    c.stream.end();
  });

  it("a policy change pushes a new TypedExtensionConfig version and leaves listeners, routes and clusters alone", async () => {
    const c = new RawAdsClient(channel, ENVOY_NODE);
    const before = await subscribeAll(c);
    const petstore = readFileSync(join(dir, "petstore.yaml"), "utf8");
    assert.ok(petstore.includes("charge: 5"));
    writeFileSync(join(dir, "petstore.yaml"), petstore.replace("charge: 5", "charge: 7"));
    const pushed = await c.next();
    assert.equal(pushed.type_url, EXTENSION_CONFIG, "the first response after the change is the extension config");
    assert.notEqual(pushed.version_info, before.get(EXTENSION_CONFIG)!.version_info);
    const plugin = decodeAnyStrict(root, pushed.resources[0]).object.typed_config.config;
    const quotaSpec = JSON.parse(plugin.configuration.value).resources.find((r: any) => r.kind === "QuotaSpec");
    assert.deepEqual(quotaSpec.spec.rules[1].quotas[0], { quota: "writes", charge: 7 });
    c.ack(pushed, ["mesh.hub_client"]);
    // A probe whose answer comes after anything else the push sent: only EDS answers it.
    c.send({ type_url: ENDPOINT, resource_names: ["outbound|9091||hubs.mesh-system.svc.cluster.local"] });
    const probe = await c.next();
    assert.equal(probe.type_url, ENDPOINT, "no listener, route or cluster was re-sent");
    c.stream.end();
  });

  it("an AuthorizationPolicy written to the folder is pushed to the Envoy as RBAC filters before the module on its inbound listener", async () => {
    const c = new RawAdsClient(channel, ENVOY_NODE);
    await subscribeAll(c);
    writeFileSync(
      join(dir, "reviews-viewer.yaml"),
      `apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: {name: reviews-viewer, namespace: default}
spec:
  selector: {matchLabels: {app: reviews}}
  rules:
  - from: [{source: {principals: ["cluster.local/ns/default/sa/bookinfo-productpage"]}}]
    to: [{operation: {methods: ["GET"]}}]
`,
    );
    let pushed: AdsResponse;
    do pushed = await c.next();
    while (pushed.type_url !== LISTENER);
    const inbound = decodeAll(root, pushed)
      .map((l) => l.object)
      .find((l) => l.name === "virtualInbound")!;
    const filters = inbound.filter_chains[0].filters[0].typed_config.http_filters;
    assert.deepEqual(
      filters.map((f: any) => f.name),
      ["envoy.filters.http.rbac", "mesh.hub_client", "envoy.filters.http.router"],
    );
    assert.deepEqual(Object.keys(filters[0].typed_config.rules.policies), ["ns[default]-policy[reviews-viewer]-rule[0]"]);
    c.stream.end();
  });

  it("tells Envoy from a proxyless gRPC client by the node: the proxyless one gets API listeners", async () => {
    const c = new RawAdsClient(channel, {
      id: "sidecar~10.1.0.9~client.default~default.svc.cluster.local",
      user_agent_name: "gRPC Node Pure JS",
      metadata: { fields: { GENERATOR: { string_value: "grpc" } } },
    });
    c.send({ type_url: LISTENER });
    const listeners = decodeAll(root, await c.next()).map((l) => l.object);
    assert.ok(
      listeners.some((l) => l.name === `${REVIEWS}:9080` && l.api_listener),
      "an API listener per service host and port",
    );
    assert.ok(!listeners.some((l) => l.name === "virtualInbound"));
    c.stream.end();
  });
});

describe("disco-discovery --filterModule https://…", { timeout: 600_000 }, () => {
  it("serves the module as a remote source checked by this build's sha256, with the cluster it is fetched through", async () => {
    const disco = await startDiscovery(folder(), ["--filterModule", "https://modules.example.com:8443/filter.wasm"]);
    const channel = new grpc.Client(disco.listening.grpc, grpc.credentials.createInsecure());
    try {
      const root = envoyRoot();
      const c = new RawAdsClient(channel, ENVOY_NODE);
      const got = await subscribeAll(c);
      const [extension] = decodeAll(root, got.get(EXTENSION_CONFIG)!).map((x) => x.object);
      const remote = extension.typed_config.config.vm_config.code.remote;
      assert.equal(remote.sha256, createHash("sha256").update(readFileSync(RELEASE_WASM)).digest("hex"));
      assert.equal(remote.http_uri.uri, "https://modules.example.com:8443/filter.wasm");
      const cluster = decodeAll(root, got.get(CLUSTER)!)
        .map((x) => x.object)
        .find((x) => x.name === remote.http_uri.cluster)!;
      assert.equal(cluster.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value, 8443);
      assert.equal(cluster.transport_socket.typed_config["@type"], "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext");
      c.stream.end();
    } finally {
      channel.close();
      await disco.stop();
    }
  });
});
