// Instructions per request by function, from the dumps `sidecar_callgrind.ts`
// keeps (SIDECAR_CALLGRIND_KEEP), two of them side by side (issue 30: the
// filter row's Node HTTP path against the no-op row's). Callgrind sees V8's
// JIT code only as addresses; the perf map V8 wrote beside the dump names
// them (`JS:*name file:line`, tier marks dropped so a function's tiers add
// up). Self instructions (the function's own), and inclusive ones (with
// what it called) of the main thread, per counted request:
//   node --import tsx test/bench/callgrind_functions.ts <kept dir A> <kept dir B> [min difference] [regexp]
// With a regexp: the call edges into and out of the functions it names instead.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { dumpTotal } from "./callgrind_node.ts";

export interface JitName {
  start: bigint;
  end: bigint;
  name: string;
}

/** The perf map's entries, sorted by start; a later entry for the same range (code space reused) wins. */
export function perfMap(text: string): JitName[] {
  const byStart = new Map<bigint, JitName>();
  for (const line of text.split("\n")) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
    if (!m) continue;
    const start = BigInt(`0x${m[1]}`);
    byStart.set(start, { start, end: start + BigInt(`0x${m[2]}`), name: m[3] });
  }
  return [...byStart.values()].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
}

export function jitName(map: JitName[], address: bigint): string | undefined {
  let lo = 0;
  let hi = map.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (map[mid].start <= address) lo = mid + 1;
    else hi = mid - 1;
  }
  const e = map[hi];
  return e && address < e.end ? e.name : undefined;
}

/** `JS:*foo node:x:1:2` and `JS:^foo …` are one function; file URLs of the build lose their directory. */
function functionName(raw: string, map: JitName[]): string {
  const address = /^0x([0-9a-f]+)$/.exec(raw);
  const named = address ? (jitName(map, BigInt(`0x${address[1]}`)) ?? "(JIT code not in the perf map)") : raw;
  return named
    .replace(/^JS:[*^~+]?/, "JS:")
    .replace(/^(LazyCompile|Function):[*^~+]?/, "JS:")
    .replace(/file:\/\/\S*\/build\/out\//, "")
    .replace(/'(\d+)'$/, "");
}

export interface FunctionCosts {
  self: Map<string, number>;
  inclusive: Map<string, number>;
  /** Inclusive instructions of each call edge, `caller → callee`. */
  edges: Map<string, number>;
  total: number;
}

/**
 * Self and inclusive instructions by function of one callgrind dump
 * (positions and names compressed as callgrind writes them), JIT addresses
 * named by `map`, divided by `requests`.
 */
export function functionCosts(dump: string, map: JitName[], requests: number): FunctionCosts {
  const names = new Map<string, string>();
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const edges = new Map<string, number>();
  let total = 0;
  let fn = "";
  let afterCalls = false;
  let callee = "";
  const nameOf = (spec: string) => {
    const m = /^\((\d+)\)(?: (.*))?$/.exec(spec.trim());
    if (!m) return functionName(spec.trim(), map);
    if (m[2] !== undefined) names.set(m[1], functionName(m[2], map));
    return names.get(m[1]) ?? `(fn ${m[1]})`;
  };
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  for (const line of dump.split("\n")) {
    if (line.startsWith("fn=")) {
      fn = nameOf(line.slice(3));
      continue;
    }
    if (line.startsWith("cfn=")) {
      callee = nameOf(line.slice(4));
      continue;
    }
    if (line.startsWith("calls=")) {
      afterCalls = true;
      continue;
    }
    const c = /^[+\-*]?\d*\s+(\d+)/.exec(line);
    if (!c || !/^[+\-*0-9]/.test(line)) continue;
    const cost = Number(c[1]);
    if (afterCalls) {
      afterCalls = false;
      // A call's inclusive cost counts toward the caller's inclusive total (a recursive call is counted once).
      if (callee !== fn) add(inclusive, fn, cost);
      add(edges, `${fn} → ${callee}`, cost);
      continue;
    }
    add(self, fn, cost);
    add(inclusive, fn, cost);
    total += cost;
  }
  for (const m of [self, inclusive, edges]) for (const [k, v] of m) m.set(k, v / requests);
  return { self, inclusive, edges, total: total / requests };
}

/** The main thread's dump of a kept directory (the one with the most instructions), by function. */
export function keptCosts(dir: string): FunctionCosts {
  const { requests } = JSON.parse(readFileSync(join(dir, "requests.json"), "utf8")) as { requests: number };
  const map = perfMap(readFileSync(join(dir, "perf.map"), "utf8"));
  const dumps = readdirSync(dir)
    .filter((f) => f.startsWith("callgrind.out."))
    .map((f) => readFileSync(join(dir, f), "utf8"));
  const main = dumps.sort((a, b) => dumpTotal(b) - dumpTotal(a))[0];
  return functionCosts(main, map, requests);
}

/** Rows `a  b  b−a  name`, largest difference first, of the names whose difference is at least `min`. */
export function costDiff(a: Map<string, number>, b: Map<string, number>, min: number, limit = 60): string[] {
  return [...new Set([...a.keys(), ...b.keys()])]
    .map((k) => ({ k, a: a.get(k) ?? 0, b: b.get(k) ?? 0 }))
    .filter((r) => Math.abs(r.b - r.a) >= min)
    .sort((x, y) => Math.abs(y.b - y.a) - Math.abs(x.b - x.a))
    .slice(0, limit)
    .map(
      (r) =>
        `${Math.round(r.a).toString().padStart(9)}${Math.round(r.b).toString().padStart(9)}${Math.round(r.b - r.a)
          .toString()
          .padStart(9)}  ${r.k.slice(0, 180)}`,
    );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [a, b, min, edgesOf] = process.argv.slice(2);
  if (edgesOf) {
    // `… <min> <regexp>`: the call edges into and out of the functions the regexp names.
    const re = new RegExp(edgesOf);
    const [ea, eb] = [keptCosts(a).edges, keptCosts(b).edges];
    const pick = (m: Map<string, number>) => new Map([...m].filter(([k]) => k.split(" → ").some((f) => re.test(f))));
    for (const l of costDiff(pick(ea), pick(eb), Number(min))) console.log(l);
    process.exit(0);
  }
  const ca = keptCosts(a);
  const cb = keptCosts(b);
  const threshold = Number(min ?? 300);
  console.log(`main-thread instructions per request: ${Math.round(ca.total)} (${a}) against ${Math.round(cb.total)} (${b})`);
  console.log(`self, |difference| >= ${threshold}:`);
  for (const l of costDiff(ca.self, cb.self, threshold)) console.log(l);
  console.log(`inclusive, |difference| >= ${threshold}:`);
  for (const l of costDiff(ca.inclusive, cb.inclusive, threshold)) console.log(l);
}
