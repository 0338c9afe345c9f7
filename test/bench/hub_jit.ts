// What V8 compiles and deoptimizes in the hub while it serves the filter
// sidecar's calls (issue 30): the calls `hub_callgrind.ts` recorded and saved
// (HUB_CALLGRIND_RECORDED=<dir>) go to a `hubs server` run with V8's
// --trace-opt --trace-deopt --trace-gc, one at a time (a Check after every
// fourth Report), in phases of HUB_JIT_REPORTS Reports (150) with
// HUB_JIT_IDLE_MS (0) of idleness after each, HUB_JIT_PHASES (24) of them;
// per phase: the functions TurboFan compiled, those compiled again (their
// earlier code thrown away), the deoptimizations (by reason) and the
// mark-compacts ("reduce": the memory reducer's).
//   node --import tsx test/bench/hub_jit.ts <recorded dir> [node flag ...]   (after npm run build)
// Not part of `npm run bench`: its figures are counts of V8's events.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loopbackHubArgs } from "../../host/demo/local_mesh.ts";
import { startProgram } from "../../host/demo/processes.ts";
import { parseClusters } from "../../host/hub/clusters.ts";
import { HubTransport } from "../../host/hub/transport.ts";

const REPORTS = Number(process.env.HUB_JIT_REPORTS ?? 150);
const PHASES = Number(process.env.HUB_JIT_PHASES ?? 24);
const IDLE_MS = Number(process.env.HUB_JIT_IDLE_MS ?? 0);

function saved(dir: string, prefix: string): Buffer[] {
  const n = readdirSync(dir).filter((f) => f.startsWith(prefix)).length;
  return Array.from({ length: n }, (_, i) => readFileSync(join(dir, `${prefix}${i}.bin`)));
}

/** One phase's V8 trace lines, counted; `seen` holds the functions (by SharedFunctionInfo) compiled in earlier phases. */
export function phaseEvents(trace: string, seen: Set<string>): string {
  let compiled = 0;
  let again = 0;
  const deopts = new Map<string, number>();
  const gcs: string[] = [];
  for (const line of trace.split("\n")) {
    const c = /completed compiling .*?\(sfi = (0x[0-9a-f]+)\)/.exec(line);
    if (c) {
      compiled++;
      if (seen.has(c[1])) again++;
      seen.add(c[1]);
      continue;
    }
    const d = /bailout \(kind: [^,]*, reason: ([^)]*)\)|for deoptimization, reason: (.*)\]/.exec(line);
    if (d) deopts.set(d[1] ?? d[2], (deopts.get(d[1] ?? d[2]) ?? 0) + 1);
    if (/Mark-Compact/.test(line)) gcs.push(/Mark-Compact \(reduce\)/.test(line) ? "reduce" : "full");
  }
  const d = [...deopts].map(([why, n]) => `${n} ${why}`).join(", ");
  return `${compiled} compiled (${again} again), deoptimized: ${d || "none"}${gcs.length ? `; mark-compacts: ${gcs.join(" ")}` : ""}`;
}

export async function runHubJit(dir: string, nodeFlags: string[], hubsScript: string): Promise<string[]> {
  const reports = saved(dir, "report-");
  const checks = saved(dir, "check-");
  const hub = await startProgram<{ grpcPort: number }>({
    name: "hubs server",
    command: process.execPath,
    args: ["--trace-opt", "--trace-deopt", "--trace-gc", ...nodeFlags, hubsScript, ...loopbackHubArgs(), "--log_output_level", "default:warn"],
    prefix: "hubs listening ",
  });
  const transport = new HubTransport({ clusters: parseClusters([`hub_server=127.0.0.1:${hub.listening.grpcPort}`]) });
  let n = 0;
  const send = async (method: "Check" | "Report") => {
    const m = method === "Report" ? reports : checks;
    const message = m[n++ % m.length];
    const r = await transport.call({
      token: 1,
      rootId: 1,
      cluster: "hub_server",
      service: "mesh.hub.v1.Hub",
      method,
      metadata: [],
      message,
      timeoutMs: 60_000,
    });
    if (!r.ok) throw new Error(`${method}: ${r.code} ${r.message}`);
  };
  const seen = new Set<string>();
  const rows = [
    `hub's V8 events per phase of ${REPORTS} Reports (and a Check after every fourth), ${IDLE_MS} ms idle after each; node flags: ${nodeFlags.join(" ") || "none"}`,
  ];
  try {
    let mark = hub.output().length;
    rows.push(`start: ${phaseEvents(hub.output(), seen)}`);
    for (let p = 0; p < PHASES; p++) {
      for (let i = 0; i < REPORTS; i++) {
        await send("Report");
        if (i % 4 === 0) await send("Check");
      }
      await new Promise((r) => setTimeout(r, Math.max(IDLE_MS, 50)));
      const out = hub.output();
      rows.push(`phase ${p}: ${phaseEvents(out.slice(mark), seen)}`);
      mark = out.length;
    }
  } finally {
    transport.close();
    await hub.stop("SIGKILL");
  }
  return rows;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [dir, ...flags] = process.argv.slice(2);
  if (!dir) throw new Error("usage: hub_jit.ts <recorded dir (HUB_CALLGRIND_RECORDED)> [node flag ...]");
  for (const line of await runHubJit(dir, flags, join(import.meta.dirname, "..", "..", "build", "out", "hubs.mjs"))) console.log(line);
  process.exit(0);
}
