// disco-discovery at scale: 1, 100 and 1 000 connected ADS clients (light
// in-process clients that subscribe as an Envoy sidecar does: listeners and
// clusters, then the route configuration, the load assignments and the
// filter's extension config they name; every response ACKed;
// test/bench/discovery_clients.ts) plus 3 real sidecars (disco-agent proxy
// --discoveryAddress), 100 services, and two changes in the watched folder:
// a policy change every proxy's view holds (an AuthorizationPolicy and a
// QuotaSpec), then a one-service change (one ServiceEntry's endpoint moves:
// one load assignment changes). Each count is measured twice, side by side:
// state-of-the-world clients (StreamAggregatedResources) and incremental ones
// (DeltaAggregatedResources, Envoy's DELTA_GRPC).
// BENCH_DISCOVERY_CLIENTS=1,100,5000 sets the counts (default 1,100,1000).
// Figures: p50/p99 of the time until every light client has ACKed the change
// (the new TypedExtensionConfig; the moved service's load assignment), when
// each real sidecar had applied it (seen on its /config_dump),
// disco-discovery's CPU for the push and its memory per connected proxy (live after a full GC, and its
// resident memory over what it had before the first round's clients); for
// the one-service change also what each proxy was sent. Upstream's anchor:
// about 1 vCPU and 1.5 GB for 1 000 services and 2 000 sidecars.
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
import { cpuSeconds } from "./process_usage.ts";
import { MEMORY_PROBE_ARGS, MemoryProbe, liveBytes } from "./memory_probe.ts";
import { SIDE_LISTENERS_OFF } from "../discovery/support/daemon_args.ts";
import { type LightClientBase, LightClient, LightDeltaClient, type LightPlan } from "./discovery_clients.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const BIN = join(ROOT, "build", "out", "disco-discovery.mjs");
const CLIENTS_PER_CHANNEL = 50;
const SERVICES = 100;
const REAL_SIDECARS = 3;
const host = (i: number) => `svc-${i}.bench.svc.cluster.local`;

/** The service a one-service change moves: its one endpoint gets a new address each round. */
const MOVED = 7;
const endpointOf = (i: number, round: number) => (i === MOVED && round > 0 ? `10.${100 + (round % 100)}.${i >> 8}.${i & 255}` : `10.0.${i >> 8}.${i & 255}`);

/** The 100 ServiceEntries, one endpoint each; `round` > 0 moves service MOVED's endpoint. */
function writeServices(dir: string, round: number): void {
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
  endpoints: [{address: ${endpointOf(i, round)}}]
`,
  ).join("---\n");
  writeFileSync(join(dir, "services.yaml"), entries);
}

function writePolicy(dir: string, round: string): void {
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

function folder(dir: string, round: string): void {
  writeServices(dir, 0);
  writePolicy(dir, round);
}

/** What Envoy subscribes to after its bootstrap: LDS and CDS wildcard, RDS `80`, EDS for every cluster, ECDS the filter. */
const PLAN: LightPlan = {
  subscriptions: {
    [LISTENER]: [],
    [CLUSTER]: [],
    [ROUTE]: ["80"],
    [ENDPOINT]: Array.from({ length: SERVICES }, (_, i) => clusterName(host(i), 80)),
    [EXTENSION_CONFIG]: [PLUGIN_NAME],
  },
  extension: { type: EXTENSION_CONFIG, name: PLUGIN_NAME },
  watchedType: ENDPOINT,
};

const benchNode = (id: number) => ({
  id: `sidecar~10.1.${(id >> 8) & 255}.${id & 255}~bench-${id}.bench~bench.svc.cluster.local`,
  cluster: `bench-${id}`,
  user_agent_name: "envoy",
});

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

/** Whether a sidecar has applied the documents of `round` (its /config_dump shows `seen`: the policy's path, a moved endpoint's address). */
async function applied(s: Sidecar, seen: string): Promise<boolean> {
  const r = await fetch(`http://127.0.0.1:${s.listening.admin}/config_dump`);
  return (await r.text()).includes(seen);
}

/** When each real sidecar has applied a change (ms after t0). */
function sidecarsApplied(sidecars: Sidecar[], seen: string, t0: number): Promise<number[]> {
  return Promise.all(
    sidecars.map(async (s) => {
      await until("a sidecar applied the change", () => applied(s, seen), 600_000, 10);
      return performance.now() - t0;
    }),
  );
}

const sidecarLine = (real: number[]) =>
  `  + ${real.length} real sidecars: change applied after ${real
    .sort((a, b) => a - b)
    .map((t) => t.toFixed(0))
    .join(", ")} ms`;

/** Until no client has been sent anything for a while: the previous change has settled. */
async function settled(clients: LightClientBase[], quietMs = 500): Promise<void> {
  await until("the clients settled", () => clients.every((c) => performance.now() - c.lastResponseAt > quietMs), 600_000, 50);
}

async function measure(
  proc: ChildProcess,
  address: string,
  dir: string,
  sidecars: Sidecar[],
  count: number,
  round: number,
  delta: boolean,
  idleRss: number,
): Promise<string[]> {
  const channels = Array.from(
    { length: Math.ceil(count / CLIENTS_PER_CHANNEL) },
    () => new grpc.Client(address, grpc.credentials.createInsecure(), { "grpc.use_local_subchannel_pool": 1 }),
  );
  const probe = MemoryProbe.of(proc);
  const before = count >= 100 ? liveBytes(await probe.read()) : 0;
  const Client = delta ? LightDeltaClient : LightClient;
  const clients = Array.from({ length: count }, (_, i) => new Client(channels[Math.floor(i / CLIENTS_PER_CHANNEL)], benchNode(round * 10_000 + i), PLAN));
  await until("every client configured", () => clients.every((c) => c.version !== ""));
  // What the daemon holds live after a full GC (heap and external memory): not garbage, not heap an earlier round freed (resident
  // growth in a fresh daemon: test/bench/discovery_heap.ts). Below 100 clients the growth is lost in the noise.
  // And its resident memory above what it had before the first round's clients, per client connected now: what a pod is sized by
  // (after an earlier round, it includes what the allocator kept of that round's).
  const configured = count >= 100 ? await probe.read() : undefined;
  const memory = configured
    ? `${((liveBytes(configured) - before) / 1024 / count).toFixed(1)} KiB/proxy, resident ${((configured.rss - idleRss) / 1024 / count).toFixed(1)} KiB/proxy`
    : "n/a (too few clients)";
  const kind = delta ? "delta clients" : "clients";
  const lines: string[] = [];
  try {
    // A change every proxy's view holds: a namespace-wide policy and the filter's configuration.
    const versions = new Set(clients.map((c) => c.version));
    const cpu0 = cpuSeconds(proc.pid!);
    const t0 = performance.now();
    const name = `changed-${round}`;
    writePolicy(dir, name);
    const sidecarTimes = sidecarsApplied(sidecars, `"/${name}"`, t0);
    await until("every client ACKed the change", () => clients.every((c) => !versions.has(c.version)));
    const cpu = cpuSeconds(proc.pid!) - cpu0;
    const real = await sidecarTimes;
    const times = clients.map((c) => c.ackedAt - t0).sort((a, b) => a - b);
    lines.push(
      `disco-discovery ${String(count).padStart(4)} ${kind}: change → all ACKed p50 ${percentile(times, 50).toFixed(0)} ms, p99 ${percentile(times, 99).toFixed(0)} ms; push CPU ${(cpu * 1000).toFixed(0)} ms (${((cpu * 1e6) / count).toFixed(0)} µs/proxy); memory ${memory}`,
    );
    if (real.length > 0) lines.push(sidecarLine(real));
    lines.push(...(await measureOneService(proc, dir, sidecars, clients, count, round, kind)));
  } finally {
    for (const c of clients) c.close();
    for (const ch of channels) ch.close();
  }
  return lines;
}

/**
 * One service's endpoint moves: only its load assignment changes, in every
 * proxy's view (each subscribes to every cluster). Timed until every
 * affected client has ACKed the response that carries it; what else was
 * sent with it is counted.
 */
async function measureOneService(
  proc: ChildProcess,
  dir: string,
  sidecars: Sidecar[],
  clients: LightClientBase[],
  count: number,
  round: number,
  kind: string,
): Promise<string[]> {
  await settled(clients);
  const moved = clusterName(host(MOVED), 80);
  for (const c of clients) c.mark(moved);
  const cpu0 = cpuSeconds(proc.pid!);
  const t0 = performance.now();
  writeServices(dir, round + 1);
  const sidecarTimes = sidecarsApplied(sidecars, endpointOf(MOVED, round + 1), t0);
  await until("every affected client ACKed the moved endpoint", () => clients.every((c) => c.watchedAckedAt > 0));
  const cpu = cpuSeconds(proc.pid!) - cpu0;
  const real = await sidecarTimes;
  await settled(clients);
  const times = clients.map((c) => c.watchedAckedAt - t0).sort((a, b) => a - b);
  const perClient = (f: (c: LightClientBase) => number) => (clients.reduce((n, c) => n + f(c), 0) / clients.length).toFixed(1);
  const lines = [
    `disco-discovery ${String(count).padStart(4)} ${kind}: one-service change → ${clients.length} affected ACKed p50 ${percentile(times, 50).toFixed(0)} ms, p99 ${percentile(times, 99).toFixed(0)} ms; push CPU ${(cpu * 1000).toFixed(0)} ms (${((cpu * 1e6) / clients.length).toFixed(0)} µs/affected proxy); sent ${perClient((c) => c.resourcesSinceMark)} resources in ${perClient((c) => c.responsesSinceMark)} responses per proxy`,
  ];
  if (real.length > 0) lines.push(sidecarLine(real));
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
  // BENCH_DISCOVERY_CPU_PROF=<dir>: a V8 CPU profile of disco-discovery, written there when it stops (SIGTERM, not SIGKILL).
  const profileDir = process.env.BENCH_DISCOVERY_CPU_PROF;
  const nodeArgs = [...MEMORY_PROBE_ARGS, ...(profileDir ? ["--cpu-prof", "--cpu-prof-dir", profileDir] : [])];
  const proc = spawn(
    process.execPath,
    [...nodeArgs, BIN, "discovery", "--configDir", dir, "--grpcAddr", "127.0.0.1:0", "--httpAddr", "", ...SIDE_LISTENERS_OFF],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, DISCO_DEBOUNCE_AFTER: "100ms" },
    },
  );
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
    const idleRss = (await MemoryProbe.of(proc).read()).rss;
    let round = 0;
    for (const count of counts)
      for (const delta of [false, true]) lines.push(...(await measure(proc, listeners.grpc, dir, sidecars, count, round++, delta, idleRss)));
  } finally {
    await Promise.all(sidecars.map((s) => s.stop()));
    app.server.close();
    if (profileDir) {
      proc.kill("SIGTERM");
      await new Promise((r) => proc.once("exit", r));
    } else proc.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
  return lines;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) for (const line of await runDiscoveryBench()) console.log(line);

/** For measuring where memory goes (not part of the bench's run). */
export const folderForHeap = (dir: string) => folder(dir, "initial");
export const lightClientForHeap = (channel: grpc.Client, id: number, delta: boolean) =>
  delta ? new LightDeltaClient(channel, benchNode(id), PLAN) : new LightClient(channel, benchNode(id), PLAN);
