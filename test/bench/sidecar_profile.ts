// Where the sidecar's CPU goes, per request, beside the bare proxy's (issue 30):
// the three targets of the sidecar bench (bare Node proxy, the agent with the
// no-op module, the agent with the filter), each saturated with 16
// connections after a warm-up while `perf record` samples every thread of
// its process; each sample is put in one category by its call stack.
//   node --import tsx test/bench/sidecar_profile.ts   (after npm run build; needs perf)
// SIDECAR_PROFILE_SECONDS (10) and SIDECAR_PROFILE_WARM_UP_SECONDS (8) set the
// sampled run and the warm-up. Not part of `npm run bench`: it needs perf and
// root (or perf_event_paranoid <= 1), and its figures are shares, not speed.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import autocannon from "autocannon";
import { type LocalMesh, startLocalMesh } from "../../host/demo/local_mesh.ts";
import { type Daemon, startDaemon } from "../../host/demo/processes.ts";
import { buildNoopModule } from "./noop_module.ts";
import { withoutHubHandlers } from "./sidecar.ts";
import { type PerfSample, perfSamples } from "./perf_samples.ts";

const SECONDS = Number(process.env.SIDECAR_PROFILE_SECONDS ?? 10);
const WARM_UP_S = Number(process.env.SIDECAR_PROFILE_WARM_UP_SECONDS ?? 8);
const FREQUENCY = 2000;
const PERF_MAP = "--perf-basic-prof-only-functions";

/** Categories, first match wins: a sample counts once, under what it was doing for the request. */
const MAIN_CATEGORIES: ReadonlyArray<readonly [string, RegExp]> = [
  ["GC", /Heap::CollectGarbage|Scavenge|MinorGC|MarkCompact|PerformGarbageCollection|IncrementalMarking/],
  [
    "the module's callbacks (wasm and the host calls)",
    /wasm-function|JS:\S*(requestHeaders|finishStream|createStream|onResponseHeaders|grpcReceive|proxy_\w+) /,
  ],
  [
    "grpc-js and HTTP/2 (hub calls)",
    /Http2|http2|nghttp2|JS:\S*(makeUnaryRequest|createCall|createResolvingCall|ResolvingCall|LoadBalancingCall|SubchannelCall|generateCallCredentialsMetadata|sendMessageWithContext|InterceptingCall|unary|hubRequestHeaders|metadataHeaders|frameMessage|unaryResponseMessage|trailerStatus) /,
  ],
  [
    "async hooks (the safety net's AsyncLocalStorage)",
    /JS:\S*(emitInitScript|emitInitNative|_propagate|lookupPublicResource|executionAsyncResource|promiseInitHook) node:(internal\/)?async_hooks/,
  ],
];

function categorize(all: PerfSample[]): Map<string, number> {
  const threads = new Map<string, number>();
  for (const s of all) threads.set(s.thread, (threads.get(s.thread) ?? 0) + 1);
  const main = [...threads].sort((a, b) => b[1] - a[1])[0]?.[0];
  const out = new Map<string, number>();
  const add = (k: string) => out.set(k, (out.get(k) ?? 0) + 1);
  for (const s of all) {
    const stack = s.frames.join(" | ");
    if (s.thread !== main) {
      add(/compiler::|Compil|Turbofan|Maglev/.test(stack) ? "helper threads: JIT compilers" : "helper threads: GC and other");
      continue;
    }
    const named = MAIN_CATEGORIES.find(([, re]) => re.test(stack));
    if (named) add(`main: ${named[0]}`);
    else if (s.frames[0]?.includes("[kernel")) add("main: kernel");
    else {
      const js = s.frames.find((f) => f.startsWith("JS:"));
      add(js?.includes("/build/out/") ? "main: the agent's own JS" : "main: Node's HTTP path, V8, libuv");
    }
  }
  return out;
}

interface Profiled {
  name: string;
  requests: number;
  counts: Map<string, number>;
}

async function profile(name: string, url: string, pid: number, scratch: string): Promise<Profiled> {
  await autocannon({ url, connections: 16, duration: WARM_UP_S });
  const data = join(scratch, `${name.replace(/\W+/g, "_")}.perf`);
  const perf: ChildProcess = spawn("perf", ["record", "-F", String(FREQUENCY), "-g", "-p", String(pid), "-o", data], { stdio: "ignore" });
  await sleep(500);
  const r = await autocannon({ url, connections: 16, duration: SECONDS });
  perf.kill("SIGINT");
  await new Promise((resolve) => perf.once("exit", resolve));
  return { name, requests: r.requests.total, counts: categorize(perfSamples(data)) };
}

export async function runSidecarProfile(): Promise<string[]> {
  execFileSync("perf", ["--version"], { stdio: "ignore" });
  const scratch = mkdtempSync(join(tmpdir(), "sidecar-profile-"));
  const env = { NODE_OPTIONS: PERF_MAP };
  let filtered: LocalMesh | undefined;
  let noop: LocalMesh | undefined;
  let bare: Daemon<{ port: number }> | undefined;
  try {
    filtered = await startLocalMesh({ hubConfig: "", agentEnv: env });
    noop = await startLocalMesh({ hubConfig: "", agentArgs: ["--wasm", buildNoopModule(scratch)], agentEnv: env });
    bare = await startDaemon<{ port: number }>(join(import.meta.dirname, "bare_proxy.mjs"), [String(filtered.app.port)], "bare-proxy listening ", undefined, {
      ...process.env,
      ...env,
    });
    // As in the sidecar bench: no hub handler, every report still decoded by the hub.
    for (const mesh of [filtered, noop]) await withoutHubHandlers(mesh);
    const path = "/pets/42?key=bench";
    const results: Profiled[] = [];
    for (const [name, url, pid] of [
      ["bare Node proxy", `http://127.0.0.1:${bare.listening.port}${path}`, bare.proc.pid!],
      ["no-op module", `${noop.inboundUrl}${path}`, noop.sidecar.proc.pid!],
      ["filter", `${filtered.inboundUrl}${path}`, filtered.sidecar.proc.pid!],
    ] as const) {
      results.push(await profile(name, url, pid, scratch));
      for (const mesh of [filtered, noop]) mesh.app.seen.length = 0;
    }
    const categories = [...new Set(results.flatMap((r) => [...r.counts.keys()]))].sort();
    const perRequest = (r: Profiled, k: string) => ((r.counts.get(k) ?? 0) * 1e6) / FREQUENCY / r.requests;
    const width = Math.max(...categories.map((c) => c.length));
    return [
      `sidecar CPU per request by category (perf -F ${FREQUENCY}, 16 connections for ${SECONDS} s after ${WARM_UP_S} s; load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(" ")}), µs`,
      `${"".padEnd(width)}  ${results.map((r) => r.name.padStart(16)).join("")}`,
      ...categories.map((k) => `${k.padEnd(width)}  ${results.map((r) => perRequest(r, k).toFixed(1).padStart(16)).join("")}`),
      `${"all".padEnd(width)}  ${results
        .map((r) =>
          categories
            .reduce((a, k) => a + perRequest(r, k), 0)
            .toFixed(1)
            .padStart(16),
        )
        .join("")}`,
    ];
  } finally {
    await bare?.stop();
    await noop?.stop();
    await filtered?.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) for (const line of await runSidecarProfile()) console.log(line);
