// disco-discovery at scale: 1, 100 and 1 000 connected ADS clients (light
// in-process clients that subscribe as an Envoy sidecar does: listeners and
// clusters, then the route configuration, the load assignments and the
// filter's extension config they name; every response ACKed) plus 3 real
// sidecars (disco-agent proxy --discoveryAddress), 100 services, one policy
// change in the watched folder (an AuthorizationPolicy and a QuotaSpec), and
// the time until every client has ACKed it. Each count is measured twice,
// side by side: state-of-the-world clients (StreamAggregatedResources) and
// incremental ones (DeltaAggregatedResources, Envoy's DELTA_GRPC).
// BENCH_DISCOVERY_CLIENTS=1,100,5000 sets the counts (default 1,100,1000).
// Figures: p50/p99 of that time for the light clients (the new
// TypedExtensionConfig ACKed), when each real sidecar had applied the new
// documents (seen on its /config_dump), disco-discovery's CPU for the push
// and its memory per connected proxy. Upstream's anchor: about 1 vCPU and
// 1.5 GB for 1 000 services and 2 000 sidecars.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import { AGENT_BIN } from "../../host/demo/binaries.ts";
import { startEchoApp } from "../../host/demo/echo_app.ts";
import { type Daemon, startDaemon } from "../../host/demo/processes.ts";
import { PLUGIN_NAME } from "../../host/discovery/envoy_wasm.ts";
import { clusterName } from "../../host/mesh/cluster_names.ts";
import { CLUSTER, ENDPOINT, EXTENSION_CONFIG, LISTENER, ROUTE } from "../../host/discovery/type_urls.ts";
import { envoyType } from "../../host/wire/envoy_protos.ts";
import { cpuSeconds, rssMiB } from "./process_usage.ts";
import { SIDE_LISTENERS_OFF } from "../discovery/support/daemon_args.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const BIN = join(ROOT, "build", "out", "disco-discovery.mjs");
const ADS = "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources";
const DELTA = "/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources";
const identity = (b: Buffer) => b;
const CLIENTS_PER_CHANNEL = 50;
const SERVICES = 100;
const REAL_SIDECARS = 3;
const host = (i: number) => `svc-${i}.bench.svc.cluster.local`;

function folder(dir: string, round: string): void {
  const entries = Array.from(
    { length: SERVICES },
    (_, i) => `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: {name: svc-${i}, namespace: bench}
spec:
  hosts: [${host(i)}]
  ports: [{number: 80, name: http, protocol: HTTP}]
  resolution: STATIC
  location: MESH_INTERNAL
  endpoints: [{address: 10.0.${i >> 8}.${i & 255}}]
`,
  ).join("---\n");
  writeFileSync(join(dir, "services.yaml"), entries);
  // One file, so the change is one push: a security policy (our sidecars) and a hub client policy (the filter's configuration).
  writeFileSync(
    join(dir, "policy.yaml"),
    `apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: {name: deny, namespace: bench}
spec:
  action: DENY
  rules: [{to: [{operation: {paths: ["/${round}"]}}]}]
---
apiVersion: config.mesh.io/v1alpha2
kind: QuotaSpec
metadata: {name: requests, namespace: bench}
spec:
  rules: [{quotas: [{quota: requests-${round}, charge: 1}]}]
---
apiVersion: config.mesh.io/v1alpha2
kind: QuotaSpecBinding
metadata: {name: requests, namespace: bench}
spec:
  services: [{name: svc-0}]
  quotaSpecs: [{name: requests}]
`,
  );
}

/** What Envoy subscribes to after its bootstrap: LDS and CDS wildcard, RDS `80`, EDS for every cluster, ECDS the filter. */
function subscriptions(): Record<string, string[]> {
  return {
    [LISTENER]: [],
    [CLUSTER]: [],
    [ROUTE]: ["80"],
    [ENDPOINT]: Array.from({ length: SERVICES }, (_, i) => clusterName(host(i), 80)),
    [EXTENSION_CONFIG]: [PLUGIN_NAME],
  };
}

const benchNode = (id: number) => ({
  id: `sidecar~10.1.${(id >> 8) & 255}.${id & 255}~bench-${id}.bench~bench.svc.cluster.local`,
  cluster: `bench-${id}`,
  user_agent_name: "envoy",
});

/** An Envoy-like ADS client: what Envoy subscribes to after its bootstrap, every response ACKed. */
class LightClient {
  /** Version of the filter's extension config last ACKed, and when. */
  version = "";
  ackedAt = 0;
  private readonly stream: grpc.ClientDuplexStream<Buffer, Buffer>;
  constructor(channel: grpc.Client, id: number) {
    const request = envoyType("envoy.service.discovery.v3.DiscoveryRequest");
    const response = envoyType("envoy.service.discovery.v3.DiscoveryResponse");
    const node = benchNode(id);
    const names = subscriptions();
    const send = (fields: Record<string, unknown>) => this.stream.write(Buffer.from(request.encode(request.fromObject({ node, ...fields })).finish()));
    this.stream = channel.makeBidiStreamRequest(ADS, identity, identity);
    this.stream.on("data", (b: Buffer) => {
      const r = response.decode(b) as unknown as { version_info: string; nonce: string; type_url: string };
      send({ type_url: r.type_url, version_info: r.version_info, response_nonce: r.nonce, resource_names: names[r.type_url] ?? [] });
      if (r.type_url === EXTENSION_CONFIG) {
        this.version = r.version_info;
        this.ackedAt = performance.now();
      }
    });
    this.stream.on("error", () => {});
    for (const [type_url, resource_names] of Object.entries(names)) send({ type_url, resource_names });
  }
  close(): void {
    this.stream.cancel();
  }
}

/** The same proxy on an incremental stream: subscribes name by name (the node on the first request only), ACKs each response by its nonce. */
class LightDeltaClient {
  version = "";
  ackedAt = 0;
  private readonly stream: grpc.ClientDuplexStream<Buffer, Buffer>;
  constructor(channel: grpc.Client, id: number) {
    const request = envoyType("envoy.service.discovery.v3.DeltaDiscoveryRequest");
    const response = envoyType("envoy.service.discovery.v3.DeltaDiscoveryResponse");
    const send = (fields: Record<string, unknown>) => this.stream.write(Buffer.from(request.encode(request.fromObject(fields)).finish()));
    this.stream = channel.makeBidiStreamRequest(DELTA, identity, identity);
    this.stream.on("data", (b: Buffer) => {
      const r = response.decode(b) as unknown as {
        system_version_info: string;
        nonce: string;
        type_url: string;
        resources: Array<{ name: string; version: string }>;
      };
      send({ type_url: r.type_url, response_nonce: r.nonce });
      const extension = r.type_url === EXTENSION_CONFIG ? r.resources.find((x) => x.name === PLUGIN_NAME) : undefined;
      if (extension) {
        this.version = extension.version;
        this.ackedAt = performance.now();
      }
    });
    this.stream.on("error", () => {});
    let first = true;
    for (const [type_url, names] of Object.entries(subscriptions())) {
      send({ ...(first ? { node: benchNode(id) } : {}), type_url, resource_names_subscribe: names });
      first = false;
    }
  }
  close(): void {
    this.stream.cancel();
  }
}

async function until(what: string, ok: () => boolean | Promise<boolean>, limitMs = 600_000, pollMs = 5): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

type Sidecar = Daemon<{ admin: number }>;

/** Whether a sidecar has applied the documents of `round` (its /config_dump shows the policy's path). */
async function applied(s: Sidecar, round: string): Promise<boolean> {
  const r = await fetch(`http://127.0.0.1:${s.listening.admin}/config_dump`);
  return (await r.text()).includes(`"/${round}"`);
}

async function measure(proc: ChildProcess, address: string, dir: string, sidecars: Sidecar[], count: number, round: number, delta: boolean): Promise<string[]> {
  const channels = Array.from(
    { length: Math.ceil(count / CLIENTS_PER_CHANNEL) },
    () => new grpc.Client(address, grpc.credentials.createInsecure(), { "grpc.use_local_subchannel_pool": 1 }),
  );
  const rssBefore = rssMiB(proc.pid!);
  const Client = delta ? LightDeltaClient : LightClient;
  const clients = Array.from({ length: count }, (_, i) => new Client(channels[Math.floor(i / CLIENTS_PER_CHANNEL)], round * 10_000 + i));
  await until("every client configured", () => clients.every((c) => c.version !== ""));
  // Below 100 clients the growth is lost in the garbage collector's noise.
  const memory = count >= 100 ? `${(((rssMiB(proc.pid!) - rssBefore) * 1024) / count).toFixed(1)} KiB/proxy` : "n/a (too few clients)";
  const versions = new Set(clients.map((c) => c.version));
  const cpu0 = cpuSeconds(proc.pid!);
  const t0 = performance.now();
  const name = `changed-${round}`;
  folder(dir, name);
  const sidecarTimes = Promise.all(
    sidecars.map(async (s) => {
      await until("a sidecar applied the change", () => applied(s, name), 600_000, 10);
      return performance.now() - t0;
    }),
  );
  await until("every client ACKed the change", () => clients.every((c) => !versions.has(c.version)));
  const cpu = cpuSeconds(proc.pid!) - cpu0;
  const real = (await sidecarTimes).sort((a, b) => a - b);
  const times = clients.map((c) => c.ackedAt - t0).sort((a, b) => a - b);
  for (const c of clients) c.close();
  for (const ch of channels) ch.close();
  const lines = [
    `disco-discovery ${String(count).padStart(4)} ${delta ? "delta clients" : "clients"}: change → all ACKed p50 ${percentile(times, 50).toFixed(0)} ms, p99 ${percentile(times, 99).toFixed(0)} ms; push CPU ${(cpu * 1000).toFixed(0)} ms (${((cpu * 1e6) / count).toFixed(0)} µs/proxy); memory ${memory}`,
  ];
  if (real.length > 0) lines.push(`  + ${real.length} real sidecars: change applied after ${real.map((t) => t.toFixed(0)).join(", ")} ms`);
  return lines;
}

/** BENCH_DISCOVERY_CLIENTS: the client counts measured (`1,100,5000`). */
function clientCounts(): number[] {
  const text = process.env.BENCH_DISCOVERY_CLIENTS;
  if (!text) return [1, 100, 1000];
  const counts = text.split(",").map(Number);
  if (counts.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error(`BENCH_DISCOVERY_CLIENTS: expected counts separated by commas, got ${JSON.stringify(text)}`);
  return counts;
}

export async function runDiscoveryBench(counts = clientCounts()): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), "bench-discovery-"));
  folder(dir, "initial");
  const proc = spawn(process.execPath, [BIN, "discovery", "--configDir", dir, "--grpcAddr", "127.0.0.1:0", "--httpAddr", "", ...SIDE_LISTENERS_OFF], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, DISCO_DEBOUNCE_AFTER: "100ms" },
  });
  let out = "";
  proc.stdout!.on("data", (c: Buffer) => (out += c));
  proc.stderr!.on("data", (c: Buffer) => (out += c));
  const lines: string[] = [
    `disco-discovery (${SERVICES} services; Envoy-like clients on LDS, CDS, RDS, EDS and ECDS; ${REAL_SIDECARS} real sidecars; DISCO_DEBOUNCE_AFTER 100ms is part of every figure):`,
  ];
  const app = await startEchoApp();
  const sidecars: Sidecar[] = [];
  try {
    await until("disco-discovery listening", () => out.includes("disco-discovery listening: "), 120_000);
    const listeners = JSON.parse(out.split("disco-discovery listening: ")[1].split("\n")[0]) as { grpc: string };
    for (let i = 0; i < REAL_SIDECARS; i++) {
      sidecars.push(
        await startDaemon<{ admin: number }>(
          AGENT_BIN,
          [
            "proxy",
            "--inboundPort",
            "0",
            "--outboundPort",
            "0",
            "--proxyAdminPort",
            "0",
            "--appPort",
            String(app.port),
            "--discoveryAddress",
            listeners.grpc,
            "--controlPlaneAuthPolicy",
            "NONE",
          ],
          "disco-agent listening ",
          120_000,
          { ...process.env, POD_NAME: `bench-sidecar-${i}`, POD_NAMESPACE: "bench" },
        ),
      );
    }
    let round = 0;
    for (const count of counts) for (const delta of [false, true]) lines.push(...(await measure(proc, listeners.grpc, dir, sidecars, count, round++, delta)));
  } finally {
    await Promise.all(sidecars.map((s) => s.stop()));
    app.server.close();
    proc.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
  return lines;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) for (const line of await runDiscoveryBench()) console.log(line);

/** For measuring where memory goes (not part of the bench's run). */
export const folderForHeap = (dir: string) => folder(dir, "initial");
export const lightClientForHeap = (channel: grpc.Client, id: number, delta: boolean) =>
  delta ? new LightDeltaClient(channel, id) : new LightClient(channel, id);
