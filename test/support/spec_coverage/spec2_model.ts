// What spec 2's rows ask of each daemon, read from the parsed rows: the
// flags (with type and default) of each daemon's main subcommand, the
// environment variables each reads (column By), its log scopes and
// subcommands. test/support/spec2.ts reads the counters.
import type { SpecDocument, SpecTableRow } from "./spec_rows.ts";

export const CODES = { AG: "disco-agent", CA: "mesh_ca", HU: "hubs", DI: "disco-discovery", CT: "meshctl" } as const;
export type Code = keyof typeof CODES;
export type Daemon = "disco-agent" | "mesh_ca" | "hubs" | "disco-discovery";
export const DAEMONS: readonly Daemon[] = ["disco-agent", "mesh_ca", "hubs", "disco-discovery"];

export interface FlagSpec {
  readonly daemon: Daemon;
  readonly flag: string;
  readonly short?: string;
  readonly type: string;
  /** The spec's default as written (`off`, `empty`, `10s`, `` `default:info` ``). */
  readonly default: string;
}

export interface EnvSpec {
  readonly name: string;
  readonly type: string;
  readonly default: string;
  readonly by: readonly Code[];
}

const clean = (s: string) => s.replace(/`/g, "").trim();

/** `--a / -a`, `--a / --b` with `t1 / t2` and `d1 / d2`: one flag spec each. */
export function flagsOfRow(daemon: Daemon, row: SpecTableRow): FlagSpec[] {
  const parts = clean(row.cells[0]).split(/\s+\/\s+/);
  const types = clean(row.cells[1] ?? "").split(/\s+\/\s+/);
  const defaults = clean(row.cells[2] ?? "").split(/\s+\/\s+/);
  const out: FlagSpec[] = [];
  for (const part of parts) {
    if (/^-\w$/.test(part) && out.length > 0) {
      out[out.length - 1] = { ...out[out.length - 1], short: part };
      continue;
    }
    if (!part.startsWith("--")) continue;
    const i = out.length;
    out.push({
      daemon,
      flag: part.split(/\s/)[0],
      type: types[i] ?? types[0],
      default: defaults.length === parts.filter((p) => p.startsWith("--")).length ? defaults[i] : defaults[0],
    });
  }
  return out;
}

/** The daemon whose flag table a row of spec 2 is in, and its main subcommand. */
export const MAIN_COMMAND: Readonly<Record<Daemon, string | undefined>> = {
  "disco-agent": "proxy",
  mesh_ca: undefined,
  hubs: "server",
  "disco-discovery": "discovery",
};

export function flagTableDaemons(row: SpecTableRow): Daemon[] {
  if (row.section.endsWith("Common logging flags")) return [...DAEMONS];
  const m = /^Endpoints › (disco-agent|mesh_ca|hubs|disco-discovery)$/.exec(row.section);
  return m && row.header[0].startsWith("Flag") ? [m[1] as Daemon] : [];
}

/** disco-discovery's flags common to the root and every subcommand, from the prose under its heading. */
export function discoveryCommonFlags(doc: SpecDocument): FlagSpec[] {
  const prose = doc.prose.get("Endpoints › disco-discovery") ?? "";
  const common = prose.slice(prose.indexOf("Flags common"));
  const out: FlagSpec[] = [];
  for (const m of common.matchAll(/`(--[\w]+)`(?: \((\w+), ([^,]+),[^)]*\))?/g)) {
    out.push({ daemon: "disco-discovery", flag: m[1], type: m[2] ?? "string", default: m[3] ?? (m[1] === "--ctrlz_port" ? "9876" : "localhost") });
  }
  return out;
}

/** Subcommand names from the `Subcommands:` sentence of a daemon's section. */
export function subcommandsOf(doc: SpecDocument, daemon: Daemon): string[] {
  const prose = doc.prose.get(`Endpoints › ${daemon}`) ?? "";
  const sentence = /Subcommands: (.*)/.exec(prose)?.[1] ?? "";
  return [...sentence.replace(/\([^)]*\)/g, "").matchAll(/`([a-z]+)[^`]*`/g)].map((m) => m[1]);
}

/** `A / _B` and `A, B`: the names a cell stands for (an alternative starting with `_` replaces the last segment). */
export function envNames(cell: string): string[] {
  const parts = clean(cell).split(/\s*[/,]\s*/);
  return parts.map((p) => (p.startsWith("_") ? `${parts[0].slice(0, parts[0].lastIndexOf("_"))}${p}` : p));
}

export function envOfRow(row: SpecTableRow): EnvSpec[] {
  if (!row.section.startsWith("Resources and their fields › Environment variables")) return [];
  const byColumn = row.header.indexOf("By");
  const groupCodes = /\(([A-Z, ]+)\)\*\*$/.exec(row.section)?.[1];
  const meaning = row.cells[3] ?? "";
  const own = /\(((?:AG|CA|HU|DI|CT)(?:, (?:AG|CA|HU|DI|CT))*)\)\s*$/.exec(meaning)?.[1];
  const codes = (byColumn >= 0 ? row.cells[byColumn] : (own ?? groupCodes ?? "")).split(/,\s*/).filter(Boolean) as Code[];
  return envNames(row.cells[0]).map((name) => ({ name, type: clean(row.cells[1]), default: clean(row.cells[2]), by: codes }));
}

export function specScopes(doc: SpecDocument): Map<Daemon, string[]> {
  const out = new Map<Daemon, string[]>();
  for (const row of doc.rows) {
    if (row.header[0] === "Daemon" && row.header[1] === "Scopes") out.set(row.cells[0] as Daemon, row.cells[1].split(/,\s*/));
  }
  return out;
}

/** The value to give a flag for its spec default, or undefined when the default cannot be written as a value. */
export function specDefaultValue(spec: FlagSpec): string | undefined {
  const d = clean(spec.default);
  if (d === "off") return "false";
  if (d === "on") return "true";
  if (d === "empty") return "";
  if (/^see /.test(d) || d === "[]") return undefined;
  const list = /^\[(.*)\]$/.exec(d);
  if (list) return list[1];
  if (/^\d+ = /.test(d)) return d.split(" ")[0];
  return d.split(";")[0].trim();
}
