// `npm run bench -- embed`: a Fastify 5 app with the filter's plugin (the
// built package entry, check cache on) against the same app without it,
// each in a process of its own, in front of a `hubs server` without rules or
// handlers (every check allowed, every report received and decoded).
// Interleaved rounds of autocannon, medians; one fixed line (issue 26):
//   embed: fastify req/s with filter / without = R (check cache on)
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { HUBS_BIN } from "../../host/demo/binaries.ts";
import { type Daemon, ownedTempDir, removeOwnedTempDir, startDaemon } from "../../host/demo/processes.ts";
import { cpuSeconds } from "./process_usage.ts";
import { median } from "./stats.ts";

const DURATION_S = Number(process.env.EMBED_BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.EMBED_BENCH_ROUNDS ?? 3);
const WARM_UP_S = Number(process.env.EMBED_BENCH_WARM_UP_SECONDS ?? 3);
const CONNECTIONS = 16;
/** Issue 26's aim for the ratio. */
export const EMBED_TARGET = 0.85;
const APP = join(import.meta.dirname, "fixtures", "embed_app.mjs");

const CONFIG = `apiVersion: config.mesh.io/v1alpha2
kind: HttpClientConfig
metadata: {name: app, namespace: demo}
spec:
  defaultDestinationService: petstore.demo.svc.cluster.local
  transport: {networkFailPolicy: {policy: FAIL_OPEN}}
---
apiVersion: config.mesh.io/v1alpha2
kind: HTTPAPISpec
metadata: {name: petstore, namespace: demo}
spec:
  patterns:
  - {httpMethod: GET, uriTemplate: "/pets/{id}", attributes: {attributes: {api.operation: {stringValue: getPet}}}}
  apiKeys: [{query: key}]
---
apiVersion: config.mesh.io/v1alpha2
kind: HTTPAPISpecBinding
metadata: {name: petstore, namespace: demo}
spec: {services: [{name: petstore}], apiSpecs: [{name: petstore}]}
`;

interface Run {
  rps: number;
  /** The app's CPU per request, microseconds. */
  cpuUs: number;
}

async function run(app: Daemon<{ port: number }>, seconds: number): Promise<Run> {
  const pid = app.proc.pid!;
  const cpuBefore = cpuSeconds(pid);
  const r = await autocannon({ url: `http://127.0.0.1:${app.listening.port}/pets/1?key=bench`, connections: CONNECTIONS, duration: seconds });
  if (r.errors + r.non2xx > 0) throw new Error(`embed bench: ${r.errors} errors and ${r.non2xx} non-2xx answers on port ${app.listening.port}`);
  return { rps: r.requests.average, cpuUs: ((cpuSeconds(pid) - cpuBefore) / Math.max(1, r.requests.total)) * 1e6 };
}

export async function runEmbedBench(): Promise<string[]> {
  const dir = ownedTempDir("embed-bench-");
  const hubDir = join(dir, "hub");
  const config = join(dir, "config.yaml");
  writeFileSync(config, CONFIG);
  mkdirSync(hubDir);
  const started: Array<Daemon<unknown>> = [];
  try {
    const hub = await startDaemon<{ grpcPort: number }>(
      HUBS_BIN,
      [
        "server",
        "--address",
        "tcp://127.0.0.1:0",
        "--monitoringPort",
        "0",
        "--ctrlz_port",
        "0",
        "--ctrlz_address",
        "127.0.0.1",
        "--configStoreURL",
        `fs://${hubDir}`,
        "--configDefaultNamespace",
        "mesh-system",
      ],
      "hubs listening ",
    );
    started.push(hub);
    const address = `127.0.0.1:${hub.listening.grpcPort}`;
    const filtered = await startDaemon<{ port: number }>(APP, ["filter", address, config], "app listening ");
    started.push(filtered);
    const bare = await startDaemon<{ port: number }>(APP, ["bare", address, config], "app listening ");
    started.push(bare);
    await run(filtered, WARM_UP_S);
    await run(bare, WARM_UP_S);
    const withFilter: Run[] = [];
    const without: Run[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which goes first: a machine that slows during a round costs both alike.
      const order =
        round % 2 === 0
          ? ([
              [filtered, withFilter],
              [bare, without],
            ] as const)
          : ([
              [bare, without],
              [filtered, withFilter],
            ] as const);
      for (const [app, out] of order) out.push(await run(app, DURATION_S));
    }
    const rps = (runs: Run[]) => median(runs.map((r) => r.rps));
    const cpu = (runs: Run[]) => median(runs.map((r) => r.cpuUs));
    const ratio = rps(withFilter) / rps(without);
    const load = loadavg()
      .map((x) => x.toFixed(2))
      .join(" ");
    return [
      `embed: fastify req/s with filter / without = ${ratio.toFixed(2)} (check cache on)`,
      `embed: with filter ${rps(withFilter).toFixed(0)} req/s and ${cpu(withFilter).toFixed(0)} µs of app CPU per request, without ${rps(without).toFixed(0)} req/s and ${cpu(without).toFixed(0)} µs (medians of ${ROUNDS} rounds of ${DURATION_S} s, ${CONNECTIONS} connections); target ≥ ${EMBED_TARGET}: ${ratio >= EMBED_TARGET ? "met" : "not met"}; load average ${load}`,
    ];
  } finally {
    for (const d of started.reverse()) await d.stop();
    removeOwnedTempDir(dir);
  }
}
