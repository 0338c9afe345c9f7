// Spec 2 ("Mesh Control-Plane Daemons") read at test time, so tables that
// tests compare programs with cannot drift from the spec file: its exported
// counters and gauges (name, type, daemons) and its log scopes per daemon.
// The spec is ../shared/spec/ beside the repository, or beside a folder
// above it (worktrees), as build/conformance.mjs finds ../shared/tools.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

export type SpecMetricType = "Sum" | "Count" | "LastValue" | "Distribution";
/** Spec 2's column codes of the four daemons (CT, the utility context, is not a daemon). */
export const DAEMON_CODES = { "disco-agent": "AG", mesh_ca: "CA", hubs: "HU", "disco-discovery": "DI" } as const;
export type DaemonName = keyof typeof DAEMON_CODES;

export interface SpecMetric {
  name: string;
  type: SpecMetricType;
  /** Column codes: AG, CA, HU, DI, CT. */
  by: string[];
}

/** The text of spec 2; throws naming where it was looked for. */
export function readSpec2(): string {
  for (let dir = resolve(ROOT, ".."); ; dir = dirname(dir)) {
    const candidate = join(dir, "shared", "spec", "2-control-plane-daemons.md");
    if (existsSync(candidate)) return readFileSync(candidate, "utf8");
    if (dirname(dir) === dir) break;
  }
  throw new Error(`spec 2 not found: expected ../shared/spec/2-control-plane-daemons.md beside ${ROOT} or a folder above it`);
}

function section(text: string, heading: string, next: RegExp): string {
  const start = text.indexOf(heading);
  if (start < 0) throw new Error(`spec 2: no section ${JSON.stringify(heading)}`);
  const rest = text.slice(start + heading.length);
  const end = rest.search(next);
  return end < 0 ? rest : rest.slice(0, end);
}

const TYPES: readonly SpecMetricType[] = ["Sum", "Count", "LastValue", "Distribution"];
const NAME = /[a-z][a-z0-9]*(?:_[a-z0-9]+)+/g;
const codesIn = (text: string) => [...text.matchAll(/\b(AG|CA|HU|DI|CT)\b/g)].map((m) => m[1]);
const firstType = (text: string) => TYPES.find((t) => new RegExp(`\\b${t}\\b`).test(text));

/** `a / _b_total`: the alternative replaces as many trailing `_` segments of the first name. */
function expandAlternatives(cell: string): string[] {
  const parts = cell.split("/").map((p) => p.trim().replace(/`/g, ""));
  const first = parts[0];
  return parts.map((p) => {
    if (!p.startsWith("_")) return p;
    const segments = p.slice(1).split("_").length;
    return `${first.split("_").slice(0, -segments).join("_")}${p}`;
  });
}

/**
 * Every row of "Exported counters and gauges": the paragraphs (`**mesh_build**
 * (LastValue, …): AG, …`, `**Hub only (HU)**: name (Sum, …); …`) and the
 * tables under a `**Group (codes)**` heading (a Type column, or the group's
 * type, or `(LastValue)` after a name).
 */
export function specMetrics(text = readSpec2()): SpecMetric[] {
  const body = section(text, "### Exported counters and gauges", /^## /m);
  const out: SpecMetric[] = [];
  const blocks = body.split(/\n(?=\*\*)/).filter((b) => b.startsWith("**"));
  for (const block of blocks) {
    const [head, ...lines] = block.split("\n");
    const bold = /^\*\*(.+?)\*\*(.*)$/.exec(head)!;
    const title = bold[1];
    const afterTitle = bold[2];
    if (/^[a-z0-9_]+$/.test(title)) {
      // **mesh_build** (LastValue, component build info): AG, CA, …
      out.push({ name: title, type: firstType(afterTitle)!, by: codesIn(afterTitle.slice(afterTitle.indexOf("):"))) });
      continue;
    }
    const by = codesIn(title);
    const groupType = firstType(afterTitle);
    const rows = lines.filter((l) => l.startsWith("|") && !/^\|\s*-/.test(l));
    if (rows.length === 0) {
      // Prose: names, each optionally followed by `(Type, …)`.
      const prose = afterTitle.replace(/`/g, "");
      for (const m of prose.matchAll(NAME)) {
        const own = /^\s*\((Sum|Count|LastValue|Distribution)\b/.exec(prose.slice(m.index! + m[0].length));
        out.push({ name: m[0], type: (own?.[1] as SpecMetricType | undefined) ?? groupType!, by });
      }
      continue;
    }
    const header = rows[0].split("|").map((c) => c.trim());
    const typeColumn = header.indexOf("Type");
    for (const row of rows.slice(1)) {
      const cells = row.split("|").map((c) => c.trim());
      const nameCell = cells[1];
      const own = firstType(nameCell.replace(/`/g, ""));
      const type = (typeColumn > 0 ? firstType(cells[typeColumn]) : undefined) ?? own ?? groupType;
      if (type === undefined) throw new Error(`spec 2: no type for ${JSON.stringify(nameCell)}`);
      for (const name of expandAlternatives(nameCell.replace(/\((Sum|Count|LastValue|Distribution)\)/, ""))) out.push({ name, type, by });
    }
  }
  return out;
}

/** The spec rows of one daemon. */
export function specMetricsOf(daemon: DaemonName, text?: string): SpecMetric[] {
  return specMetrics(text).filter((m) => m.by.includes(DAEMON_CODES[daemon]));
}

/** The Prometheus family a spec row is exported under (host/telemetry/spec_metrics.ts) and its type. */
export function exposition(m: SpecMetric): { family: string; type: "counter" | "gauge" | "histogram" } {
  if (m.type === "Sum" || m.type === "Count") return { family: m.name.endsWith("_total") ? m.name : `${m.name}_total`, type: "counter" };
  return { family: m.name, type: m.type === "LastValue" ? "gauge" : "histogram" };
}

/** "Log scopes per daemon": daemon → its scopes (`all` included). */
export function specLogScopes(text = readSpec2()): Map<DaemonName, string[]> {
  const body = section(text, "Log scopes per daemon:", /\n### /);
  const out = new Map<DaemonName, string[]>();
  for (const line of body.split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    if (cells.length < 4 || !(cells[1] in DAEMON_CODES)) continue;
    out.set(
      cells[1] as DaemonName,
      cells[2].split(",").map((s) => s.trim()),
    );
  }
  return out;
}
