// What the module touches per request (issue 30): the cache lines of code and
// data, counted, not timed, so a loaded machine does not move the figures.
// FilterHost is driven in process as filter_host_callgrind.ts drives it (the
// sidecar's requests, the hub answered at once) under valgrind's callgrind
// with its cache simulation (I1 32 KiB 8-way, D1 48 KiB 12-way, LL 2 MiB
// 16-way, this VM's L1 and L2 per core), and between the request side and
// the log side, and after the log side, the driver writes FOOTPRINT_POLLUTE_KIB
// (2304) of memory, more than LL holds: each half of each request then
// starts with the module's code and data out of the simulated caches, as in
// the agent, where the core runs Node's HTTP path, the kernel, the app and
// others between the halves. The module's code is V8's machine code of the
// wasm functions (named by the perf map V8 writes); misses are charged to
// the instruction that made them, so the module's row counts its own code
// fetches and its own loads and stores (not the host's reads of its memory).
// Per measured request:
//   Ir              instructions executed
//   code lines      distinct 64-byte lines of code executed (a line counts
//                   1 when an instruction in it ran on every request, less
//                   when it ran on some): the code bytes a cold request
//                   fetches, / 64
//   I1 miss, D1 miss (reads and writes), LL miss (code and data): with the
//                   caches emptied by the writes between halves, the LL
//                   misses are the lines the request brings from memory
//   node --import tsx test/bench/module_footprint.ts [checkout ...]   (after npm run build)
// A checkout is `.` (default) or another checkout's directory, built, for a
// before and after; FOOTPRINT_TOP=N lists the N wasm functions with the most
// code lines; FOOTPRINT_HOST_TOP=N lists the code outside the module (the
// host's JS, Node's JS, V8's builtins, native code) by kind, then its N
// functions with the most code lines (the compilers' and GC's left out); FOOTPRINT_KEEP=<dir> keeps each checkout's dump and perf map
// there (read again with `--read <dump> <perf map>`). FOOTPRINT_WARM_UP
// (2000) and FOOTPRINT_REQUESTS (500) set the request counts; FOOTPRINT_NODE_FLAGS
// adds flags to the measured node (e.g. `--interrupt-budget=4096`: V8 then
// optimizes the host's small per-request functions within the warm-up, as
// the agent's tens of thousands of requests do; with the default budget some
// are still in Sparkplug, or being compiled, after 6 000 requests). Not part of `npm run bench`: valgrind is slow.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type JitName, jitName, perfMap } from "./callgrind_functions.ts";
import { checkoutRequests } from "./sidecar_like_requests.ts";

const WARM_UP = Number(process.env.FOOTPRINT_WARM_UP ?? 2000);
const REQUESTS = Number(process.env.FOOTPRINT_REQUESTS ?? 500);
const POLLUTE_KIB = Number(process.env.FOOTPRINT_POLLUTE_KIB ?? 2304);
const TOP = Number(process.env.FOOTPRINT_TOP ?? 0);
const HOST_TOP = Number(process.env.FOOTPRINT_HOST_TOP ?? 0);
const NODE_FLAGS = (process.env.FOOTPRINT_NODE_FLAGS ?? "").split(/\s+/).filter((f) => f.length > 0);
const KEEP = process.env.FOOTPRINT_KEEP;
const HERE = resolve(join(import.meta.dirname, "..", ".."));
const LINE = 64n;

/** Runs the requests through `checkout`'s FilterHost (inside valgrind: this file with --drive). */
async function drive(checkout: string): Promise<void> {
  const memory = new Float64Array((POLLUTE_KIB * 1024) / 8);
  let measuring = false;
  const pollute = () => {
    if (!measuring) return;
    for (let j = 0; j < memory.length; j += 8) memory[j]++;
  };
  const { request, close } = await checkoutRequests(checkout, pollute);
  const control = (flag: string) => execFileSync("callgrind_control", [flag, String(process.pid)], { stdio: "ignore" });
  for (let i = 0; i < WARM_UP; i++) await request(i);
  measuring = true;
  for (let i = 0; i < 8; i++) await request(WARM_UP + i); // the pollution loop compiled before counting
  control("--instr=on");
  for (let i = 0; i < REQUESTS; i++) await request(WARM_UP + 8 + i);
  control("-d");
  await close();
}

interface Footprint {
  ir: number;
  codeLines: number;
  i1: number;
  d1: number;
  ll: number;
}

type Area = "module" | "all but the driver";

/** Per-request costs by area (and by wasm function) of one dump made with --dump-instr=yes. */
function footprint(dump: string, map: JitName[]): { areas: Map<Area, Footprint>; functions: Map<string, Footprint>; hostFunctions: Map<string, Footprint> } {
  let events: string[] = [];
  let positions = 1;
  let address = 0n;
  let afterCalls = false;
  // Per instruction: its events summed (a JIT address may appear under several fn= blocks).
  const byInstr = new Map<bigint, number[]>();
  // The native function (callgrind's fn=) each address was counted under: V8's builtins, C++, libc.
  const nativeNames = new Map<string, string>();
  const nativeOf = new Map<bigint, string>();
  let fn = "";
  for (const line of dump.split("\n")) {
    if (line.startsWith("fn=") || line.startsWith("cfn=")) {
      // A compressed name is spelled once, at its first fn= or cfn=, then used as (id).
      const spec = line.slice(line.indexOf("=") + 1).trim();
      const m = /^\((\d+)\)(?: (.*))?$/.exec(spec);
      if (m?.[2] !== undefined) nativeNames.set(m[1], m[2]);
      if (line.startsWith("fn=")) fn = m ? (nativeNames.get(m[1]) ?? "") : spec;
      continue;
    }
    if (line.startsWith("positions:")) {
      positions = line.slice(10).trim().split(/\s+/).length;
      continue;
    }
    if (line.startsWith("events:")) {
      events = line.slice(7).trim().split(/\s+/);
      continue;
    }
    if (line.startsWith("calls=")) {
      afterCalls = true;
      continue;
    }
    // A cost line: the instruction's address (absolute, relative or the same), then the other positions, then costs.
    if (!/^(0x[0-9a-f]+|[+-]\d+|\*)(\s|$)/.test(line)) continue;
    const fields = line.trim().split(/\s+/);
    const position = fields[0];
    if (position.startsWith("0x")) address = BigInt(position);
    else if (position !== "*") address += BigInt(position);
    if (afterCalls) {
      afterCalls = false;
      continue;
    }
    const costs = fields.slice(positions).map(Number);
    const sum = byInstr.get(address) ?? new Array(events.length).fill(0);
    for (let k = 0; k < costs.length; k++) sum[k] += costs[k];
    byInstr.set(address, sum);
    if (!nativeOf.has(address)) nativeOf.set(address, fn);
  }
  const at = (e: string) => events.indexOf(e);
  const [ir, i1, d1r, d1w, ilr, dlr, dlw] = ["Ir", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw"].map(at);
  const get = (c: number[], k: number) => (k < 0 ? 0 : c[k]);
  const empty = (): Footprint => ({ ir: 0, codeLines: 0, i1: 0, d1: 0, ll: 0 });
  const areas = new Map<Area, Footprint>([
    ["module", empty()],
    ["all but the driver", empty()],
  ]);
  const functions = new Map<string, Footprint>();
  const hostFunctions = new Map<string, Footprint>();
  // The most any instruction of a line ran: the line's executions.
  const lineRuns = new Map<bigint, { runs: number; name: string; host: string }>();
  for (const [addr, c] of byInstr) {
    const name = jitName(map, addr) ?? "";
    if (name.includes("module_footprint.ts")) continue;
    const isModule = /^JS:wasm-function/.test(name);
    const targets = [areas.get("all but the driver") as Footprint];
    const hostName = isModule ? "" : hostFunctionName(name, nativeOf.get(addr) ?? "");
    if (hostName) {
      if (!hostFunctions.has(hostName)) hostFunctions.set(hostName, empty());
      targets.push(hostFunctions.get(hostName) as Footprint);
    }
    if (isModule) {
      targets.push(areas.get("module") as Footprint);
      const fn = name.replace(/^JS:/, "").replace(/-(turbofan|liftoff)$/, "");
      if (!functions.has(fn)) functions.set(fn, empty());
      targets.push(functions.get(fn) as Footprint);
    }
    for (const t of targets) {
      t.ir += get(c, ir);
      t.i1 += get(c, i1);
      t.d1 += get(c, d1r) + get(c, d1w);
      t.ll += get(c, ilr) + get(c, dlr) + get(c, dlw);
    }
    const line = addr / LINE;
    const seen = lineRuns.get(line);
    if (!seen || seen.runs < get(c, ir))
      lineRuns.set(line, {
        runs: get(c, ir),
        name: isModule ? name.replace(/^JS:/, "").replace(/-(turbofan|liftoff)$/, "") : "",
        host: hostName,
      });
  }
  for (const { runs, name, host } of lineRuns.values()) {
    const share = Math.min(1, runs / REQUESTS);
    (areas.get("all but the driver") as Footprint).codeLines += share;
    if (host) (hostFunctions.get(host) as Footprint).codeLines += share;
    if (name) {
      (areas.get("module") as Footprint).codeLines += share;
      (functions.get(name) as Footprint).codeLines += share;
    }
  }
  for (const f of [...areas.values(), ...functions.values(), ...hostFunctions.values()]) {
    f.ir /= REQUESTS;
    f.i1 /= REQUESTS;
    f.d1 /= REQUESTS;
    f.ll /= REQUESTS;
  }
  return { areas, functions, hostFunctions };
}

/**
 * A name for code outside the module: a JS function of V8's perf map (tier
 * marks and the checkout's directory dropped, so tiers and checkouts add up)
 * or the native symbol callgrind counted it under (V8's embedded builtins are
 * `Builtins_*` in node's symbol table).
 */
function hostFunctionName(jit: string, native: string): string {
  if (jit) return jit.replace(/^JS:[*^~+]?/, "JS:").replace(/file:\/\/\S*?\/(host|test|node_modules)\//, "$1/");
  if (/^0x[0-9a-f]+$/.test(native) || !native) return "(JIT code not in the perf map)";
  return native;
}

/** The host's code by kind: its JS files, Node's JS, V8's builtins, the rest native. */
function hostKind(name: string): string {
  if (/^JS:.* host\//.test(name)) return "the host's JS (host/)";
  if (/^JS:.* node:/.test(name)) return "Node's JS (node:)";
  if (name.startsWith("JS:")) return "other JS";
  if (name.startsWith("Builtins_")) return "V8 builtins";
  if (name.startsWith("(JIT")) return "unnamed JIT code (ICs, stubs)";
  // Not per request: what the JIT compilers and the GC did in the window (V8 runs both on the main thread here).
  if (/^v8::internal::(compiler|maglev|baseline|interpreter|wasm)::|^v8::internal::(Compiler|Parser|Scanner|AstValueFactory|Zone)\b/.test(name))
    return "V8's compilers";
  if (
    /Heap|MarkCompact|Marking|Sweep|Scaveng|Evacuat|Minor|Concurrent|MemoryAllocator|HeapObject::SizeFromMap|BodyDescriptor|LiveObject|Remembered|SlotSet/.test(
      name,
    )
  )
    return "V8's GC";
  return "native (V8 runtime, Node, libc)";
}

/** Runs `checkout` under callgrind's cache simulation and reads what each request touched. */
function measure(checkout: string): ReturnType<typeof footprint> {
  const out = mkdtempSync(join(tmpdir(), "mesh-module-footprint-"));
  try {
    execFileSync(
      "valgrind",
      [
        "--tool=callgrind",
        "--cache-sim=yes",
        "--I1=32768,8,64",
        "--D1=49152,12,64",
        "--LL=2097152,16,64",
        "--dump-instr=yes",
        "--instr-atstart=no",
        `--callgrind-out-file=${join(out, "cg.%p")}`,
        "--smc-check=all-non-file",
        process.execPath,
        "--single-threaded",
        "--perf-basic-prof-only-functions",
        ...NODE_FLAGS,
        "--import",
        "tsx",
        fileURLToPath(import.meta.url),
        "--drive",
        checkout,
      ],
      { cwd: HERE, stdio: ["ignore", "ignore", "pipe"], maxBuffer: 1 << 26 },
    );
    const dump = readdirSync(out).find((f) => /^cg\.\d+\.1$/.test(f));
    if (!dump) throw new Error(`no dump of the measured requests for ${checkout}`);
    const pid = (/^cg\.(\d+)\./.exec(dump) as RegExpExecArray)[1];
    const mapFile = `/tmp/perf-${pid}.map`;
    if (!existsSync(mapFile)) throw new Error(`V8 wrote no perf map (${mapFile})`);
    const map = perfMap(readFileSync(mapFile, "utf8"));
    if (KEEP) {
      // FOOTPRINT_KEEP=<dir>: the dump and the perf map kept for `--read`.
      const kept = join(KEEP, basename(checkout));
      mkdirSync(kept, { recursive: true });
      copyFileSync(join(out, dump), join(kept, "callgrind.out"));
      copyFileSync(mapFile, join(kept, "perf.map"));
    }
    rmSync(mapFile, { force: true });
    return footprint(readFileSync(join(out, dump), "utf8"), map);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

const row = (name: string, f: Footprint) =>
  `${name.padEnd(26)}${[f.ir, f.codeLines, f.codeLines * 64, f.i1, f.d1, f.ll].map((v) => Math.round(v).toString().padStart(10)).join("")}`;

function print(title: string, { areas, functions, hostFunctions }: ReturnType<typeof footprint>): void {
  console.log(`${title}, per request:`);
  console.log(`${"".padEnd(26)}${["Ir", "code lines", "code B", "I1 miss", "D1 miss", "LL miss"].map((h) => h.padStart(10)).join("")}`);
  for (const [name, f] of areas) console.log(row(name, f));
  const top = [...functions].sort((a, b) => b[1].codeLines - a[1].codeLines).slice(0, TOP);
  for (const [name, f] of top) console.log(row(`  ${name}`, f));
  if (!HOST_TOP) return;
  // FOOTPRINT_HOST_TOP=N: the code outside the module by kind, then its N functions with the most code lines.
  const kinds = new Map<string, Footprint>();
  for (const [name, f] of hostFunctions) {
    const k = hostKind(name);
    const sum = kinds.get(k) ?? { ir: 0, codeLines: 0, i1: 0, d1: 0, ll: 0 };
    for (const key of ["ir", "codeLines", "i1", "d1", "ll"] as const) sum[key] += f[key];
    kinds.set(k, sum);
  }
  for (const [k, f] of [...kinds].sort((a, b) => b[1].codeLines - a[1].codeLines)) console.log(row(`  ${k}`, f));
  const hostTop = [...hostFunctions]
    .filter(([n]) => !/compilers|GC/.test(hostKind(n)))
    .sort((a, b) => b[1].codeLines - a[1].codeLines)
    .slice(0, HOST_TOP);
  for (const [name, f] of hostTop) console.log(`${row("", f)}  ${name.slice(0, 110)}`);
}

if (process.argv[2] === "--drive") {
  await drive(resolve(process.argv[3]));
} else if (process.argv[2] === "--read") {
  // --read <dump> <perf map>: a kept dump of FOOTPRINT_REQUESTS requests.
  print(process.argv[3], footprint(readFileSync(process.argv[3], "utf8"), perfMap(readFileSync(process.argv[4], "utf8"))));
} else {
  const checkouts = process.argv.length > 2 ? process.argv.slice(2) : ["."];
  console.log(
    `what a request touches, in process under callgrind's cache simulation: ${REQUESTS} requests after ${WARM_UP}, ${POLLUTE_KIB} KiB written between halves; load average ${loadavg()[0].toFixed(1)}`,
  );
  for (const checkout of checkouts) print(checkout, measure(resolve(checkout)));
}
