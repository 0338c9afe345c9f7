import type { PerfSample } from "./perf_samples.ts";

/**
 * What one category of a perf profile is made of, for comparing two rows
 * (issue 30: the filter row's "Node's HTTP path" against the no-op row's):
 * its samples by leaf symbol, by the JS function nearest the leaf, and by
 * the caller chain of JS functions (up to `depth`), each per request.
 */
export interface Breakdown {
  leaf: Map<string, number>;
  js: Map<string, number>;
  chain: Map<string, number>;
}

/** A frame's symbol without the address suffix perf may add, and without the DSO's path noise. */
function symbol(frame: string): string {
  return frame
    .replace(/\+0x[0-9a-f]+/, "")
    .replace(/\((\/[^)]*\/)?([^/)]+)\)$/, "($2)")
    .replace(/\(perf-\d+\.map\)$/, "")
    .replace(/file:\/\/\S*\/build\/out\//, "");
}

/** The samples' breakdown, each count divided by `requests` and scaled to µs at `frequency`. */
export function breakdown(samples: readonly PerfSample[], frequency: number, requests: number, depth = 3): Breakdown {
  const us = 1e6 / frequency / requests;
  const out: Breakdown = { leaf: new Map(), js: new Map(), chain: new Map() };
  const add = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + us);
  for (const s of samples) {
    add(out.leaf, symbol(s.frames[0] ?? "(no frame)"));
    const js = s.frames.filter((f) => f.startsWith("JS:") || f.includes("Builtin:") || f.includes("BytecodeHandler:"));
    const firstJs = s.frames.find((f) => f.startsWith("JS:"));
    add(out.js, firstJs ? symbol(firstJs) : `(no JS frame) ${symbol(s.frames.at(-1) ?? "")}`);
    add(out.chain, js.length ? js.slice(0, depth).map(symbol).join(" < ") : "(no JS frame)");
  }
  return out;
}

/** Rows `name  a  b  b−a`, largest difference first, of the keys whose difference is at least `min` µs. */
export function diffLines(title: string, a: Map<string, number>, b: Map<string, number>, min = 0.3, limit = 40): string[] {
  const keys = [...new Set([...a.keys(), ...b.keys()])];
  const rows = keys
    .map((k) => ({ k, a: a.get(k) ?? 0, b: b.get(k) ?? 0 }))
    .filter((r) => Math.abs(r.b - r.a) >= min)
    .sort((x, y) => y.b - y.a - (x.b - x.a))
    .slice(0, limit);
  const total = (m: Map<string, number>) => [...m.values()].reduce((s, v) => s + v, 0);
  return [
    `${title} (µs per request: first row, second row, difference; |difference| >= ${min})`,
    ...rows.map((r) => `${r.a.toFixed(2).padStart(8)}${r.b.toFixed(2).padStart(8)}${(r.b - r.a).toFixed(2).padStart(8)}  ${r.k.slice(0, 200)}`),
    `${total(a).toFixed(2).padStart(8)}${total(b).toFixed(2).padStart(8)}${(total(b) - total(a)).toFixed(2).padStart(8)}  (all of the category)`,
  ];
}
