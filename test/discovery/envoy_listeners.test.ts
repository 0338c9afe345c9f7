// The listener-side variables of disco-discovery, on what an Envoy sidecar
// is served: protocol sniffing per direction and its inbound timeout
// (DISCO_ENABLE_PROTOCOL_SNIFFING_FOR_OUTBOUND / _FOR_INBOUND,
// DISCO_INBOUND_PROTOCOL_DETECTION_TIMEOUT), the pod-address loop guard
// (DISCO_RESTRICT_POD_UP_TRAFFIC_LOOP), use_remote_address
// (DISCO_SIDECAR_USE_REMOTE_ADDRESS), the Redis and Thrift proxies
// (DISCO_ENABLE_KVSTORE_FILTER, DISCO_ENABLE_RPC_FILTER), and why the MySQL
// proxy and TCP metadata exchange are refused. Each in its default and
// changed shape, every listener decoded strictly with Envoy's v3 protos;
// then the real daemon with the variables set, over a real ADS stream.
import { DEFAULT_DOMAIN } from "../../host/mesh/hosts.ts";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { filterChecks } from "../../host/config/catalog.ts";
import { parseDocuments } from "../../host/config/documents.ts";
import { DISCOVERY_BIN } from "../../host/demo/binaries.ts";
import type { EnvoyServing } from "../../host/discovery/envoy_sidecar.ts";
import { meshSnapshot, resourcesFor } from "../../host/discovery/mesh_snapshot.ts";
import type { ResourceSet } from "../../host/discovery/resource_set.ts";
import { CLUSTER, LISTENER, ROUTE } from "../../host/discovery/type_urls.ts";
import { loadDocuments } from "../../host/config/config_dir.ts";
import { FilterModule } from "../../host/wasm/filter_module.ts";
import { decodeAnyStrict, envoyRoot } from "../support/envoy_protos.ts";
import { type Daemon, startDaemon, tempDir } from "../support/processes.ts";
import { SIDE_LISTENERS_OFF } from "./support/daemon_args.ts";
import { RawAdsClient } from "./support/raw_ads_client.ts";

const MESH = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {clusterIP: 10.96.0.10, ports: [{port: 80, name: http, targetPort: 8080}], selector: {app: web}}
---
apiVersion: v1
kind: Service
metadata: {name: legacy, namespace: shop}
spec: {clusterIP: 10.96.0.20, ports: [{port: 9000, name: legacy}], selector: {app: web}}
---
apiVersion: v1
kind: Service
metadata: {name: cache, namespace: shop}
spec: {clusterIP: 10.96.0.30, ports: [{port: 6379, name: redis}]}
---
apiVersion: v1
kind: Service
metadata: {name: ledger, namespace: shop}
spec: {clusterIP: 10.96.0.40, ports: [{port: 9090, name: thrift-ledger}]}
---
apiVersion: v1
kind: Service
metadata: {name: orders, namespace: shop}
spec: {clusterIP: 10.96.0.50, ports: [{port: 3306, name: mysql}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: shop, labels: {app: web}}
spec: {containers: [{name: web, ports: [{containerPort: 8080}, {containerPort: 9000}]}]}
`;
const STRICT = `---
apiVersion: security.mesh.io/v1
kind: PeerAuthentication
metadata: {name: strict, namespace: shop}
spec: {mtls: {mode: STRICT}}
`;

const HCM = "envoy.filters.network.http_connection_manager";
const WEB_1 = { id: "sidecar~10.0.0.9~web-1.shop~shop.svc.cluster.local", cluster: "", metadata: {}, userAgentName: "envoy" };
const LEGACY = "outbound|9000||legacy.shop.svc.cluster.local";

const checks = filterChecks(FilterModule.load());
const load = (text: string) => loadDocuments(parseDocuments(text, "mesh.yaml"), ["mesh.yaml"], checks, DEFAULT_DOMAIN);

type Obj = Record<string, any>;

function served(serving: Partial<EnvoyServing> = {}, text = MESH, node = WEB_1): ResourceSet {
  return resourcesFor(meshSnapshot(1, load(text), "mesh-system", { serving }), node);
}

/** Every listener decoded strictly (an unknown field or Any type throws), by name, with the Any types met. */
function listeners(set: ResourceSet): { byName: Map<string, Obj>; anyTypes: Set<string> } {
  const anyTypes = new Set<string>();
  const byName = new Map<string, Obj>();
  for (const [name, r] of set.get(LISTENER)!) {
    const decoded = decodeAnyStrict(envoyRoot(), r.any, name);
    for (const t of decoded.anyTypes) anyTypes.add(t);
    byName.set(name, decoded.object);
  }
  return { byName, anyTypes };
}

const listener = (set: ResourceSet, name: string) => listeners(set).byName.get(name);
const chain = (l: Obj, name: string) => (l.filter_chains as Obj[]).find((c) => c.name === name);
const chainNames = (l: Obj) => (l.filter_chains as Obj[]).map((c) => c.name as string);
const filterNames = (c: Obj) => (c.filters as Obj[]).map((f) => f.name as string);
const listenerFilters = (l: Obj) => ((l.listener_filters ?? []) as Obj[]).map((f) => f.name as string);
const managers = (l: Obj) => (l.filter_chains as Obj[]).flatMap((c) => (c.filters as Obj[]).filter((f) => f.name === HCM).map((f) => f.typed_config));
const port9000 = (l: Obj) => (l.filter_chains as Obj[]).filter((c) => c.filter_chain_match?.destination_port === 9000);

describe("what Envoy's listeners are made of, by disco-discovery's variables", () => {
  it("the defaults: every listener decodes strictly; only sniffed and HTTP ports get outbound listeners (Redis, Thrift, MySQL go through)", () => {
    const { byName, anyTypes } = listeners(served());
    assert.deepEqual([...byName.keys()].sort(), ["0.0.0.0_80", "0.0.0.0_9000", "virtualInbound", "virtualOutbound"]);
    assert.ok(anyTypes.has("type.googleapis.com/envoy.extensions.filters.listener.http_inspector.v3.HttpInspector"));
  });

  it("DISCO_ENABLE_PROTOCOL_SNIFFING_FOR_OUTBOUND (true): an unnamed port gets the HTTP inspector and HTTP/TCP chain pairs; false serves it as TCP", () => {
    const sniffed = listener(served(), "0.0.0.0_9000")!;
    assert.deepEqual(listenerFilters(sniffed), ["envoy.filters.listener.http_inspector"]);
    assert.equal(sniffed.listener_filters_timeout, "0.1s", "upstream's mesh-config protocolDetectionTimeout default");
    assert.equal(sniffed.continue_on_listener_filters_timeout, true);
    assert.deepEqual(chainNames(sniffed), ["0.0.0.0_9000-blackhole", `${LEGACY}-http`, "0.0.0.0_9000-http", `${LEGACY}-tcp`, "0.0.0.0_9000-tcp"]);
    const vip = [{ address_prefix: "10.96.0.20", prefix_len: 32 }];
    assert.deepEqual(chain(sniffed, `${LEGACY}-http`)!.filter_chain_match, { prefix_ranges: vip, application_protocols: ["http/1.1", "h2c"] });
    assert.equal(chain(sniffed, `${LEGACY}-http`)!.filters[0].typed_config.rds.route_config_name, "9000");
    assert.deepEqual(chain(sniffed, "0.0.0.0_9000-http")!.filter_chain_match, { application_protocols: ["http/1.1", "h2c"] });
    assert.deepEqual(chain(sniffed, `${LEGACY}-tcp`)!.filter_chain_match, { prefix_ranges: vip });
    assert.equal(chain(sniffed, `${LEGACY}-tcp`)!.filters[0].typed_config.cluster, LEGACY);
    assert.equal(chain(sniffed, "0.0.0.0_9000-tcp")!.filters[0].typed_config.cluster, "PassthroughCluster", "any other address goes through");
    const routes = served().get(ROUTE)!;
    assert.ok(routes.has("9000"), "the sniffed HTTP is routed by host like any HTTP port");
    // DISCO_HTTP10: HTTP/1.0 is matched only where the connection manager accepts it.
    assert.deepEqual(chain(listener(served({ acceptHttp10: true }), "0.0.0.0_9000")!, "0.0.0.0_9000-http")!.filter_chain_match.application_protocols, [
      "http/1.0",
      "http/1.1",
      "h2c",
    ]);

    const off = served({ sniffOutbound: false });
    const tcp = listener(off, "0.0.0.0_9000")!;
    assert.equal(tcp.listener_filters, undefined);
    assert.equal(tcp.listener_filters_timeout, undefined);
    assert.deepEqual(chainNames(tcp), ["0.0.0.0_9000-blackhole", `${LEGACY}-tcp`, "0.0.0.0_9000-tcp"]);
    assert.deepEqual(filterNames(chain(tcp, `${LEGACY}-tcp`)!), ["envoy.filters.network.tcp_proxy"]);
    assert.ok(!off.get(ROUTE)!.has("9000"), "no HTTP routes for a TCP port");
    assert.ok(off.get(ROUTE)!.has("80"), "named HTTP ports are unchanged");
  });

  it("DISCO_ENABLE_PROTOCOL_SNIFFING_FOR_INBOUND (true) and DISCO_INBOUND_PROTOCOL_DETECTION_TIMEOUT (1s): HTTP and TCP chains per transport on an unnamed container port", () => {
    const inbound = listener(served(), "virtualInbound")!;
    assert.deepEqual(listenerFilters(inbound), [
      "envoy.filters.listener.original_dst",
      "envoy.filters.listener.tls_inspector",
      "envoy.filters.listener.http_inspector",
    ]);
    assert.equal(inbound.listener_filters_timeout, "1s");
    assert.equal(inbound.continue_on_listener_filters_timeout, true);
    // PERMISSIVE (no PeerAuthentication): mutual TLS or plain text, each HTTP by application protocol or TCP.
    const chains = port9000(inbound);
    assert.deepEqual(
      chains.map((c) => [
        c.name,
        c.filter_chain_match.transport_protocol,
        c.filter_chain_match.application_protocols ?? [],
        c.transport_socket !== undefined,
        filterNames(c).at(-1),
      ]),
      [
        ["inbound|9000||mtls-http", "tls", ["h2", "http/1.1"], true, HCM],
        ["inbound|9000||-http", "raw_buffer", ["http/1.1", "h2c"], false, HCM],
        ["inbound|9000||mtls-tcp", "tls", [], true, "envoy.filters.network.tcp_proxy"],
        ["inbound|9000||-tcp", "raw_buffer", [], false, "envoy.filters.network.tcp_proxy"],
      ],
    );
    assert.equal(chain(inbound, "inbound|9000||-tcp")!.filters.at(-1).typed_config.cluster, "inbound|9000||");
    assert.ok(served().get(CLUSTER)!.has("inbound|9000||"));
    // The named HTTP port keeps its HTTP-only chains.
    assert.deepEqual(
      chainNames(inbound).filter((n) => n.startsWith("inbound|8080")),
      ["inbound|8080||mtls", "inbound|8080||"],
    );

    // STRICT: every chain requires mutual TLS; the client hello's ALPN tells HTTP from TCP.
    const strict = port9000(listener(served({}, MESH + STRICT), "virtualInbound")!);
    assert.deepEqual(
      strict.map((c) => [c.name, c.filter_chain_match.application_protocols ?? [], c.transport_socket?.name]),
      [
        ["inbound|9000||mtls-http", ["h2", "http/1.1"], "envoy.transport_sockets.tls"],
        ["inbound|9000||mtls-tcp", [], "envoy.transport_sockets.tls"],
      ],
    );

    assert.equal(listener(served({ inboundDetectionTimeoutMs: 250 }), "virtualInbound")!.listener_filters_timeout, "0.25s");

    const off = served({ sniffInbound: false });
    const plain = listener(off, "virtualInbound")!;
    assert.deepEqual(listenerFilters(plain), ["envoy.filters.listener.original_dst", "envoy.filters.listener.tls_inspector"]);
    assert.equal(plain.listener_filters_timeout, undefined);
    assert.equal(plain.continue_on_listener_filters_timeout, undefined);
    assert.deepEqual(port9000(plain), [], "the port passes through as TCP");
    assert.ok(!off.get(CLUSTER)!.has("inbound|9000||"));
  });

  it("DISCO_RESTRICT_POD_UP_TRAFFIC_LOOP (true): every outbound listener first drops connections to the pod's own address; false does not", () => {
    const set = served();
    const own = { filter_chain_match: { prefix_ranges: [{ address_prefix: "10.0.0.9", prefix_len: 32 }] } };
    for (const name of ["virtualOutbound", "0.0.0.0_80", "0.0.0.0_9000"]) {
      const first = listener(set, name)!.filter_chains[0];
      assert.deepEqual(first.filter_chain_match, own.filter_chain_match, name);
      assert.deepEqual(
        first.filters.map((f: Obj) => f.typed_config.cluster),
        ["BlackHoleCluster"],
        name,
      );
    }
    assert.equal(listener(set, "virtualOutbound")!.filter_chains[0].name, "virtualOutbound-blackhole");
    // Another pod of the same workload: its own address; the rest of its resources shared with the first pod's.
    const other = served({}, MESH, { ...WEB_1, id: "sidecar~fd00::7~web-1.shop~shop.svc.cluster.local" });
    assert.deepEqual(listener(other, "virtualOutbound")!.filter_chains[0].filter_chain_match.prefix_ranges, [{ address_prefix: "fd00::7", prefix_len: 128 }]);

    const off = listeners(served({ restrictPodTrafficLoop: false })).byName;
    for (const [name, l] of off)
      assert.ok(!(l.filter_chains as Obj[]).some((c) => c.filters.some((f: Obj) => f.typed_config.cluster === "BlackHoleCluster")), name);
  });

  it("a pod's resources are computed once per workload view; only the outbound listeners differ between two pods", () => {
    const snapshot = meshSnapshot(1, load(MESH), "mesh-system");
    const a = resourcesFor(snapshot, WEB_1);
    const b = resourcesFor(snapshot, { ...WEB_1, id: "sidecar~10.0.0.10~web-1.shop~shop.svc.cluster.local" });
    assert.equal(a.get(LISTENER)!.get("virtualInbound"), b.get(LISTENER)!.get("virtualInbound"));
    assert.equal(a.get(CLUSTER), b.get(CLUSTER));
    assert.notDeepEqual(a.get(LISTENER)!.get("virtualOutbound")!.any.value, b.get(LISTENER)!.get("virtualOutbound")!.any.value);
    assert.equal(resourcesFor(snapshot, WEB_1), a, "the same pod asks again: the same set");
  });

  it("DISCO_SIDECAR_USE_REMOTE_ADDRESS (false): true sets use_remote_address on every outbound connection manager, not on inbound ones", () => {
    const outboundHcms = (set: ResourceSet) => ["0.0.0.0_80", "0.0.0.0_9000"].flatMap((n) => managers(listener(set, n)!));
    assert.equal(outboundHcms(served()).length, 3);
    assert.ok(outboundHcms(served()).every((m) => m.use_remote_address === undefined));
    const on = served({ useRemoteAddress: true });
    assert.ok(outboundHcms(on).every((m) => m.use_remote_address === true));
    assert.ok(managers(listener(on, "virtualInbound")!).every((m) => m.use_remote_address === undefined));
  });

  it("DISCO_ENABLE_KVSTORE_FILTER (false): true gives redis ports redis_proxy, every key to the service's cluster", () => {
    assert.equal(listener(served(), "0.0.0.0_6379"), undefined);
    const { byName, anyTypes } = listeners(served({ kvstoreFilter: true }));
    const redis = byName.get("0.0.0.0_6379")!;
    const cluster = "outbound|6379||cache.shop.svc.cluster.local";
    const c = chain(redis, `${cluster}-tcp`)!;
    assert.deepEqual(c.filter_chain_match.prefix_ranges, [{ address_prefix: "10.96.0.30", prefix_len: 32 }]);
    assert.deepEqual(filterNames(c), ["envoy.filters.network.redis_proxy"]);
    const config = c.filters[0].typed_config;
    assert.equal(config.prefix_routes.catch_all_route.cluster, cluster);
    assert.equal(config.settings.op_timeout, "5s");
    assert.equal(config.latency_in_micros, true);
    assert.ok(anyTypes.has("type.googleapis.com/envoy.extensions.filters.network.redis_proxy.v3.RedisProxy"));
  });

  it("DISCO_ENABLE_RPC_FILTER (false): true gives thrift ports thrift_proxy with the thrift router, every method to the service's cluster", () => {
    assert.equal(listener(served(), "0.0.0.0_9090"), undefined);
    const { byName, anyTypes } = listeners(served({ rpcFilter: true }));
    const cluster = "outbound|9090||ledger.shop.svc.cluster.local";
    const c = chain(byName.get("0.0.0.0_9090")!, `${cluster}-tcp`)!;
    assert.deepEqual(filterNames(c), ["envoy.filters.network.thrift_proxy"]);
    const config = c.filters[0].typed_config;
    // AUTO_TRANSPORT and AUTO_PROTOCOL (detected per connection) are the enums' zero values: absent on the wire.
    assert.equal(config.transport, undefined);
    assert.equal(config.protocol, undefined);
    assert.deepEqual(config.route_config.routes, [{ match: { method_name: "" }, route: { cluster } }]);
    assert.deepEqual(
      config.thrift_filters.map((f: Obj) => f.name),
      ["envoy.filters.thrift.router"],
    );
    assert.ok(anyTypes.has("type.googleapis.com/envoy.extensions.filters.network.thrift_proxy.v3.ThriftProxy"));
    assert.ok(anyTypes.has("type.googleapis.com/envoy.extensions.filters.network.thrift_proxy.router.v3.Router"));
  });

  it("DISCO_ENABLE_SQLDB_FILTER and DISCO_ENABLE_TCP_METADATA_EXCHANGE are refused: their configuration types are not Envoy v3 messages we can decode", () => {
    const root = envoyRoot();
    assert.throws(() => root.lookupType("envoy.extensions.filters.network.mysql_proxy.v3.MySQLProxy"));
    // Only the v2-era MySQL proxy is shipped.
    assert.ok(root.lookupType("envoy.config.filter.network.mysql_proxy.v1alpha1.MySQLProxy"));
    assert.throws(() => root.lookupType("envoy.tcp.metadataexchange.config.MetadataExchange"));
    // mysql ports keep going through the passthrough.
    assert.equal(listener(served({ kvstoreFilter: true, rpcFilter: true }), "0.0.0.0_3306"), undefined);
  });
});

describe("the real disco-discovery with the listener variables set", { timeout: 600_000 }, () => {
  const daemons: Daemon<{ grpc: string }>[] = [];
  const channels: grpc.Client[] = [];
  after(async () => {
    for (const c of channels) c.close();
    for (const d of daemons) await d.stop();
  });

  it("serves an Envoy what the variables say, every listener decoding strictly", async () => {
    const dir = tempDir("disco-listeners-");
    writeFileSync(join(dir, "mesh.yaml"), MESH);
    const env = {
      ...process.env,
      DISCO_INBOUND_PROTOCOL_DETECTION_TIMEOUT: "250ms",
      DISCO_ENABLE_PROTOCOL_SNIFFING_FOR_OUTBOUND: "false",
      DISCO_ENABLE_KVSTORE_FILTER: "true",
      DISCO_ENABLE_RPC_FILTER: "true",
      DISCO_SIDECAR_USE_REMOTE_ADDRESS: "true",
      DISCO_RESTRICT_POD_UP_TRAFFIC_LOOP: "false",
    };
    const d = await startDaemon<{ grpc: string }>(
      DISCOVERY_BIN,
      ["discovery", "--configDir", dir, "--grpcAddr", "127.0.0.1:0", "--httpAddr", "", ...SIDE_LISTENERS_OFF],
      "disco-discovery listening: ",
      undefined,
      env,
    );
    daemons.push(d);
    const channel = new grpc.Client(d.listening.grpc, grpc.credentials.createInsecure());
    channels.push(channel);
    const client = new RawAdsClient(channel, { id: WEB_1.id, cluster: "web.shop", user_agent_name: "envoy" });
    client.send({ type_url: LISTENER });
    const response = await client.next();
    client.ack(response);
    const byName = new Map(response.resources.map((r) => decodeAnyStrict(envoyRoot(), r)).map(({ object }) => [object.name as string, object]));
    assert.deepEqual([...byName.keys()].sort(), ["0.0.0.0_6379", "0.0.0.0_80", "0.0.0.0_9000", "0.0.0.0_9090", "virtualInbound", "virtualOutbound"]);
    assert.equal(byName.get("virtualInbound")!.listener_filters_timeout, "0.25s");
    assert.equal(byName.get("0.0.0.0_9000")!.listener_filters, undefined, "outbound sniffing off: TCP");
    assert.deepEqual(filterNames(chain(byName.get("0.0.0.0_6379")!, "outbound|6379||cache.shop.svc.cluster.local-tcp")!), [
      "envoy.filters.network.redis_proxy",
    ]);
    assert.deepEqual(filterNames(chain(byName.get("0.0.0.0_9090")!, "outbound|9090||ledger.shop.svc.cluster.local-tcp")!), [
      "envoy.filters.network.thrift_proxy",
    ]);
    assert.ok(managers(byName.get("0.0.0.0_80")!).every((m) => m.use_remote_address === true));
    assert.ok(!byName.get("virtualOutbound")!.filter_chains.some((c: Obj) => c.filter_chain_match?.prefix_ranges), "no loop guard");
    client.stream.end();
  });

  it("refuses a bad detection timeout and the refused variables, naming them (exit 2)", () => {
    const dir = tempDir("disco-listeners-bad-");
    const run = (env: Record<string, string>) =>
      spawnSync(process.execPath, [DISCOVERY_BIN, "discovery", "--configDir", dir], { encoding: "utf8", env: { ...process.env, ...env }, timeout: 600_000 });
    const bad = run({ DISCO_INBOUND_PROTOCOL_DETECTION_TIMEOUT: "soon" });
    assert.equal(bad.status, 2, bad.stderr);
    assert.match(bad.stderr, /DISCO_INBOUND_PROTOCOL_DETECTION_TIMEOUT="soon"/);
    // Metadata exchange's spec default (true) asks for what is not served: only false is accepted.
    for (const name of ["DISCO_ENABLE_SQLDB_FILTER", "DISCO_ENABLE_TCP_METADATA_EXCHANGE"]) {
      const r = run({ [name]: "true" });
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`${name}="true": not applicable here: not built: `));
    }
  });
});
