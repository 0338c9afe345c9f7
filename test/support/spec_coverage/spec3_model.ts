// The commands spec 3 describes, each with the flags the spec gives it, read
// from its tables (global flags, analyze, experimental, manifest,
// proxy-config) and from the `meshctl …` invocations of its prose sections.
import type { SpecDocument, SpecTableRow } from "./spec_rows.ts";

export interface CommandFlag {
  readonly flag: string;
  readonly short?: string;
  readonly type?: string;
  readonly default?: string;
}

export interface CommandItem {
  readonly section: string;
  /** The spec row it comes from (its first cell), or the prose invocation. */
  readonly label: string;
  readonly line?: number;
  /** `["experimental", "authz", "check"]`; `[]` for the global flags. */
  readonly path: readonly string[];
  readonly aliases: readonly string[];
  /** The spec's argument forms after the path (`<pod-name[.namespace]>`). */
  readonly args: string;
  readonly flags: readonly CommandFlag[];
}

const TYPES = /\b(bool|string|stringSlice|stringArray|duration|int|float32|Level)\b/;

/** The flags a piece of spec text gives, with the short form, type and default written right after each. */
export function flagsOfText(text: string): CommandFlag[] {
  const out: CommandFlag[] = [];
  const plain = text.replace(/`/g, "");
  const matches = [...plain.matchAll(/(?<![\w-])(--[A-Za-z][\w-]*)(?:=\w+)?/g)];
  matches.forEach((m, i) => {
    const after = plain.slice(m.index! + m[0].length, matches[i + 1]?.index ?? plain.length);
    const short = /^\s*\/\s*(-\w)\b/.exec(after)?.[1];
    const type = TYPES.exec(after.split(/[;(]/)[0])?.[1];
    const dflt = /default (\S+)/.exec(after.split(";")[0])?.[1]?.replace(/[).,]+$/, "");
    if (!out.some((f) => f.flag === m[1])) out.push({ flag: m[1], ...(short ? { short } : {}), ...(type ? { type } : {}), ...(dflt ? { default: dflt } : {}) });
  });
  return out;
}

function tableFlag(row: SpecTableRow): CommandFlag {
  const [flag, short, type, dflt] = row.cells.map((c) => c.replace(/`/g, "").trim());
  return { flag, ...(short ? { short } : {}), type, default: dflt };
}

/** `add-to-mesh (alias `add`)`, `remove-from-mesh (alias `rm`) deployment / service`, `listener (`listeners`, `l`)`. */
function commandCell(cell: string): { paths: string[][]; aliases: string[] } {
  const aliases = [...(/\(([^)]*)\)/.exec(cell)?.[1] ?? "").matchAll(/`([^`]+)`/g)].map((m) => m[1]);
  const words = cell
    .replace(/\([^)]*\)/g, "")
    .replace(/,.*$/, "")
    .trim()
    .split(/\s+/);
  const slash = words.indexOf("/");
  if (slash > 0) {
    const stem = words.slice(0, slash - 1);
    return {
      paths: [
        [...stem, words[slash - 1]],
        [...stem, words[slash + 1]],
      ],
      aliases,
    };
  }
  return { paths: [words], aliases };
}

export function specCommands(doc: SpecDocument): CommandItem[] {
  const out: CommandItem[] = [];
  const rowsOf = (section: string) => doc.rows.filter((r) => r.section === section);
  const globals = rowsOf("Endpoints › Global flags (accepted by every command)");
  out.push({
    section: "Endpoints › Global flags (accepted by every command)",
    label: "global flags",
    path: [],
    aliases: [],
    args: "",
    flags: globals.map(tableFlag),
  });
  for (const [h3, text] of doc.prose) {
    const heading = h3.replace(/^Endpoints › /, "");
    if (!h3.startsWith("Endpoints › ") || heading.startsWith("Global")) continue;
    const word = heading.split(" ")[0];
    const tables = doc.rows.filter((r) => r.section === h3 || r.section.startsWith(`${h3} ›`));
    const sectionFlags = flagsOfText(text);
    if (word === "analyze") {
      out.push({ section: h3, label: "`meshctl analyze <file>...`", path: ["analyze"], aliases: [], args: "<file>...", flags: tables.map(tableFlag) });
      out.push({ section: h3, label: "`meshctl experimental analyze`", path: ["experimental", "analyze"], aliases: [], args: "<file>...", flags: [] });
      continue;
    }
    // Table rows: one command each (experimental, manifest, proxy-config).
    // A `group` row's shared flags belong to the commands of the rows below it that start with its words.
    const shared: Array<{ path: string[]; flags: CommandFlag[] }> = [];
    for (const row of tables) {
      const { paths, aliases } = commandCell(row.cells[0]);
      const stem = word === "experimental" ? ["experimental"] : [word];
      const flagsCell = row.cells[row.cells.length - 1];
      const group = row.header[1] === "Arguments" && row.cells[1] === "group";
      const args = row.header[1] === "Arguments" && !/^(group|none)$/.test(row.cells[1]) ? row.cells[1].replace(/`/g, "") : "";
      for (const p of paths) {
        const path = [...stem, ...p];
        if (group) shared.push({ path, flags: flagsOfText(flagsCell) });
        const inherited = shared.filter((g) => g.path.length < path.length && g.path.every((w, i) => path[i] === w)).flatMap((g) => g.flags);
        const own = group ? [] : flagsOfText(flagsCell);
        const flags = [...inherited.filter((f) => !own.some((o) => o.flag === f.flag)), ...own];
        out.push({ section: h3, label: row.cells[0], line: row.line, path, aliases, args, flags });
      }
    }
    if (tables.length > 0) {
      // Group flags of the section's prose (manifest's `--dry-run`…) on the group itself.
      if (/Group flags:/.test(text))
        out.push({ section: h3, label: `\`meshctl ${word}\` (group flags)`, path: [word], aliases: [], args: "", flags: sectionFlags });
      continue;
    }
    // Prose: the `meshctl …` invocations (or `<heading> …`), else the `Subcommands:` list.
    const invocations = [...text.matchAll(/`(?:meshctl )?((?:[a-z][\w-]*)(?: [a-z][\w-]*)*)((?: [<[][^`]*)?)(?: \[flags\]| -f FILENAME \[options\])?`/g)]
      .filter((m) => m[1].split(" ")[0] === word || /^(experimental|deregister|orch-inject)$/.test(m[1].split(" ")[0]))
      .map((m) => ({ path: m[1].split(" "), args: m[2].trim() }));
    const subcommands = [...(/Subcommands: (.*)/.exec(text)?.[1] ?? "").replace(/\([^)]*\)/g, "").matchAll(/`([a-zA-Z]+)[^`]*`/g)].map((m) => ({
      path: [word, m[1]],
      args: "<pod-name[.namespace]>",
    }));
    const found = invocations.length > 0 ? invocations : subcommands.length > 0 ? subcommands : [{ path: [word], args: "" }];
    const seen = new Set<string>();
    found.forEach(({ path, args }, i) => {
      if (seen.has(path.join(" "))) return;
      seen.add(path.join(" "));
      out.push({ section: h3, label: `\`meshctl ${path.join(" ")}${args ? ` ${args}` : ""}\``, path, aliases: [], args, flags: i === 0 ? sectionFlags : [] });
    });
  }
  return out;
}
