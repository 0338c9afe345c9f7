// The rows of the three spec documents (../shared/spec/ beside the repository
// or a folder above it, as test/support/spec2.ts finds spec 2): every table
// row, with the headings and the bold label it sits under, and the prose
// lists that stand for rows (spec 2's counters named in paragraphs, the
// daemons' subcommands, meshctl's commands described in paragraphs).
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

export const SPEC_FILES = ["1-policy-and-client-config.md", "2-control-plane-daemons.md", "3-operator-cli.md"] as const;
export type SpecFile = (typeof SPEC_FILES)[number];

/** The folder holding the spec files; throws naming where it looked. */
export function specDir(): string {
  for (let dir = resolve(ROOT, ".."); ; dir = dirname(dir)) {
    const candidate = join(dir, "shared", "spec");
    if (existsSync(join(candidate, SPEC_FILES[0]))) return candidate;
    if (dirname(dir) === dir) break;
  }
  throw new Error(`spec documents not found: expected ../shared/spec/ beside ${ROOT} or a folder above it`);
}

export interface SpecTableRow {
  readonly file: SpecFile;
  /** `## Resources and their fields › ### mesh_ca` (and `› **APIKey**` when a bold label introduces the table). */
  readonly section: string;
  readonly header: readonly string[];
  readonly cells: readonly string[];
  /** 1-based line in the spec file. */
  readonly line: number;
}

export interface SpecDocument {
  readonly file: SpecFile;
  readonly title: string;
  readonly text: string;
  readonly rows: readonly SpecTableRow[];
  /** Heading path → the prose of that section (tables left out). */
  readonly prose: ReadonlyMap<string, string>;
}

const splitCells = (line: string): string[] =>
  line
    .trim()
    .replace(/^\||\|$/g, "")
    // `\|` inside a cell (`<file\|dir>`) is not a separator.
    .split(/(?<!\\)\|/)
    .map((c) => c.trim().replace(/\\\|/g, "|"));

export function parseSpec(file: SpecFile, text: string): SpecDocument {
  const lines = text.split("\n");
  const rows: SpecTableRow[] = [];
  const prose = new Map<string, string>();
  let title = "";
  let h2 = "";
  let h3 = "";
  let bold = "";
  let header: string[] | undefined;
  const sectionName = () => [h2, h3, bold].filter(Boolean).join(" › ");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith("# ")) title = line.slice(2).trim();
    else if (line.startsWith("## ")) [h2, h3, bold] = [line.slice(3).trim(), "", ""];
    else if (line.startsWith("### ")) [h3, bold] = [line.slice(4).trim(), ""];
    if (!line.startsWith("|")) {
      header = undefined;
      // A bold label alone on its line, or opening a paragraph, names the table below it.
      const label = /^\*\*([^*]+)\*\*/.exec(line);
      if (label && !line.startsWith("#")) bold = `**${label[1]}**`;
      if (!line.startsWith("#") && line.trim()) {
        const key = [h2, h3].filter(Boolean).join(" › ");
        prose.set(key, `${prose.get(key) ?? ""}${line}\n`);
      }
      continue;
    }
    const cells = splitCells(line);
    if (header === undefined) {
      header = cells;
      continue;
    }
    if (cells.every((c) => /^:?-+:?$/.test(c))) continue;
    rows.push({ file, section: sectionName(), header, cells, line: i + 1 });
  }
  return { file, title, text, rows, prose };
}

export function readSpecs(dir = specDir()): SpecDocument[] {
  return SPEC_FILES.map((f) => parseSpec(f, readFileSync(join(dir, f), "utf8")));
}

/** `--flag` names in a piece of spec text (backquoted or not). */
export function flagsIn(text: string): string[] {
  return [...new Set([...text.matchAll(/(?<![\w-])--[A-Za-z][\w-]*/g)].map((m) => m[0]))];
}
