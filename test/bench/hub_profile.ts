// Where the hub's CPU goes while it serves the filter sidecar's traffic
// (issue 30): the sidecar bench's filter row (a local mesh, hub without
// handlers, 16 connections) after a warm-up, `perf record` sampling every
// thread of the `hubs server` process; each sample is put in one category
// by its call stack, per reported request (a request through the sidecar).
// The hub's scavenges meanwhile (V8's --trace-gc-nvp) are summed too.
//   node --import tsx test/bench/hub_profile.ts   (after npm run build; needs perf)
// HUB_PROFILE_SECONDS (10) and HUB_PROFILE_WARM_UP_SECONDS (8) set the
// sampled run and the warm-up. Not part of `npm run bench`: it needs perf and
// root (or perf_event_paranoid <= 1), and its figures are shares, not speed.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import autocannon from "autocannon";
import { type LocalMesh, startLocalMesh } from "../../host/demo/local_mesh.ts";
import { cpuSeconds } from "./process_usage.ts";
import { withoutHubHandlers } from "./sidecar.ts";
import { type PerfSample, perfSamples } from "./perf_samples.ts";

const SECONDS = Number(process.env.HUB_PROFILE_SECONDS ?? 10);
const WARM_UP_S = Number(process.env.HUB_PROFILE_WARM_UP_SECONDS ?? 8);
const FREQUENCY = 2000;

/** Main-thread categories, first match wins on the whole stack: what the sample was doing for the calls. */
const CATEGORIES: ReadonlyArray<readonly [string, RegExp]> = [
  ["GC", /Heap::CollectGarbage|Scavenge|MinorGC|MarkCompact|PerformGarbageCollection|IncrementalMarking/],
  ["JIT compiling", /Compiler::|Runtime_CompileLazy|Maglev|Turbofan|Deoptimiz/],
  ["Report decoding (readPlainReport)", /JS:\S*(readPlainReport|decodeReportBytes|decodeReportGeneral|decodeReportSlots|readReportSlots) /],
  ["standard request metrics (record)", /JS:\S*(record|recordSlots|evaluateLabel|labelValue|reportProtocol) /],
];

/** The bundle chunk holding grpc-js (its server's call class is defined there). */
function grpcJsChunk(outDir: string): string {
  const hit = execFileSync("grep", ["-l", "BaseServerInterceptingCall", "-r", outDir, "--include=*.mjs"], { encoding: "utf8" }).trim().split("\n")[0];
  return hit.slice(hit.lastIndexOf("/") + 1);
}

function categorize(all: PerfSample[], grpcChunk: string): Map<string, number> {
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
    const named = CATEGORIES.find(([, re]) => re.test(stack));
    if (named) {
      add(named[0]);
      continue;
    }
    // The rest by its innermost JavaScript function's owner.
    const js = s.frames.find((f) => f.startsWith("JS:"));
    if (js === undefined) add(s.frames[0]?.includes("[kernel") ? "kernel" : /nghttp2|http2/i.test(stack) ? "native HTTP/2 (nghttp2)" : "native: libuv, Node");
    else if (js.includes(grpcChunk)) add("grpc-js server (JS)");
    else if (js.includes("node:")) add(/http2|stream|events/.test(js) ? "Node's http2, streams, events (JS)" : "Node's other JS (timers, ticks)");
    else add("the hub's other JS (handlers, gRPC metrics)");
  }
  return out;
}

/** V8's --trace-gc-nvp lines of scavenges: count, bytes promoted, pause. */
function scavenges(output: string): { count: number; promotedKB: number; pauseMs: number; markCompacts: number } {
  let count = 0;
  let promoted = 0;
  let pause = 0;
  for (const line of output.split("\n")) {
    if (!/\bgc=s\b/.test(line)) continue;
    count++;
    promoted += Number(/\bpromoted=(\d+)/.exec(line)?.[1] ?? 0);
    pause += Number(/\bpause=([\d.]+)/.exec(line)?.[1] ?? 0);
  }
  return { count, promotedKB: promoted / 1024, pauseMs: pause, markCompacts: (output.match(/\bgc=m[cs]\b/g) ?? []).length };
}

export async function runHubProfile(): Promise<string[]> {
  execFileSync("perf", ["--version"], { stdio: "ignore" });
  const scratch = mkdtempSync(join(tmpdir(), "hub-profile-"));
  // The hub is started with this process's environment: its Node options are set for it alone.
  const preload = join(scratch, "gc-trace.cjs");
  writeFileSync(preload, 'require("v8").setFlagsFromString("--trace-gc-nvp");\n');
  const saved = process.env.NODE_OPTIONS;
  let mesh: LocalMesh | undefined;
  try {
    process.env.NODE_OPTIONS = `--perf-basic-prof-only-functions --require ${preload}`;
    try {
      mesh = await startLocalMesh({ hubConfig: "", agentEnv: { NODE_OPTIONS: saved ?? "" } });
    } finally {
      if (saved === undefined) delete process.env.NODE_OPTIONS;
      else process.env.NODE_OPTIONS = saved;
    }
    await withoutHubHandlers(mesh);
    const url = `${mesh.inboundUrl}/pets/42?key=bench`;
    const hubPid = mesh.hub.proc.pid!;
    await autocannon({ url, connections: 16, duration: WARM_UP_S });
    mesh.app.seen.length = 0;
    const data = join(scratch, "hub.perf");
    const from = mesh.hub.output().length;
    const cpuBefore = cpuSeconds(hubPid);
    const perf: ChildProcess = spawn("perf", ["record", "-F", String(FREQUENCY), "-g", "-p", String(hubPid), "-o", data], { stdio: "ignore" });
    await sleep(500);
    const r = await autocannon({ url, connections: 16, duration: SECONDS });
    perf.kill("SIGINT");
    await new Promise((resolve) => perf.once("exit", resolve));
    const cpu = cpuSeconds(hubPid) - cpuBefore;
    mesh.app.seen.length = 0;
    const gc = scavenges(mesh.hub.output().slice(from));
    const n = r.requests.total;
    const counts = categorize(perfSamples(data), grpcJsChunk(join(import.meta.dirname, "..", "..", "build", "out")));
    const perRequest = (k: number) => ((k * 1e6) / FREQUENCY / n).toFixed(2).padStart(7);
    const width = Math.max(...[...counts.keys()].map((k) => k.length));
    return [
      `the hub of sidecar (filter): CPU per reported request by category (perf -F ${FREQUENCY}, 16 connections for ${SECONDS} s after ${WARM_UP_S} s; ${n} requests, ${Math.round(
        r.requests.average,
      )} req/s; load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(" ")}), µs`,
      ...[...counts].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k.padEnd(width)}  ${perRequest(v)}`),
      `${"all sampled".padEnd(width)}  ${perRequest([...counts.values()].reduce((a, b) => a + b, 0))}   (/proc: ${((cpu / n) * 1e6).toFixed(2)})`,
      `scavenges ${gc.count} (${((gc.promotedKB * 1024) / n).toFixed(0)} bytes promoted per reported request, ${(gc.promotedKB / Math.max(1, gc.count)).toFixed(0)} KB per scavenge, ${gc.pauseMs.toFixed(0)} ms of pauses), mark-compacts ${gc.markCompacts}`,
    ];
  } finally {
    await mesh?.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) for (const line of await runHubProfile()) console.log(line);
