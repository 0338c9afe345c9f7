import assert from "node:assert/strict";
import { copyFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { HealthImplementation } from "grpc-health-check";
import type protobuf from "protobufjs";
import { DISCOVERY_BIN } from "../../host/demo/binaries.ts";
import { CLUSTER, ENDPOINT, LISTENER, ROUTE } from "../../host/discovery/type_urls.ts";
import { shutdownGrpcServer } from "../../host/wire/raw_grpc.ts";
import { decodeAnyStrict, envoyRoot } from "../support/envoy_protos.ts";
import { type Daemon, spawnOwned, startDaemon, stopOwned, tempDir, waitFor } from "../support/processes.ts";
import { type AdsResponse, RawAdsClient } from "./support/raw_ads_client.ts";
import { SIDE_LISTENERS_OFF } from "./support/daemon_args.ts";

// disco-discovery --domain example.internal (a real daemon, real gRPC on
// loopback): every service host it serves (clusters, load assignments,
// virtual hosts, the hub_server cluster, the API listeners of proxyless
// clients) is <service>.<namespace>.svc.example.internal, short hosts of the
// folder's VirtualService and DestinationRule resolve in that domain, and a
// real proxyless gRPC client (@grpc/grpc-js-xds) calls
// xds:///hubs.mesh-system.svc.example.internal:9091. Everything decodes with
// Envoy's v3 protos. The default domain is covered by ads_envoy.test.ts and
// test/e2e/discovery.test.ts.

const ROOT = join(import.meta.dirname, "..", "..");
const UPSTREAM = join(ROOT, "test", "cli", "fixtures", "upstream");
const DOMAIN = "example.internal";
const REVIEWS = `reviews.default.svc.${DOMAIN}`;
const HUBS = `hubs.mesh-system.svc.${DOMAIN}`;

const REVIEWS_ROUTES = `apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata: {name: reviews}
spec:
  hosts: [reviews]
  http:
  - match: [{headers: {end-user: {exact: jason}}}]
    route: [{destination: {host: reviews, subset: v2}}]
  - route: [{destination: {host: reviews, subset: v1}}]
`;

const hubEntry = (port: number) => `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: {name: hubs, namespace: mesh-system}
spec:
  hosts: [${HUBS}]
  ports: [{number: 9091, name: grpc, protocol: GRPC}]
  location: MESH_INTERNAL
  resolution: STATIC
  endpoints: [{address: 127.0.0.1, ports: {grpc: ${port}}}]
`;

/** An Envoy of a reviews-v2 pod whose agent runs with --domain default.svc.example.internal. */
const ENVOY_NODE = { id: `sidecar~10.1.0.7~reviews-v2-5b667bcbf8-xq2sn.default~default.svc.${DOMAIN}`, cluster: "reviews.default", user_agent_name: "envoy" };
const PROXYLESS_NODE = {
  id: `proxyless~127.0.0.1~client.demo~demo.svc.${DOMAIN}`,
  cluster: "client",
  user_agent_name: "gRPC Node",
  metadata: { GENERATOR: "grpc" },
};

interface DiscoveryListening {
  grpc: string;
}

async function next(c: RawAdsClient, type: string): Promise<AdsResponse> {
  const r = await c.next();
  assert.equal(r.type_url, type);
  return r;
}

describe("disco-discovery --domain example.internal", { timeout: 600_000 }, () => {
  let disco: Daemon<DiscoveryListening>;
  let channel: grpc.Client;
  let hub: grpc.Server;
  let root: protobuf.Root;

  before(async () => {
    root = envoyRoot();
    hub = new grpc.Server();
    new HealthImplementation({ "mesh.hub.v1.Hub": "SERVING" }).addToServer(hub);
    const hubPort = await new Promise<number>((resolve, reject) =>
      hub.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
    );
    const dir = tempDir("disco-domain-");
    for (const f of ["bookinfo.yaml", "bookinfo-networking.yaml"]) copyFileSync(join(UPSTREAM, f), join(dir, f));
    writeFileSync(join(dir, "reviews.yaml"), REVIEWS_ROUTES);
    writeFileSync(join(dir, "hubs.yaml"), hubEntry(hubPort));
    disco = await startDaemon<DiscoveryListening>(
      DISCOVERY_BIN,
      ["discovery", "--configDir", dir, "--domain", DOMAIN, "--grpcAddr", "127.0.0.1:0", "--httpAddr", "", ...SIDE_LISTENERS_OFF],
      "disco-discovery listening: ",
    );
    channel = new grpc.Client(disco.listening.grpc, grpc.credentials.createInsecure());
  });
  after(async () => {
    channel?.close();
    await disco?.stop();
    if (hub) await shutdownGrpcServer(hub, 1000);
  });

  it("serves an Envoy clusters, load assignments, listeners and routes named in the domain, decoding with Envoy's v3 protos", async () => {
    const c = new RawAdsClient(channel, ENVOY_NODE);
    const decode = (r: AdsResponse) => r.resources.map((x) => decodeAnyStrict(root, x).object);
    c.send({ type_url: CLUSTER });
    const cdsResponse = await next(c, CLUSTER);
    const clusters = decode(cdsResponse);
    c.ack(cdsResponse);
    const eds = clusters.filter((x) => x.type === "EDS").map((x) => x.eds_cluster_config.service_name as string);
    c.send({ type_url: ENDPOINT, resource_names: eds });
    const endpoints = decode(await next(c, ENDPOINT));
    c.send({ type_url: LISTENER });
    const listeners = decode(await next(c, LISTENER));
    c.send({ type_url: ROUTE, resource_names: ["9080"] });
    const routes = decode(await next(c, ROUTE));
    c.stream.end();

    const names = new Set(clusters.map((x) => x.name as string));
    // The DestinationRule's `host: reviews` and its subsets, resolved in the domain.
    for (const name of [`outbound|9080||${REVIEWS}`, `outbound|9080|v1|${REVIEWS}`, `outbound|9080|v2|${REVIEWS}`, `outbound|9091||${HUBS}`, "hub_server"])
      assert.ok(names.has(name), `${name} in ${[...names].join(", ")}`);
    const hubServer = clusters.find((x) => x.name === "hub_server")!;
    assert.equal(hubServer.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.address, HUBS);
    const hubEndpoints = endpoints.find((e) => e.cluster_name === `outbound|9091||${HUBS}`)!;
    assert.equal(hubEndpoints.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.address, "127.0.0.1");
    assert.ok(listeners.some((l) => l.name === "0.0.0.0_9080"));

    // The VirtualService's short `reviews` host and destinations, in the domain; the short forms a client of the namespace uses.
    const reviews = routes[0].virtual_hosts.find((v: any) => v.name === `${REVIEWS}:9080`);
    assert.ok(reviews, `virtual hosts: ${routes[0].virtual_hosts.map((v: any) => v.name).join(", ")}`);
    for (const d of [REVIEWS, `${REVIEWS}:9080`, "reviews.default.svc", "reviews.default", "reviews"]) assert.ok(reviews.domains.includes(d), d);
    assert.deepEqual(
      reviews.routes.map((r: any) => r.route.cluster),
      [`outbound|9080|v2|${REVIEWS}`, `outbound|9080|v1|${REVIEWS}`],
    );

    // No service host of the default domain anywhere (the SPIFFE trust domain is another setting).
    const served = JSON.stringify([clusters, endpoints, listeners, routes]);
    assert.equal(served.includes("svc.cluster.local"), false, "nothing served names svc.cluster.local");
  });

  it("serves proxyless clients API listeners <host>:<port> in the domain", async () => {
    const c = new RawAdsClient(channel, PROXYLESS_NODE);
    c.send({ type_url: LISTENER });
    const listeners = (await next(c, LISTENER)).resources.map((x) => decodeAnyStrict(root, x).object);
    c.stream.end();
    const names = listeners.map((l) => l.name as string);
    for (const name of [`${HUBS}:9091`, `${REVIEWS}:9080`]) assert.ok(names.includes(name), `${name} in ${names.join(", ")}`);
    assert.equal(
      names.some((n) => n.includes("svc.cluster.local")),
      false,
    );
  });

  it(`a proxyless gRPC client calls xds:///${HUBS}:9091 and reaches the hub the ServiceEntry describes`, async () => {
    const bootstrap = JSON.stringify({
      xds_servers: [{ server_uri: disco.listening.grpc, channel_creds: [{ type: "insecure" }], server_features: ["xds_v3"] }],
      node: { id: PROXYLESS_NODE.id, cluster: "client", locality: {}, metadata: { GENERATOR: "grpc" } },
    });
    const script = join(import.meta.dirname, "support", "proxyless_client.ts");
    const child = spawnOwned(process.execPath, ["--import", "tsx", script, `xds:///${HUBS}:9091`], {
      env: { ...process.env, GRPC_XDS_BOOTSTRAP_CONFIG: bootstrap },
      stdio: ["pipe", "pipe", "pipe"],
    });
    try {
      child.stderr!.resume();
      const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
      const check = async () => {
        child.stdin!.write("mesh.hub.v1.Hub\n");
        return String((await lines.next()).value);
      };
      // The first call may race the xDS client's first resolution on a loaded machine: poll until it answers.
      const answer = await waitFor("the hub reached through xDS", async () => {
        const a = await check();
        return a === "SERVING" ? a : undefined;
      });
      assert.equal(answer, "SERVING");
    } finally {
      await stopOwned(child);
    }
  });
});
