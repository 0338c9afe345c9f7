// Whether the agent keeps compiling, deoptimizing and collecting under steady
// load, natively (issue 30): a local mesh (hub without handlers, echo app),
// then the agent of each checkout in turn, started as the mesh starts it but
// under V8's --trace-opt --trace-deopt --trace-gc-nvp, and one continuous
// 16-connection autocannon run (no reconnection in between, which would
// deoptimize Node's stream functions by itself). Each line of the trace is
// timed as it arrives; per 10 s phase: requests, optimized compiles
// finished, deopts, scavenges and mark-compacts, bytes allocated and
// promoted per request (V8's own counts), the CPU of the agent's main thread
// and of its other threads (V8's compiler and GC helpers, libuv's pool), and
// the optimizing jobs' time on the helper threads (wall: a preempted job's
// wait counts); then every deopt after the first phase,
// with its reason.
//   node --import tsx test/bench/sidecar_jit_trace.ts [checkout ...]   (after npm run build)
// A checkout is `.` (default) or another built checkout's directory, for a
// before and after. SIDECAR_TRACE_SECONDS (90) sets the run's length,
// SIDECAR_TRACE_WASM runs another module (e.g. the no-op one),
// SIDECAR_TRACE_KEEP=<dir> keeps each agent's timed trace there. Not part of
// `npm run bench`: its figures are counts, and the run takes minutes.
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { type LocalMesh, demoSidecarArgs, startLocalMesh } from "../../host/demo/local_mesh.ts";
import { spawnOwned, stopOwned } from "../../host/demo/processes.ts";
import { withoutHubHandlers } from "./sidecar.ts";

const SECONDS = Number(process.env.SIDECAR_TRACE_SECONDS ?? 90);
const WASM = process.env.SIDECAR_TRACE_WASM;
const KEEP = process.env.SIDECAR_TRACE_KEEP;
const PHASE_S = 10;
const TRACE_FLAGS = ["--trace-opt", "--trace-deopt", "--trace-gc-nvp"];
/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
const TICKS_PER_S = 100;

interface Line {
  /** Seconds since the load started (-1: before). */
  t: number;
  text: string;
}

/** CPU ticks of each thread of `pid` so far: the main thread's, and the others' together. */
function threadTicks(pid: number): { main: number; others: number } {
  let main = 0;
  let others = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    } catch {
      continue; // The thread ended meanwhile.
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    if (tid === String(pid)) main += ticks;
    else others += ticks;
  }
  return { main, others };
}

/** The `name=value` fields of a --trace-gc-nvp line. */
function gcFields(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split(/\s+/)
      .filter((x) => x.includes("="))
      .map((x) => x.split("=") as [string, string]),
  );
}

async function trace(checkout: string, mesh: LocalMesh): Promise<string[]> {
  const args = [...demoSidecarArgs(mesh.app.port, mesh.sidecarConfigDir, mesh.hub.listening.grpcPort), ...(WASM ? ["--wasm", WASM] : [])];
  const proc = spawnOwned(process.execPath, [...TRACE_FLAGS, join(checkout, "build", "out", "disco-agent.mjs"), ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, POD_NAME: "petstore-v1", POD_NAMESPACE: "demo" },
  });
  const lines: Line[] = [];
  let started = 0;
  let partial = "";
  let port = 0;
  const listening = new Promise<void>((resolve, reject) => {
    proc.once("exit", (code) => reject(new Error(`the agent of ${checkout} exited (${code}) before listening`)));
    const onData = (chunk: Buffer) => {
      const parts = (partial + chunk.toString()).split("\n");
      partial = parts.pop() ?? "";
      const t = started ? (performance.now() - started) / 1000 : -1;
      for (const text of parts) {
        if (text.startsWith("disco-agent listening ")) {
          port = (JSON.parse(text.slice("disco-agent listening ".length)) as { inbound: number }).inbound;
          resolve();
        }
        lines.push({ t, text });
      }
    };
    proc.stdout?.on("data", onData);
    proc.stderr?.on("data", onData);
  });
  try {
    await listening;
    const perSecond: number[] = [];
    const ticks = [threadTicks(proc.pid as number)];
    started = performance.now();
    const run = autocannon({ url: `http://127.0.0.1:${port}/pets/42?key=bench`, connections: 16, duration: SECONDS });
    (run as unknown as { on(event: "tick", f: (c: { counter: number }) => void): void }).on("tick", (c) => {
      perSecond.push(c.counter);
      if (perSecond.length % PHASE_S === 0) ticks.push(threadTicks(proc.pid as number));
    });
    const result = await run;
    if (KEEP) {
      mkdirSync(KEEP, { recursive: true });
      writeFileSync(
        join(KEEP, `${basename(checkout)}${WASM ? `-${basename(WASM, ".wasm")}` : ""}.trace`),
        lines.map((l) => `${l.t.toFixed(2)} ${l.text}`).join("\n"),
      );
    }
    const out = [
      `${checkout}: ${result.requests.total} requests, ${result.non2xx + result.errors} not 2xx`,
      "phase s   requests  compiles  deopts  scavenges  mark-compacts  scavenges/10k req  allocated B/req  promoted B/req  CPU ms main / other threads  compile jobs ms (helper threads, wall)",
    ];
    for (let p = 0; p + 1 < ticks.length; p++) {
      const [from, to] = [p * PHASE_S, (p + 1) * PHASE_S];
      const requests = perSecond.slice(from, to).reduce((a, b) => a + b, 0);
      const texts = lines.filter((l) => l.t >= from && l.t < to).map((l) => l.text);
      const compiled = texts.filter((t) => t.includes("[completed compiling"));
      // "took a, b, c ms": b is the job's concurrent part, on a helper thread.
      const concurrentMs = compiled.reduce((a, t) => a + Number(/took [\d.]+, ([\d.]+), [\d.]+ ms/.exec(t)?.[1] ?? 0), 0);
      const gcs = texts.filter((t) => / gc=/.test(t)).map(gcFields);
      const scavenges = gcs.filter((g) => g.gc === "s").length;
      const sum = (k: string) => gcs.reduce((a, g) => a + Number(g[k] ?? 0), 0);
      const cpu = (k: "main" | "others") => (((ticks[p + 1][k] - ticks[p][k]) / TICKS_PER_S) * 1000).toFixed(0);
      out.push(
        [
          `${from}-${to}`.padEnd(8),
          String(requests).padStart(9),
          String(compiled.length).padStart(9),
          String(texts.filter((t) => t.includes("[bailout (kind:")).length).padStart(7),
          String(scavenges).padStart(10),
          String(gcs.filter((g) => g.gc === "mc").length).padStart(14),
          ((scavenges / requests) * 1e4).toFixed(1).padStart(18),
          (sum("allocated") / requests).toFixed(0).padStart(16),
          (sum("promoted") / requests).toFixed(0).padStart(15),
          `${cpu("main")} / ${cpu("others")}`.padStart(28),
          concurrentMs.toFixed(0).padStart(38),
        ].join(" "),
      );
    }
    // After the first phase (start-up), before the end (the connections' close deoptimizes Node's stream functions).
    const late = lines.filter((l) => l.t >= PHASE_S && l.t < SECONDS && l.text.includes("[bailout (kind:"));
    out.push(`deopts at ${PHASE_S}-${SECONDS} s: ${late.length}`);
    for (const l of late) {
      const m = /reason: (.*?)\): begin\. deoptimizing \S+ <JSFunction (\S*)/.exec(l.text);
      out.push(`  ${l.t.toFixed(1)} s  ${m ? `${m[2] || "(anonymous)"}: ${m[1]}` : l.text.slice(0, 160)}`);
    }
    return out;
  } finally {
    await stopOwned(proc, "SIGKILL").catch(() => undefined);
  }
}

export async function runSidecarJitTrace(checkouts: string[]): Promise<string[]> {
  const mesh = await startLocalMesh({ hubConfig: "" });
  try {
    await withoutHubHandlers(mesh);
    // The mesh's own agent is not measured: each checkout's is started under the trace flags instead.
    await mesh.sidecar.stop();
    const out: string[] = [];
    for (const c of checkouts) out.push(...(await trace(c, mesh)));
    out.push(
      `load average at the end ${loadavg()
        .map((x) => x.toFixed(2))
        .join(" ")}${WASM ? `; module ${WASM}` : ""}`,
    );
    return out;
  } finally {
    await mesh.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const here = join(import.meta.dirname, "..", "..");
  const named = process.argv.slice(2).map((c) => (c === "." ? here : c));
  for (const line of await runSidecarJitTrace(named.length > 0 ? named : [here])) console.log(line);
  process.exit(0);
}
