// The sidecar `meshctl orch-inject` writes, run as written (issue 24): its
// command line and environment (the $(VAR)s expanded as the orchestrator
// would) start `disco-agent proxy sidecar` against a real disco-discovery;
// readiness answers on ENVOY_STATUS_PORT, stats on ENVOY_PROMETHEUS_PORT, and
// the app probes the injector rewrote are replayed against a real app on the
// status port. Only the ports (free ones, on loopback), the control plane's
// address and the certificate source (none here: CA_ADDR is dropped; workload
// certificates are tested with the CA) differ from the pod.
import assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import { createServer } from "node:http";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { parseAllDocuments } from "yaml";
import { AGENT_BIN, DISCOVERY_BIN } from "../../host/demo/binaries.ts";
import { addGrpcIntrospection } from "../../host/wire/grpc_introspection.ts";
import { type Daemon, startDaemon, tempDir, waitFor } from "../support/processes.ts";
import { meshctl } from "../cli/cli_golden_support.ts";
import { freePort, get, sidecarConfig } from "../e2e/sidecar_support.ts";

type Obj = Record<string, any>;

const POD = (appPort: number, grpcPort: number, closedPort: number) => `apiVersion: v1
kind: Pod
metadata:
  name: web-0
  namespace: shop
  labels: {app: web}
spec:
  serviceAccountName: web
  containers:
  - name: web
    image: web
    ports:
    - {name: http, containerPort: ${appPort}}
    readinessProbe:
      httpGet: {path: /ready, port: http}
      timeoutSeconds: 10
    livenessProbe:
      tcpSocket: {port: ${closedPort}}
    startupProbe:
      tcpSocket: {port: ${appPort}}
  - name: rpc
    image: rpc
    readinessProbe:
      grpc: {port: ${grpcPort}}
      # The orchestrator's 1-second default is short for a first gRPC channel on a busy test machine.
      timeoutSeconds: 10
`;

/** `$(NAME)` as the orchestrator expands it from the container's environment. */
const expand = (text: string, env: Record<string, string>) => text.replace(/\$\(([A-Z_]+)\)/g, (m, name: string) => env[name] ?? m);

describe("the injected sidecar, run as injected", () => {
  const configDir = tempDir("injected-disco-");
  let disco: Daemon<{ grpc: string; http: string }>;
  let agent: Daemon<{ status: number }>;
  let readyStatus = 200;
  const app = createServer((req, res) => res.writeHead(req.url === "/ready" ? readyStatus : 404).end());
  const rpc = new grpc.Server();
  const health = addGrpcIntrospection(rpc, { services: [], protoFiles: [] });
  let ports: { app: number; grpc: number; closed: number; status: number; envoyStatus: number; prometheus: number };

  before(async () => {
    writeFileSync(join(configDir, "config.yaml"), sidecarConfig("FAIL_OPEN"));
    disco = await startDaemon(
      DISCOVERY_BIN,
      [
        "discovery",
        "--configDir",
        configDir,
        "--grpcAddr",
        "127.0.0.1:0",
        "--httpAddr",
        "127.0.0.1:0",
        "--monitoringAddr",
        "",
        "--secureGrpcAddr",
        "",
        "--httpsAddr",
        "",
        "--ctrlz_port",
        "0",
        "--ctrlz_address",
        "127.0.0.1",
      ],
      "disco-discovery listening: ",
    );
    await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
    const grpcPort = await new Promise<number>((resolve, reject) =>
      rpc.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
    );
    health.setServing(true);
    ports = {
      app: (app.address() as { port: number }).port,
      grpc: grpcPort,
      closed: await freePort(),
      status: await freePort(),
      envoyStatus: await freePort(),
      prometheus: await freePort(),
    };
    const injected = await meshctl(["orch-inject", "-f", "-"], POD(ports.app, ports.grpc, ports.closed));
    assert.equal(injected.status, 0, injected.stderr);
    const pod = parseAllDocuments(injected.stdout)[0].toJS() as Obj;
    const sidecar = pod.spec.containers.find((c: Obj) => c.name === "mesh-proxy");
    const downward: Record<string, string> = {
      POD_NAME: "web-0",
      POD_NAMESPACE: "shop",
      INSTANCE_IP: "127.0.0.1",
      SERVICE_ACCOUNT: "web",
      HOST_IP: "127.0.0.1",
    };
    const env: Record<string, string> = {};
    for (const e of sidecar.env as Obj[]) env[e.name] = "value" in e ? e.value : (downward[e.name] ?? "");
    delete env.CA_ADDR;
    // The pod's fixed ports, moved to free ones on this shared host.
    env.ENVOY_STATUS_PORT = String(ports.envoyStatus);
    env.ENVOY_PROMETHEUS_PORT = String(ports.prometheus);
    const moved: Record<string, string> = {
      "--discoveryAddress": disco.listening.grpc,
      "--inboundPort": "0",
      "--outboundPort": "0",
      "--proxyAdminPort": "0",
      "--statusPort": String(ports.status),
    };
    const args: string[] = sidecar.args.map((a: string, i: number, all: string[]) => moved[all[i - 1]] ?? expand(a, { ...downward, ...env }));
    // No certificate source here: the control plane is reached in plain text, which needs saying (the pod's default is MUTUAL_TLS with disco-discovery as the CA).
    args.push("--controlPlaneAuthPolicy", "NONE");
    agent = await startDaemon(AGENT_BIN, args, "disco-agent listening ", undefined, { ...process.env, ...env });
  });
  after(async () => {
    app.close();
    rpc.forceShutdown();
  });

  test("readiness answers on ENVOY_STATUS_PORT once the control plane's configuration is applied; stats on ENVOY_PROMETHEUS_PORT", async () => {
    await waitFor("ready on ENVOY_STATUS_PORT", async () =>
      (await get(`http://127.0.0.1:${ports.envoyStatus}/healthz/ready`)).status === 200 ? true : undefined,
    );
    assert.equal((await get(`http://127.0.0.1:${ports.envoyStatus}/stats/prometheus`)).status, 404, "the readiness port serves readiness only");
    const stats = await get(`http://127.0.0.1:${ports.prometheus}/stats/prometheus`);
    assert.equal(stats.status, 200);
    assert.match(stats.body, /^# TYPE /m);
  });

  test("the rewritten app probes are replayed against the app on the status port", async () => {
    const probe = async (path: string) =>
      (
        await get(`http://127.0.0.1:${ports.status}${path}`).catch((e) => {
          throw new Error(`${e.message}: ${agent.output()}`);
        })
      ).status;
    assert.equal(await probe("/app-health/web/readyz"), 200);
    readyStatus = 503;
    assert.equal(await probe("/app-health/web/readyz"), 503, "the app's own status");
    readyStatus = 200;
    assert.equal(await probe("/app-health/web/startupz"), 200, "tcpSocket: the app's port accepts");
    assert.equal(await probe("/app-health/web/livez"), 500, "tcpSocket: nothing listens there");
    assert.equal(await probe("/app-health/rpc/readyz"), 200, "grpc: SERVING");
    health.setServing(false);
    assert.equal(await probe("/app-health/rpc/readyz"), 500, "grpc: NOT_SERVING");
    assert.equal(await probe("/app-health/nope/readyz"), 404);
  });

  test("the sidecar joined disco-discovery with its node metadata", async () => {
    const adsz = JSON.parse((await get(`http://${disco.listening.http}/debug/adsz`)).body) as Array<{ node: { id: string; metadata: Record<string, string> } }>;
    const mine = adsz.find((c) => c.node.id.includes("web-0.shop"));
    assert.ok(mine, JSON.stringify(adsz));
    assert.equal(mine.node.id, "sidecar~127.0.0.1~web-0.shop~shop.svc.cluster.local");
    assert.equal(mine.node.metadata.CLUSTER_ID, "Kubernetes");
    assert.equal(mine.node.metadata.INTERCEPTION_MODE, "REDIRECT");
    assert.equal(mine.node.metadata.NAMESPACE, "shop");
    assert.equal(mine.node.metadata.APP_CONTAINERS, "web,rpc");
    assert.ok(agent.listening.status > 0);
  });
});
