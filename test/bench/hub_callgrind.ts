// Instructions per reported request of the hub serving the sidecar's calls
// (issue 30), counted by callgrind: repeatable on a loaded machine, where the
// sidecar bench's "the hub of sidecar (filter) … CPU ms per reported request"
// moves with the load. First the filter sidecar's own hub calls are
// recorded: a local mesh (hub without handlers, as in the sidecar bench) whose
// agent reports through a recording gRPC server in front of the hub, 16
// connections. Then, for each checkout named, its `hubs server` (no
// handlers) runs under `valgrind --tool=callgrind` and is sent the recorded
// calls one at a time, as the agent sends them (a Report per 100 requests,
// Checks when the check cache expires; the sidecar's first 3 000 requests,
// whose Checks fill its caches, are not recorded): after an uninstrumented warm-up,
// the instructions of HUB_CALLGRIND_REPORTS Report calls and then of as many
// Check calls are counted apart, so the mix of the two, which varies with
// the rate and the run, is the recorded run's, applied to both checkouts.
// Node runs with V8's --single-threaded: JIT compiling and GC are counted on
// the main thread where they happen at all.
//   node --import tsx test/bench/hub_callgrind.ts [checkout ...]   (after npm run build)
// Each checkout (`.` for this one, or another built checkout's directory)
// gets the same recorded calls; none: this checkout. HUB_CALLGRIND_WARM_UP
// (400 Reports, and a Check after every fourth) and HUB_CALLGRIND_REPORTS
// (60) set the runs. HUB_CALLGRIND_RECORDED=<dir> saves the recorded calls
// there, or replays the ones saved there (builds compared on the very same
// calls, in separate runs); HUB_CALLGRIND_NODE_FLAGS adds node flags to each
// hub (what a V8 flag changes, without a build); HUB_CALLGRIND_KEEP=<dir>
// keeps each counted window's dumps and V8's perf map in <dir>/<checkout>-Report
// and -Check, for test/bench/callgrind_functions.ts (per call);
// HUB_CALLGRIND_IDLE_MS leaves the hub idle that long before each counted
// window, uncounted, as the sidecar bench's other rows leave the filter row's
// hub (what V8's memory reducer does then is counted in the window). Not part of
// `npm run bench`: slow (valgrind), and its figures are instruction counts,
// not speed. HUB_CALLGRIND_LIFETIME=<Reports> counts instead everything from
// the hub's first call through that many Reports (a Check after every
// fourth, the warm-up's schedule): what a hub as young as the sidecar bench's
// (about 1 500 Reports) spends in all, each first compile counted once
// wherever it falls (a window after a warm-up counts those that fall in it).
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { basename, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import autocannon from "autocannon";
import { AGENT_BIN, type LocalMesh, type SidecarListening, demoSidecarArgs, loopbackHubArgs, startLocalMesh } from "../../host/demo/local_mesh.ts";
import { type Daemon, startDaemon } from "../../host/demo/processes.ts";
import { parseClusters } from "../../host/hub/clusters.ts";
import { HubTransport } from "../../host/hub/transport.ts";
import type { GrpcCall } from "../../host/wasm/abi_types.ts";
import { rawUnaryMethod } from "../../host/wire/raw_grpc.ts";
import { messageType } from "../../host/wire/protos.ts";
import { dumpFileTotal, startUnderCallgrind } from "./callgrind_node.ts";
import { withoutHubHandlers } from "./sidecar.ts";

const WARM_UP = Number(process.env.HUB_CALLGRIND_WARM_UP ?? 400);
const REPORTS = Number(process.env.HUB_CALLGRIND_REPORTS ?? 60);
/** Requests through the recording sidecar before its calls are recorded: its start's Checks (every connection's first request) are not the bench's mix. */
const UNRECORDED_REQUESTS = 3000;
/** How long the sidecar's calls are recorded (two check-cache expiries, as in a sidecar bench round). */
const RECORDED_SECONDS = 10;
/** Calls kept to replay, per method. */
const KEPT = 60;
/** Node flags for each hub counted (before the script), space-separated: what a V8 flag changes, without a build. */
const NODE_FLAGS = (process.env.HUB_CALLGRIND_NODE_FLAGS ?? "").split(" ").filter((f) => f !== "");
/** A folder the recorded calls are saved to, or read from when it has them: runs of different builds on the very same calls. */
const RECORDED_DIR = process.env.HUB_CALLGRIND_RECORDED;
/** A folder to keep each counted window's dumps and V8's perf map in, for test/bench/callgrind_functions.ts. */
const KEEP = process.env.HUB_CALLGRIND_KEEP;
/** Idleness before each counted window (ms): the sidecar bench's other rows run 10 to 20 s between the filter row's runs. */
const IDLE_MS = Number(process.env.HUB_CALLGRIND_IDLE_MS ?? 0);
/** Reports counted from the first call on (0: the windows after the warm-up instead). */
const LIFETIME = Number(process.env.HUB_CALLGRIND_LIFETIME ?? 0);

/** The sidecar's hub calls, as recorded (the first KEPT of each method) and counted. */
interface Recorded {
  reports: Buffer[];
  checks: Buffer[];
  reportCalls: number;
  checkCalls: number;
  /** Reported requests (entries) per Report, on average. */
  entriesPerReport: number;
  /** Checks per Report in the recorded run. */
  checksPerReport: number;
  requests: number;
}

/** A call to the hub as the filter makes it (cluster hub_server). */
function hubCall(method: "Check" | "Report", message: Uint8Array, timeoutMs: number): GrpcCall {
  return { token: 1, rootId: 1, cluster: "hub_server", service: "mesh.hub.v1.Hub", method, metadata: [], message, timeoutMs };
}

/** The filter sidecar's hub calls for RECORDED_SECONDS with 16 connections, through a recording server in front of the mesh's hub. */
async function record(mesh: LocalMesh): Promise<Recorded> {
  const upstream = new HubTransport({ clusters: parseClusters([`hub_server=127.0.0.1:${mesh.hub.listening.grpcPort}`]) });
  const recorded: Recorded = { reports: [], checks: [], reportCalls: 0, checkCalls: 0, entriesPerReport: 0, checksPerReport: 0, requests: 0 };
  let recording = false;
  const forward =
    (method: "Check" | "Report"): grpc.handleUnaryCall<Buffer, Buffer> =>
    (call, callback) => {
      if (recording) {
        const kept = method === "Report" ? recorded.reports : recorded.checks;
        if (kept.length < KEPT) kept.push(call.request);
        if (method === "Report") recorded.reportCalls++;
        else recorded.checkCalls++;
      }
      void upstream
        .call(hubCall(method, call.request, 5000))
        .then((r) => (r.ok ? callback(null, Buffer.from(r.message)) : callback({ code: r.code, details: r.message })));
    };
  const server = new grpc.Server();
  server.addService(
    { Check: rawUnaryMethod("/mesh.hub.v1.Hub/Check"), Report: rawUnaryMethod("/mesh.hub.v1.Hub/Report") },
    { Check: forward("Check"), Report: forward("Report") },
  );
  let agent: Daemon<SidecarListening> | undefined;
  try {
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
    );
    agent = await agentFor(mesh, port);
    const url = `http://127.0.0.1:${agent.listening.inbound}/pets/42?key=bench`;
    await autocannon({ url, connections: 16, amount: UNRECORDED_REQUESTS });
    recording = true;
    const r = await autocannon({ url, connections: 16, duration: RECORDED_SECONDS });
    recording = false;
    mesh.app.seen.length = 0;
    if (r.non2xx + r.errors > 0) throw new Error(`the recorded sidecar answered ${r.non2xx + r.errors} requests with errors`);
    recorded.requests = r.requests.total;
  } finally {
    await agent?.stop();
    server.forceShutdown();
    upstream.close();
  }
  if (recorded.reports.length === 0 || recorded.checks.length === 0) throw new Error("the sidecar made no Report or no Check call");
  const Report = messageType("mesh.hub.v1.ReportRequest");
  const entries = recorded.reports.reduce((a, b) => a + ((Report.decode(b) as unknown as { attributes: unknown[] }).attributes?.length ?? 0), 0);
  recorded.entriesPerReport = entries / recorded.reports.length;
  recorded.checksPerReport = recorded.checkCalls / recorded.reportCalls;
  return recorded;
}

/** `hubs server` of `checkout` under callgrind: no configuration store, hence no handler; the standard metrics on. */
function hubUnderCallgrind(checkout: string, out: string): Promise<Daemon<{ grpcPort: number }>> {
  const script = join(checkout, "build", "out", "hubs.mjs");
  return startUnderCallgrind(script, [...loopbackHubArgs(), "--log_output_level", "default:warn"], out, "hubs listening ", {
    // With KEEP: V8 writes /tmp/perf-<pid>.map, which names the JIT code callgrind sees only as addresses.
    nodeFlags: [...(KEEP ? ["--perf-basic-prof-only-functions"] : []), ...NODE_FLAGS],
  });
}

function agentFor(mesh: LocalMesh, hubPort: number): Promise<Daemon<SidecarListening>> {
  return startDaemon<SidecarListening>(AGENT_BIN, demoSidecarArgs(mesh.app.port, mesh.sidecarConfigDir, hubPort), "disco-agent listening ", undefined, {
    ...process.env,
    POD_NAME: "petstore-v1",
    POD_NAMESPACE: "demo",
  });
}

/** Instructions of all threads' dumps (callgrind's `totals:` lines); the dumps are then removed, or moved to `keep` with the perf map. */
function dumped(out: string, pid: number, keep?: { dir: string; calls: number }): number {
  execFileSync("callgrind_control", ["--dump", String(pid)], { stdio: "ignore" });
  if (keep) {
    mkdirSync(keep.dir, { recursive: true });
    copyFileSync(`/tmp/perf-${pid}.map`, join(keep.dir, "perf.map"));
    writeFileSync(join(keep.dir, "requests.json"), JSON.stringify({ requests: keep.calls, pid }));
  }
  let total = 0;
  for (const f of readdirSync(out)) {
    total += dumpFileTotal(join(out, f));
    if (keep) copyFileSync(join(out, f), join(keep.dir, f));
    rmSync(join(out, f));
  }
  return total;
}

interface Counted {
  checkout: string;
  perReport: number;
  perCheck: number;
}

async function count(checkout: string, recorded: Recorded, scratch: string): Promise<Counted> {
  const out = mkdtempSync(join(scratch, "cg-"));
  const hub = await hubUnderCallgrind(checkout, out);
  const transport = new HubTransport({ clusters: parseClusters([`hub_server=127.0.0.1:${hub.listening.grpcPort}`]) });
  const pid = String(hub.proc.pid);
  let n = 0;
  const send = async (method: "Check" | "Report") => {
    const messages = method === "Report" ? recorded.reports : recorded.checks;
    const r = await transport.call(hubCall(method, messages[n++ % messages.length], 120_000));
    if (!r.ok) throw new Error(`${method} to ${checkout}'s hub failed: ${r.code} ${r.message}`);
  };
  try {
    if (LIFETIME > 0) {
      execFileSync("callgrind_control", ["--instr=on", pid], { stdio: "ignore" });
      for (const f of readdirSync(out)) rmSync(join(out, f));
      execFileSync("callgrind_control", ["--zero", pid], { stdio: "ignore" });
      for (let i = 0; i < LIFETIME; i++) {
        await send("Report");
        if (i % 4 === 0) await send("Check");
      }
      const keep = KEEP ? { dir: join(KEEP, `${basename(checkout)}-lifetime`), calls: LIFETIME } : undefined;
      return { checkout, perReport: dumped(out, hub.proc.pid!, keep) / LIFETIME, perCheck: 0 };
    }
    for (let i = 0; i < WARM_UP; i++) {
      await send("Report");
      if (i % 4 === 0) await send("Check");
    }
    execFileSync("callgrind_control", ["--instr=on", pid], { stdio: "ignore" });
    const counted = async (method: "Check" | "Report") => {
      if (IDLE_MS > 0) await sleep(IDLE_MS);
      for (const f of readdirSync(out)) rmSync(join(out, f));
      execFileSync("callgrind_control", ["--zero", pid], { stdio: "ignore" });
      for (let i = 0; i < REPORTS; i++) await send(method);
      const keep = KEEP ? { dir: join(KEEP, `${basename(checkout)}-${method}`), calls: REPORTS } : undefined;
      return dumped(out, hub.proc.pid!, keep) / REPORTS;
    };
    const perReport = await counted("Report");
    const perCheck = await counted("Check");
    return { checkout, perReport, perCheck };
  } finally {
    transport.close();
    await hub.stop("SIGKILL");
    if (KEEP) rmSync(`/tmp/perf-${hub.proc.pid}.map`, { force: true });
  }
}

/** The recorded calls, saved as one file per message and a summary. */
function save(dir: string, r: Recorded): void {
  mkdirSync(dir, { recursive: true });
  r.reports.forEach((m, i) => writeFileSync(join(dir, `report-${i}.bin`), m));
  r.checks.forEach((m, i) => writeFileSync(join(dir, `check-${i}.bin`), m));
  const { reports: _r, checks: _c, ...counts } = r;
  writeFileSync(join(dir, "recorded.json"), JSON.stringify(counts));
}

function load(dir: string): Recorded {
  const files = readdirSync(dir);
  const messages = (prefix: string) =>
    Array.from({ length: files.filter((f) => f.startsWith(prefix)).length }, (_, i) => readFileSync(join(dir, `${prefix}${i}.bin`)));
  return { ...JSON.parse(readFileSync(join(dir, "recorded.json"), "utf8")), reports: messages("report-"), checks: messages("check-") };
}

async function recordOnce(): Promise<Recorded> {
  const mesh = await startLocalMesh({ hubConfig: "" });
  try {
    await withoutHubHandlers(mesh);
    return await record(mesh);
  } finally {
    await mesh.stop();
  }
}

export async function runHubCallgrind(checkouts: string[]): Promise<string[]> {
  const scratch = mkdtempSync(join(tmpdir(), "hub-callgrind-"));
  try {
    let recorded: Recorded;
    if (RECORDED_DIR !== undefined && existsSync(join(RECORDED_DIR, "recorded.json"))) recorded = load(RECORDED_DIR);
    else {
      recorded = await recordOnce();
      if (RECORDED_DIR !== undefined) save(RECORDED_DIR, recorded);
    }
    const rows: Counted[] = [];
    for (const c of checkouts) rows.push(await count(c, recorded, scratch));
    const perRequest = (r: Counted) => (r.perReport + recorded.checksPerReport * r.perCheck) / recorded.entriesPerReport;
    if (LIFETIME > 0) {
      return [
        `hub instructions per reported request from its first call through ${LIFETIME} Reports of the filter sidecar's (${recorded.entriesPerReport.toFixed(0)} entries each) and a Check after every fourth (callgrind; load average ${loadavg()
          .map((x) => x.toFixed(2))
          .join(" ")})`,
        ...rows.map((r) => `${r.checkout}: ${Math.round(perRequest(r))} per reported request (${Math.round(r.perReport)} per Report with its share of Checks)`),
        ...rows.slice(1).map((r) => `${r.checkout} / ${rows[0].checkout}: ${(perRequest(r) / perRequest(rows[0])).toFixed(3)}`),
      ];
    }
    return [
      `hub instructions per reported request, the filter sidecar's calls (callgrind; recorded: ${recorded.requests} requests in ${RECORDED_SECONDS} s, ${recorded.reportCalls} Reports of ${recorded.entriesPerReport.toFixed(0)} entries, ${recorded.checkCalls} Checks; ${WARM_UP} Reports of warm-up, ${REPORTS} Reports and ${REPORTS} Checks counted, one call at a time${IDLE_MS > 0 ? `, each window after ${IDLE_MS} ms idle` : ""}; load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(" ")})`,
      ...rows.map(
        (r) =>
          `${r.checkout}: ${Math.round(perRequest(r))} per reported request (a Report call ${Math.round(r.perReport)}, a Check call ${Math.round(r.perCheck)}, ${recorded.checksPerReport.toFixed(2)} Checks per Report)`,
      ),
      ...rows
        .slice(1)
        .map(
          (r) =>
            `${r.checkout} / ${rows[0].checkout}: per reported request ${(perRequest(r) / perRequest(rows[0])).toFixed(3)}, Report ${(r.perReport / rows[0].perReport).toFixed(3)}, Check ${(r.perCheck / rows[0].perCheck).toFixed(3)}`,
        ),
    ];
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const here = join(import.meta.dirname, "..", "..");
  const named = process.argv.slice(2).map((c) => (c === "." ? here : c));
  for (const line of await runHubCallgrind(named.length > 0 ? named : [here])) console.log(line);
  process.exit(0);
}
