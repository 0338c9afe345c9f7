// Instructions per hub call of the hub transport (the client side, as the
// agent runs it), counted by callgrind: repeatable on a loaded machine. For
// each checkout named, a Node process running that checkout's HubTransport
// calls one real `hubs server` (not instrumented), after an uninstrumented
// warm-up: Checks and Reports of the sidecar's size (a Report of 100
// entries encoded by the filter module), one at a time as the sidecar makes
// them, then in bursts of 16. Node runs with V8's --single-threaded
// (callgrind_node.ts): JIT and GC counted on the main thread where they
// happen. Every thread's instructions count (libuv's, the TLS-free socket
// I/O's).
//   node --import tsx test/bench/hub_client_callgrind.ts [checkout ...]   (after npm run build)
// `.` or none: this checkout. HUB_CLIENT_CALLGRIND_CALLS (160) counted calls
// per phase, HUB_CLIENT_CALLGRIND_WARM_UP (400) before. Not part of
// `npm run bench`: slow (valgrind); its figures are instruction counts.
import { execFileSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
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

/** Instructions of all threads' dumps since the last zeroing; the dumps are then removed. */
function dumped(out: string, pid: number): number {
  execFileSync("callgrind_control", ["--dump", String(pid)], { stdio: "ignore" });
  let total = 0;
  for (const f of readdirSync(out)) {
    total += dumpFileTotal(join(out, f));
    rmSync(join(out, f));
  }
  return total;
}

async function count(checkout: string, target: string, messagesFile: string, scratch: string): Promise<number[]> {
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
    const perCall: number[] = [];
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
      perCall.push(dumped(out, pid) / CALLS);
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
    const rows: Array<{ checkout: string; perCall: number[] }> = [];
    for (const c of checkouts) rows.push({ checkout: c, perCall: await count(c, hub.listeners.grpc, messagesFile, scratch) });
    const phase = (i: number) => `${PHASES[i][0]}${PHASES[i][1] > 1 ? `×${PHASES[i][1]}` : ""}`;
    return [
      `hub transport instructions per call (callgrind, client process; ${WARM_UP} calls of warm-up and ${CALLS} counted per phase; Check ${check.length} B, Report of 100 entries ${report.length} B; load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(" ")})`,
      ...rows.map((r) => `${r.checkout}: ${r.perCall.map((n, i) => `${phase(i)} ${Math.round(n)}`).join(", ")}`),
      ...rows
        .slice(1)
        .map((r) => `${r.checkout} / ${rows[0].checkout}: ${r.perCall.map((n, i) => `${phase(i)} ${(n / rows[0].perCall[i]).toFixed(3)}`).join(", ")}`),
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
