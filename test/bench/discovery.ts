// disco-discovery at scale: 1, 100 and 1 000 connected ADS clients (light
// in-process clients that subscribe to the configuration documents and the
// clusters and ACK every response, as a sidecar does), one policy change in
// the watched folder, and the time until every client has ACKed it.
// Figures: p50/p99 of that time, disco-discovery's CPU for the push and its
// memory per connected proxy. Upstream's anchor: about 1 vCPU and 1.5 GB for
// 1 000 services and 2 000 sidecars.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import { CLUSTER, CONFIG_DOCUMENT } from "../../host/discovery/type_urls.ts";
import { envoyType } from "../../host/wire/envoy_protos.ts";
import { cpuSeconds, rssMiB } from "./process_usage.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const BIN = join(ROOT, "build", "out", "disco-discovery.mjs");
const ADS = "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources";
const identity = (b: Buffer) => b;
const CLIENTS_PER_CHANNEL = 50;
const SERVICES = 100;

function folder(dir: string, deniedPath: string): void {
  const entries = Array.from({ length: SERVICES }, (_, i) => `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: {name: svc-${i}, namespace: bench}
spec:
  hosts: [svc-${i}.bench.svc.cluster.local]
  ports: [{number: 80, name: http, protocol: HTTP}]
  resolution: STATIC
  location: MESH_INTERNAL
  endpoints: [{address: 10.0.${i >> 8}.${i & 255}}]
`).join("---\n");
  writeFileSync(join(dir, "services.yaml"), entries);
  writeFileSync(join(dir, "policy.yaml"), `apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: {name: deny, namespace: bench}
spec:
  action: DENY
  rules: [{to: [{operation: {paths: ["${deniedPath}"]}}]}]
`);
}

class LightClient {
  /** Version of the configuration documents last ACKed, and when. */
  version = "";
  ackedAt = 0;
  private readonly stream: grpc.ClientDuplexStream<Buffer, Buffer>;
  constructor(channel: grpc.Client, id: number) {
    const request = envoyType("envoy.service.discovery.v3.DiscoveryRequest");
    const response = envoyType("envoy.service.discovery.v3.DiscoveryResponse");
    const node = { id: `sidecar~10.1.${id >> 8}.${id & 255}~bench-${id}.bench~bench.svc.cluster.local`, cluster: `bench-${id}` };
    const send = (fields: Record<string, unknown>) => this.stream.write(Buffer.from(request.encode(request.fromObject({ node, ...fields })).finish()));
    this.stream = channel.makeBidiStreamRequest(ADS, identity, identity);
    this.stream.on("data", (b: Buffer) => {
      const r = response.decode(b) as unknown as { version_info: string; nonce: string; type_url: string };
      send({ type_url: r.type_url, version_info: r.version_info, response_nonce: r.nonce });
      if (r.type_url === CONFIG_DOCUMENT) {
        this.version = r.version_info;
        this.ackedAt = performance.now();
      }
    });
    this.stream.on("error", () => {});
    send({ type_url: CONFIG_DOCUMENT });
    send({ type_url: CLUSTER });
  }
  close(): void {
    this.stream.cancel();
  }
}

async function until(what: string, ok: () => boolean, limitMs = 600_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function measure(proc: ChildProcess, address: string, dir: string, count: number, round: number): Promise<string> {
  const channels = Array.from({ length: Math.ceil(count / CLIENTS_PER_CHANNEL) }, () => new grpc.Client(address, grpc.credentials.createInsecure(), { "grpc.use_local_subchannel_pool": 1 }));
  const rssBefore = rssMiB(proc.pid!);
  const clients = Array.from({ length: count }, (_, i) => new LightClient(channels[Math.floor(i / CLIENTS_PER_CHANNEL)], round * 10_000 + i));
  await until("every client configured", () => clients.every((c) => c.version !== ""));
  const rssPerProxy = ((rssMiB(proc.pid!) - rssBefore) * 1024) / count;
  const versions = new Set(clients.map((c) => c.version));
  const cpu0 = cpuSeconds(proc.pid!);
  const t0 = performance.now();
  folder(dir, `/changed-${round}`);
  await until("every client ACKed the change", () => clients.every((c) => !versions.has(c.version)));
  const cpu = cpuSeconds(proc.pid!) - cpu0;
  const times = clients.map((c) => c.ackedAt - t0).sort((a, b) => a - b);
  for (const c of clients) c.close();
  for (const ch of channels) ch.close();
  return `disco-discovery ${String(count).padStart(4)} clients: change → all ACKed p50 ${percentile(times, 50).toFixed(0)} ms, p99 ${percentile(times, 99).toFixed(0)} ms; push CPU ${(cpu * 1000).toFixed(0)} ms (${((cpu * 1e6) / count).toFixed(0)} µs/proxy); memory ${rssPerProxy.toFixed(1)} KiB/proxy`;
}

export async function runDiscoveryBench(counts = [1, 100, 1000]): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), "bench-discovery-"));
  folder(dir, "/initial");
  const proc = spawn(process.execPath, [BIN, "discovery", "--configDir", dir, "--grpcAddr", "127.0.0.1:0", "--httpAddr", "", "--secureGrpcAddr", "", "--monitoringAddr", "", "--httpsAddr", "", "--ctrlz_port", "0", "--ctrlz_address", "127.0.0.1"], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, DISCO_DEBOUNCE_AFTER: "100ms" } });
  let out = "";
  proc.stdout!.on("data", (c: Buffer) => (out += c));
  proc.stderr!.on("data", (c: Buffer) => (out += c));
  const lines: string[] = [`disco-discovery (${SERVICES} services; DISCO_DEBOUNCE_AFTER 100ms is part of every figure):`];
  try {
    await until("disco-discovery listening", () => out.includes("disco-discovery listening: "), 120_000);
    const listeners = JSON.parse(out.split("disco-discovery listening: ")[1].split("\n")[0]) as { grpc: string };
    for (const [round, count] of counts.entries()) lines.push(await measure(proc, listeners.grpc, dir, count, round));
  } finally {
    proc.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
  return lines;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) for (const line of await runDiscoveryBench()) console.log(line);
