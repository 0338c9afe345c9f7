// Instructions per hub call of the hub transport (the client side, as the
// agent runs it), counted by callgrind: repeatable on a loaded machine. For
// each checkout named, a Node process running that checkout's HubTransport
// calls one real `hubs server` (not instrumented), after an uninstrumented
// warm-up: Checks and Reports of the sidecar's size (a Report of 100
// entries encoded by the filter module), one at a time as the sidecar makes
// them, then in bursts of 16. Node runs with V8's --single-threaded
// (callgrind_node.ts): JIT and GC counted on the main thread where they
// happen. Every thread's instructions count (libuv's, the TLS-free socket
// I/O's). Each figure is given without V8's optimizing compilers (still
// compiling after the warm-up, half the count and most of its noise from
// run to run) and, in brackets, with them.
//   node --import tsx test/bench/hub_client_callgrind.ts [checkout ...]   (after npm run build)
// `.` or none: this checkout. HUB_CLIENT_CALLGRIND_CALLS (160) counted calls
// per phase, HUB_CLIENT_CALLGRIND_WARM_UP (400) before;
// HUB_CLIENT_CALLGRIND_KEEP=<dir> keeps each phase's dumps there. Not part of
// `npm run bench`: slow (valgrind); its figures are instruction counts.
import { execFileSync } from "node:child_process";
import { once } from "node:events";
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { messageType } from "../../host/wire/protos.ts";
import { checkRequest, startHub } from "../hubs/support/hub_process.ts";
import { dumpFileTotal, startUnderCallgrind } from "./callgrind_node.ts";
import { loadFilter, sidecarReportRequest } from "./report_decode.ts";

const CALLS = Number(process.env.HUB_CLIENT_CALLGRIND_CALLS ?? 160);
const WARM_UP = Number(process.env.HUB_CLIENT_CALLGRIND_WARM_UP ?? 400);
/** [method, calls at once]: as the sidecar makes them (one at a time), and in bursts of 16. */
const PHASES: ReadonlyArray<readonly ["Check" | "Report", number]> = [
  ["Check", 1],
  ["Report", 1],
  ["Check", 16],
  ["Report", 16],
];
const CHILD = join(import.meta.dirname, "hub_client_callgrind_child.ts");

/** A directory to keep each phase's dumps in (for callgrind_annotate), named by checkout and phase. */
const KEEP = process.env.HUB_CLIENT_CALLGRIND_KEEP;

/** V8's optimizing compilers' own functions: still compiling after the warm-up, they make most of a count's noise. */
const COMPILER = /v8::internal::compiler::|v8::internal::maglev::|v8::internal::compiler::turboshaft::/;

/** Instructions of functions matching COMPILER in a dump (self cost, callgrind_annotate's reading of it). */
function compilerInstructions(file: string): number {
  const listing = execFileSync("callgrind_annotate", ["--inclusive=no", "--threshold=100", file], { encoding: "utf8", maxBuffer: 256 << 20 });
  let sum = 0;
  for (const line of listing.split("\n")) {
    const m = /^\s*([\d,]+)\s.*\?\?\?:(.*)$/.exec(line);
    if (m && COMPILER.test(m[2])) sum += Number(m[1].replaceAll(",", ""));
  }
  return sum;
}

/** Instructions of all threads' dumps since the last zeroing, and those of V8's compilers among them; the dumps are then removed (or kept in KEEP as `<name>.<file>`). */
function dumped(out: string, pid: number, name: string): { total: number; compiler: number } {
  execFileSync("callgrind_control", ["--dump", String(pid)], { stdio: "ignore" });
  let total = 0;
  let compiler = 0;
  for (const f of readdirSync(out)) {
    const n = dumpFileTotal(join(out, f));
    total += n;
    if (n > 0) compiler += compilerInstructions(join(out, f));
    if (KEEP) copyFileSync(join(out, f), join(KEEP, `${name}.${f}`));
    rmSync(join(out, f));
  }
  return { total, compiler };
}

interface PerCall {
  all: number;
  /** Without V8's optimizing compilers. */
  run: number;
}

async function count(checkout: string, target: string, messagesFile: string, scratch: string): Promise<PerCall[]> {
  const out = mkdtempSync(join(scratch, "cg-"));
  const client = await startUnderCallgrind(
    CHILD,
    [checkout, target, messagesFile, String(CALLS), String(WARM_UP), JSON.stringify(PHASES)],
    out,
    "hub client ready ",
    {
      nodeFlags: ["--import", "tsx"],
    },
  );
  const pid = client.proc.pid!;
  try {
    execFileSync("callgrind_control", ["--instr=on", String(pid)], { stdio: "ignore" });
    const perCall: PerCall[] = [];
    for (let phase = 1; phase <= PHASES.length; phase++) {
      for (const f of readdirSync(out)) rmSync(join(out, f));
      execFileSync("callgrind_control", ["--zero", String(pid)], { stdio: "ignore" });
      const done = new Promise<void>((resolve, reject) => {
        const onData = () => {
          if (!client.output().includes(`phase done ${phase}\n`)) return;
          client.proc.stdout!.off("data", onData);
          resolve();
        };
        client.proc.stdout!.on("data", onData);
        void once(client.proc, "exit").then(() => reject(new Error(`the client exited: ${client.output()}`)));
      });
      process.kill(pid, "SIGUSR2");
      await done;
      const { total, compiler } = dumped(out, pid, `${basename(checkout)}-${PHASES[phase - 1].join("x")}`);
      perCall.push({ all: total / CALLS, run: (total - compiler) / CALLS });
    }
    return perCall;
  } finally {
    await client.stop("SIGKILL");
  }
}

export async function runHubClientCallgrind(checkouts: string[]): Promise<string[]> {
  const scratch = mkdtempSync(join(tmpdir(), "hub-client-callgrind-"));
  const hub = await startHub();
  try {
    const Check = messageType("mesh.hub.v1.CheckRequest");
    const check = Check.encode(Check.fromObject(checkRequest({ "request.path": "/home", "source.uid": "kubernetes://petstore-1.demo" }))).finish();
    const report = sidecarReportRequest(loadFilter(), 0);
    const messagesFile = join(scratch, "messages.json");
    writeFileSync(messagesFile, JSON.stringify({ Check: Buffer.from(check).toString("base64"), Report: report.toString("base64") }));
    const rows: Array<{ checkout: string; perCall: PerCall[] }> = [];
    for (const c of checkouts) rows.push({ checkout: c, perCall: await count(c, hub.listeners.grpc, messagesFile, scratch) });
    const phase = (i: number) => `${PHASES[i][0]}${PHASES[i][1] > 1 ? `×${PHASES[i][1]}` : ""}`;
    return [
      `hub transport instructions per call (callgrind, client process; ${WARM_UP} calls of warm-up and ${CALLS} counted per phase; Check ${check.length} B, Report of 100 entries ${report.length} B; load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(" ")})`,
      ...rows.map((r) => `${r.checkout}: ${r.perCall.map((n, i) => `${phase(i)} ${Math.round(n.run)} (${Math.round(n.all)} with V8's compilers)`).join(", ")}`),
      ...rows
        .slice(1)
        .map(
          (r) =>
            `${r.checkout} / ${rows[0].checkout}, without V8's compilers: ${r.perCall.map((n, i) => `${phase(i)} ${(n.run / rows[0].perCall[i].run).toFixed(3)}`).join(", ")}`,
        ),
    ];
  } finally {
    await hub.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const here = join(import.meta.dirname, "..", "..");
  const named = process.argv.slice(2).map((c) => (c === "." ? here : c));
  for (const line of await runHubClientCallgrind(named.length > 0 ? named : [here])) console.log(line);
  process.exit(0);
}
