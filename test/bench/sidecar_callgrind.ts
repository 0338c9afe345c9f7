// Instructions per request of the sidecar's process (issue 30), counted by
// callgrind: repeatable on a loaded machine, where the sidecar bench's
// timings are not. A local mesh (hub, echo app) is started, then the agent
// under `valgrind --tool=callgrind` in front of the same app; after a
// warm-up the counts are zeroed, a fixed number of requests is sent with 16
// connections, and the counts are dumped: instructions per request, the
// main thread (the event loop: what bounds throughput) and all threads.
// Node runs with V8's --single-threaded, so JIT compiling and GC are counted
// on the main thread where they happen at all after the warm-up.
//   node --import tsx test/bench/sidecar_callgrind.ts [checkout ...]   (after npm run build)
// Each checkout named (`.` for this one, or another built checkout's
// directory; `bare` for the sidecar bench's bare Node proxy,
// test/bench/bare_proxy.mjs) is measured the same way in turn, in front of
// the same app and hub, for a before and after; none: this checkout.
// SIDECAR_CALLGRIND_WARM_UP (12000, run uninstrumented) and SIDECAR_CALLGRIND_REQUESTS (3000) set
// the request counts; SIDECAR_CALLGRIND_WASM runs another module (e.g. the
// no-op one). Not part of `npm run bench`: slow (valgrind runs Node ~50×
// slower) and its figures are instruction counts, not speed.
// SIDECAR_CALLGRIND_KEEP=<dir> keeps each agent's dumps and perf map there
// (V8 then writes one), for test/bench/callgrind_functions.ts.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { type LocalMesh, demoSidecarArgs, startLocalMesh } from "../../host/demo/local_mesh.ts";
import type { Daemon } from "../../host/demo/processes.ts";
import { dumpFileTotal, startUnderCallgrind } from "./callgrind_node.ts";
import { withoutHubHandlers } from "./sidecar.ts";

const WARM_UP = Number(process.env.SIDECAR_CALLGRIND_WARM_UP ?? 12000);
const REQUESTS = Number(process.env.SIDECAR_CALLGRIND_REQUESTS ?? 3000);
const WASM = process.env.SIDECAR_CALLGRIND_WASM;
/** A directory to keep each agent's callgrind dump and perf map in, for test/bench/callgrind_functions.ts. */
const KEEP = process.env.SIDECAR_CALLGRIND_KEEP;

interface Counted {
  checkout: string;
  main: number;
  all: number;
  threads: number;
  /** Requests of the counted run not answered 2xx, and the status codes seen. */
  failed: number;
  codes: string;
}

/**
 * The agent of `checkout` under callgrind, in front of the mesh's app and
 * reporting to its hub; `bare` instead: test/bench/bare_proxy.mjs, the
 * sidecar bench's bare Node proxy, in front of the same app.
 */
async function underCallgrind(checkout: string, mesh: LocalMesh, out: string): Promise<Daemon<{ port: number }>> {
  // With KEEP: V8 writes /tmp/perf-<pid>.map, which names the JIT code callgrind sees only as addresses.
  const nodeFlags = KEEP ? ["--perf-basic-prof-only-functions"] : [];
  if (checkout === "bare")
    return startUnderCallgrind(join(import.meta.dirname, "bare_proxy.mjs"), [String(mesh.app.port)], out, "bare-proxy listening ", { nodeFlags });
  const agent = await startUnderCallgrind<{ inbound: number }>(
    join(checkout, "build", "out", "disco-agent.mjs"),
    [...demoSidecarArgs(mesh.app.port, mesh.sidecarConfigDir, mesh.hub.listening.grpcPort), ...(WASM ? ["--wasm", WASM] : [])],
    out,
    "disco-agent listening ",
    {
      nodeFlags,
      env: { ...process.env, POD_NAME: "petstore-v1", POD_NAMESPACE: "demo" },
    },
  );
  return { ...agent, listening: { port: agent.listening.inbound } };
}

/** Instructions of each thread's dump (callgrind's `totals:` line), main thread first (the largest). */
function dumpedTotals(out: string, pid: number): number[] {
  return readdirSync(out)
    .filter((f) => f.startsWith(`callgrind.out.${pid}.`))
    .map((f) => dumpFileTotal(join(out, f)))
    .sort((a, b) => b - a);
}

/** Copies the agent's dumps and perf map into KEEP/<name>/, with the counted requests. */
function keep(out: string, pid: number, name: string, requests: number): void {
  const dir = join(KEEP!, name);
  mkdirSync(dir, { recursive: true });
  for (const f of readdirSync(out)) if (f.startsWith(`callgrind.out.${pid}.`)) copyFileSync(join(out, f), join(dir, f));
  copyFileSync(`/tmp/perf-${pid}.map`, join(dir, "perf.map"));
  writeFileSync(join(dir, "requests.json"), JSON.stringify({ requests, pid }));
}

async function count(checkout: string, mesh: LocalMesh, scratch: string): Promise<Counted> {
  const out = mkdtempSync(join(scratch, "cg-"));
  const agent = await underCallgrind(checkout, mesh, out);
  try {
    const url = `http://127.0.0.1:${agent.listening.port}/pets/42?key=bench`;
    // The first requests may meet a filter still starting under valgrind's slowness: only the counted ones must all pass.
    await autocannon({ url, connections: 16, amount: WARM_UP, timeout: 60 });
    mesh.app.seen.length = 0;
    execFileSync("callgrind_control", ["--instr=on", String(agent.proc.pid)], { stdio: "ignore" });
    execFileSync("callgrind_control", ["--zero", String(agent.proc.pid)], { stdio: "ignore" });
    const r = await autocannon({ url, connections: 16, amount: REQUESTS, timeout: 60 });
    // A few hub calls may outrun their deadline under valgrind: said, not hidden (a handful in thousands moves the count little).
    const failed = r.non2xx + r.errors;
    mesh.app.seen.length = 0;
    for (const f of readdirSync(out)) rmSync(join(out, f));
    execFileSync("callgrind_control", ["--dump", String(agent.proc.pid)], { stdio: "ignore" });
    const totals = dumpedTotals(out, agent.proc.pid!);
    const n = r.requests.total;
    if (KEEP) keep(out, agent.proc.pid!, `${basename(checkout)}${WASM ? `-${basename(WASM, ".wasm")}` : ""}`, n);
    return {
      checkout,
      main: totals[0] / n,
      all: totals.reduce((a, b) => a + b, 0) / n,
      threads: totals.length,
      failed,
      codes: JSON.stringify(r.statusCodeStats),
    };
  } finally {
    await agent.stop("SIGKILL");
  }
}

export async function runSidecarCallgrind(checkouts: string[]): Promise<string[]> {
  const scratch = mkdtempSync(join(tmpdir(), "sidecar-callgrind-"));
  let mesh: LocalMesh | undefined;
  try {
    mesh = await startLocalMesh({ hubConfig: "" });
    await withoutHubHandlers(mesh);
    const rows: Counted[] = [];
    for (const c of checkouts) rows.push(await count(c, mesh, scratch));
    return [
      `sidecar instructions per request (callgrind; ${WARM_UP} requests of warm-up, ${REQUESTS} counted, 16 connections${WASM ? `; module ${WASM}` : ""}; load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(" ")})`,
      ...rows.map(
        (r) =>
          `${r.checkout}: main thread ${Math.round(r.main)}, all threads ${Math.round(r.all)} (${r.threads} threads)${r.failed ? `; ${r.failed} not 2xx: ${r.codes}` : ""}`,
      ),
      ...(rows.length > 1
        ? rows.slice(1).map((r) => `${r.checkout} / ${rows[0].checkout}: main ${(r.main / rows[0].main).toFixed(3)}, all ${(r.all / rows[0].all).toFixed(3)}`)
        : []),
    ];
  } finally {
    await mesh?.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const here = join(import.meta.dirname, "..", "..");
  const named = process.argv.slice(2).map((c) => (c === "." ? here : c));
  for (const line of await runSidecarCallgrind(named.length > 0 ? named : [here])) console.log(line);
  process.exit(0);
}
