import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import * as grpc from "@grpc/grpc-js";
import { HealthImplementation } from "grpc-health-check";
import { AggregatedDiscoveryService } from "../../host/discovery/ads_server.ts";
import { proxylessResources, type XdsService } from "../../host/discovery/proxyless.ts";
import { shutdownGrpcServer } from "../../host/wire/raw_grpc.ts";

// A real proxyless gRPC client (@grpc/grpc-js-xds) resolves
// xds:///<host>:<port> through our ADS and calls the endpoint it was given;
// when the endpoint changes, the next call goes to the new one.

const HOST = "hubs.mesh-system.svc.cluster.local";
const PORT = 9091;

async function listen(server: grpc.Server, credentials = grpc.ServerCredentials.createInsecure()): Promise<number> {
  return new Promise((resolve, reject) => server.bindAsync("127.0.0.1:0", credentials, (e, port) => (e ? reject(e) : resolve(port))));
}

/** A gRPC server whose health service answers SERVING for `who`, so a call tells which one it reached. */
async function namedBackend(who: string): Promise<{ server: grpc.Server; port: number }> {
  const server = new grpc.Server();
  new HealthImplementation({ [who]: "SERVING" }).addToServer(server);
  return { server, port: await listen(server) };
}

/** The proxyless client process: one health check per call, answered in order. */
class ProxylessClient {
  private readonly answers: string[] = [];
  private readonly waiting: Array<(line: string) => void> = [];
  constructor(readonly child: ChildProcessWithoutNullStreams) {
    createInterface({ input: child.stdout }).on("line", (line) => {
      const waiter = this.waiting.shift();
      if (waiter) waiter(line);
      else this.answers.push(line);
    });
  }
  check(who: string): Promise<string> {
    this.child.stdin.write(`${who}\n`);
    return new Promise((resolve) => this.waiting.push(resolve));
  }
}
describe("ADS for proxyless gRPC clients", { timeout: 600_000 }, () => {
  let ads: grpc.Server;
  let discovery: AggregatedDiscoveryService;
  let a: { server: grpc.Server; port: number };
  let b: { server: grpc.Server; port: number };
  let client: ProxylessClient;
  const acks: string[] = [];
  const service = (port: number): XdsService[] => [{ host: HOST, port: PORT, endpoints: [{ address: "127.0.0.1", port }] }];

  before(async () => {
    a = await namedBackend("backend-a");
    b = await namedBackend("backend-b");
    const resources = proxylessResources(service(a.port));
    discovery = new AggregatedDiscoveryService(() => resources, { acked: (_n, type) => acks.push(type) });
    ads = new grpc.Server();
    discovery.addTo(ads);
    const adsPort = await listen(ads);
    const bootstrap = JSON.stringify({
      xds_servers: [{ server_uri: `127.0.0.1:${adsPort}`, channel_creds: [{ type: "insecure" }], server_features: ["xds_v3"] }],
      node: { id: "proxyless~127.0.0.1~client.test~test.svc.cluster.local", cluster: "client", locality: {}, metadata: { GENERATOR: "grpc" } },
    });
    const script = join(import.meta.dirname, "support", "proxyless_client.ts");
    const child = spawn(process.execPath, ["--import", "tsx", script, `xds:///${HOST}:${PORT}`], {
      env: { ...process.env, GRPC_XDS_BOOTSTRAP_CONFIG: bootstrap },
    });
    child.stderr.resume();
    client = new ProxylessClient(child);
  });

  after(async () => {
    client?.child.kill("SIGKILL");
    await Promise.all([ads, a?.server, b?.server].filter(Boolean).map((s) => shutdownGrpcServer(s!, 1000)));
  });

  it("resolves the listener, route, cluster and endpoints, and reaches the endpoint", async () => {
    assert.equal(await client.check("backend-a"), "SERVING");
    for (const type of ["Listener", "RouteConfiguration", "Cluster", "ClusterLoadAssignment"]) {
      assert.ok(
        acks.some((t) => t.endsWith(type)),
        `${type} acknowledged: ${acks.join(", ")}`,
      );
    }
    const [connection] = discovery.state();
    assert.equal(connection.node.id, "proxyless~127.0.0.1~client.test~test.svc.cluster.local");
    assert.equal(connection.node.metadata.GENERATOR, "grpc");
  });

  it("after the endpoint changes, the next calls reach the new backend", async () => {
    discovery.push(() => proxylessResources(service(b.port)));
    let answer = "";
    for (let i = 0; i < 600 && answer !== "SERVING"; i++) {
      answer = await client.check("backend-b");
      if (answer !== "SERVING") await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(answer, "SERVING", "backend-b reached");
  });
});
