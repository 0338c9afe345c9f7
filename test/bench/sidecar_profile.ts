// Where the sidecar's CPU goes, per request, beside the bare proxy's (issue 30):
// the three targets of the sidecar bench (bare Node proxy, the agent with the
// no-op module, the agent with the filter), each saturated with 16
// connections after a warm-up while `perf record` samples every thread of
// its process; each sample is put in one category by its call stack.
//   node --import tsx test/bench/sidecar_profile.ts   (after npm run build; needs perf)
// SIDECAR_PROFILE_SECONDS (10) and SIDECAR_PROFILE_WARM_UP_SECONDS (8) set the
// sampled run and the warm-up; SIDECAR_PROFILE_ROUNDS (1) runs the three rows
// that many times, alternated, and reports the rounds after the first
// together (the filter row is still being recompiled in its first 10-20 s).
// Not part of `npm run bench`: it needs perf and root (or
// perf_event_paranoid <= 1), and its figures are shares, not speed.
// SIDECAR_PROFILE_DETAIL=<part of a category's name> adds that category of
// the no-op and filter rows compared by leaf symbol and by JS caller;
// SIDECAR_PROFILE_KEEP=<dir> keeps the perf data, and SIDECAR_PROFILE_FROM=<dir>
// reports kept data again without running anything.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import autocannon from "autocannon";
import { type LocalMesh, startLocalMesh } from "../../host/demo/local_mesh.ts";
import { type Daemon, startDaemon } from "../../host/demo/processes.ts";
import { buildNoopModule } from "./noop_module.ts";
import { withoutHubHandlers } from "./sidecar.ts";
import { type PerfSample, perfSamples } from "./perf_samples.ts";
import { breakdown, diffLines } from "./perf_detail.ts";

const SECONDS = Number(process.env.SIDECAR_PROFILE_SECONDS ?? 10);
const WARM_UP_S = Number(process.env.SIDECAR_PROFILE_WARM_UP_SECONDS ?? 8);
const FREQUENCY = 2000;
const PERF_MAP = "--perf-basic-prof-only-functions";
/** Rounds of the three rows; with more than one, the first is left out (one more warm-up) and the others merged. */
const ROUNDS = Number(process.env.SIDECAR_PROFILE_ROUNDS ?? 1);
/** A directory to keep each row's perf data in, to be read again with SIDECAR_PROFILE_FROM=<it>. */
const KEEP = process.env.SIDECAR_PROFILE_KEEP;

/**
 * Categories, first match wins: a sample counts once, under what it was doing for the request.
 * The hub calls: grpc-js's and node:http2's functions (the base of earlier runs), and host/hub's and
 * host/wire/h2's (the session's socket reads enter at `onBytes`, its writes leave from `flushFrames`).
 */
const MAIN_CATEGORIES: ReadonlyArray<readonly [string, RegExp]> = [
  ["GC", /Heap::CollectGarbage|Scavenge|MinorGC|MarkCompact|PerformGarbageCollection|IncrementalMarking/],
  [
    "the module's callbacks (wasm and the host calls)",
    /wasm-function|JS:\S*(requestHeaders|finishStream|createStream|onResponseHeaders|grpcReceive|proxy_\w+) /,
  ],
  [
    "grpc-js and HTTP/2 (hub calls)",
    /Http2|http2|nghttp2|JS:\S*(makeUnaryRequest|createCall|createResolvingCall|ResolvingCall|LoadBalancingCall|SubchannelCall|generateCallCredentialsMetadata|sendMessageWithContext|InterceptingCall|unary|hubRequestHeaders|metadataHeaders|framedMessage|unaryResponseMessage|trailerStatus|onBytes|onFrame|onHeaderFragment|flushFrames|UnaryCall) /,
  ],
  [
    "async hooks (the safety net's AsyncLocalStorage)",
    /JS:\S*(emitInitScript|emitInitNative|_propagate|lookupPublicResource|executionAsyncResource|promiseInitHook) node:(internal\/)?async_hooks/,
  ],
];

/** The samples by category. */
function categorize(all: PerfSample[]): Map<string, PerfSample[]> {
  const threads = new Map<string, number>();
  for (const s of all) threads.set(s.thread, (threads.get(s.thread) ?? 0) + 1);
  const main = [...threads].sort((a, b) => b[1] - a[1])[0]?.[0];
  const out = new Map<string, PerfSample[]>();
  const add = (k: string, s: PerfSample) => {
    const list = out.get(k);
    if (list) list.push(s);
    else out.set(k, [s]);
  };
  for (const s of all) {
    const stack = s.frames.join(" | ");
    if (s.thread !== main) {
      add(/compiler::|Compil|Turbofan|Maglev/.test(stack) ? "helper threads: JIT compilers" : "helper threads: GC and other", s);
      continue;
    }
    const named = MAIN_CATEGORIES.find(([, re]) => re.test(stack));
    if (named) add(`main: ${named[0]}`, s);
    else if (s.frames[0]?.includes("[kernel")) add("main: kernel", s);
    else {
      const js = s.frames.find((f) => f.startsWith("JS:"));
      add(js?.includes("/build/out/") ? "main: the agent's own JS" : "main: Node's HTTP path, V8, libuv", s);
    }
  }
  return out;
}

export interface Profiled {
  name: string;
  requests: number;
  samples: Map<string, PerfSample[]>;
}

export async function profile(name: string, url: string, pid: number, scratch: string, round = 0): Promise<Profiled> {
  await autocannon({ url, connections: 16, duration: WARM_UP_S });
  const data = join(scratch, `${name.replace(/\W+/g, "_")}.${round}.perf`);
  const perf: ChildProcess = spawn("perf", ["record", "-F", String(FREQUENCY), "-g", "-p", String(pid), "-o", data], { stdio: "ignore" });
  await sleep(500);
  const r = await autocannon({ url, connections: 16, duration: SECONDS });
  perf.kill("SIGINT");
  await new Promise((resolve) => perf.once("exit", resolve));
  if (KEEP) {
    mkdirSync(KEEP, { recursive: true });
    copyFileSync(data, join(KEEP, basename(data)));
    writeFileSync(join(KEEP, `${basename(data)}.json`), JSON.stringify({ name, round, requests: r.requests.total }));
  }
  return { name, requests: r.requests.total, samples: categorize(perfSamples(data)) };
}

/** One row of several rounds: their samples and requests together. */
function merged(name: string, rounds: Profiled[]): Profiled {
  const samples = new Map<string, PerfSample[]>();
  for (const p of rounds) for (const [k, v] of p.samples) samples.set(k, [...(samples.get(k) ?? []), ...v]);
  return { name, requests: rounds.reduce((a, p) => a + p.requests, 0), samples };
}

/**
 * Each row's rounds after the first merged (the first is one more warm-up:
 * V8 is still recompiling then, the filter row most), or its one round.
 */
function steadyRows(rounds: Profiled[][]): Profiled[] {
  return rounds[0].map((first, i) =>
    rounds.length === 1
      ? first
      : merged(
          first.name,
          rounds.slice(1).map((r) => r[i]),
        ),
  );
}

/** The rows of a profile kept with SIDECAR_PROFILE_KEEP, read again. */
function keptRows(dir: string): Profiled[] {
  const kept = readdirSync(dir)
    .filter((f) => f.endsWith(".perf.json"))
    .map((f) => ({
      data: join(dir, f.slice(0, -".json".length)),
      ...(JSON.parse(readFileSync(join(dir, f), "utf8")) as { name: string; round: number; requests: number }),
    }));
  const rounds = [...new Set(kept.map((k) => k.round))].sort((a, b) => a - b);
  return steadyRows(
    rounds.map((round) =>
      ROW_NAMES.map((name) => {
        const k = kept.find((x) => x.round === round && x.name === name);
        if (!k) throw new Error(`${dir}: no ${name} row of round ${round}`);
        return { name, requests: k.requests, samples: categorize(perfSamples(k.data)) };
      }),
    ),
  );
}

const ROW_NAMES = ["bare Node proxy", "no-op module", "filter"] as const;

/** The table, and with SIDECAR_PROFILE_DETAIL the named category of the no-op and filter rows compared. */
export function report(results: Profiled[]): string[] {
  const categories = [...new Set(results.flatMap((r) => [...r.samples.keys()]))].sort();
  const perRequest = (r: Profiled, k: string) => ((r.samples.get(k)?.length ?? 0) * 1e6) / FREQUENCY / r.requests;
  const width = Math.max(...categories.map((c) => c.length));
  const lines = [
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
  const detail = process.env.SIDECAR_PROFILE_DETAIL;
  const category = detail && categories.find((c) => c.includes(detail));
  if (category) {
    const [a, b] = results.slice(-2).map((r) => breakdown(r.samples.get(category) ?? [], FREQUENCY, r.requests));
    lines.push(
      "",
      `"${category}": ${results.at(-2)!.name} against ${results.at(-1)!.name}`,
      ...diffLines("by leaf symbol", a.leaf, b.leaf),
      ...diffLines("by the JS function nearest the leaf", a.js, b.js),
      ...diffLines("by JS/builtin frames nearest the leaf (3)", a.chain, b.chain),
    );
  }
  return lines;
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
    const rows: ReadonlyArray<readonly [(typeof ROW_NAMES)[number], string, number]> = [
      ["bare Node proxy", `http://127.0.0.1:${bare.listening.port}${path}`, bare.proc.pid!],
      ["no-op module", `${noop.inboundUrl}${path}`, noop.sidecar.proc.pid!],
      ["filter", `${filtered.inboundUrl}${path}`, filtered.sidecar.proc.pid!],
    ];
    const rounds: Profiled[][] = [];
    const loads: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Alternated (odd rounds in reverse), so a drift of the machine's load weighs on every row alike.
      const results = new Map<string, Profiled>();
      for (const [name, url, pid] of round % 2 === 0 ? rows : [...rows].reverse()) {
        results.set(name, await profile(name, url, pid, scratch, round));
        for (const mesh of [filtered, noop]) mesh.app.seen.length = 0;
      }
      rounds.push(rows.map(([name]) => results.get(name)!));
      loads.push(loadavg()[0].toFixed(2));
    }
    return [
      `sidecar CPU per request by category (perf -F ${FREQUENCY}, 16 connections for ${SECONDS} s after ${WARM_UP_S} s${
        ROUNDS > 1 ? `, ${ROUNDS} alternated rounds, the first left out` : ""
      }; load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(" ")}${ROUNDS > 1 ? `, after each round ${loads.join(" ")}` : ""}), µs`,
      ...report(steadyRows(rounds)),
    ];
  } finally {
    await bare?.stop();
    await noop?.stop();
    await filtered?.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const from = process.env.SIDECAR_PROFILE_FROM;
  for (const line of from ? report(keptRows(from)) : await runSidecarProfile()) console.log(line);
}
