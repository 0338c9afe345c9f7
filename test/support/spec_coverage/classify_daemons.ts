// Spec 2's rows classified from what the daemons did (daemons.ts).
import { type Class, combine, type Entry } from "./classes.ts";
import type { DaemonObservations, EnvOutcome, FlagOutcome } from "./daemons.ts";
import { exposition, specMetrics } from "../spec2.ts";
import type { SpecDocument } from "./spec_rows.ts";
import {
  CODES,
  type Code,
  DAEMONS,
  type Daemon,
  discoveryCommonFlags,
  envOfRow,
  flagsOfRow,
  flagTableDaemons,
  MAIN_COMMAND,
  specDefaultValue,
  subcommandsOf,
} from "./spec2_model.ts";
import type { MeshctlObservations } from "./meshctl.ts";

const FILE = "2-control-plane-daemons.md";
const q = (s: string) => `\`${s}\``;
const CONDITIONAL = /no effect without/;

function commandLine(daemon: Daemon): string {
  return [daemon, MAIN_COMMAND[daemon]].filter(Boolean).join(" ");
}

export function flagClass(daemon: Daemon, flag: string, o: FlagOutcome | undefined, specDefault?: string): { class: Class; evidence: string } {
  if (!o) return { class: "unprobed", evidence: "not probed" };
  const help = o.documented ? `\`${commandLine(daemon)} --help\`: ${o.documented.description}` : `not in \`${commandLine(daemon)} --help\``;
  const dflt =
    o.documented && specDefault !== undefined && o.documented.default !== undefined && o.documented.default !== specDefault
      ? `; default ${q(o.documented.default)} (spec: ${q(specDefault)})`
      : "";
  switch (o.result) {
    case "accepted":
      return { class: "working", evidence: `accepted (${q(o.given ?? flag)}); ${help}${dflt}` };
    case "not given":
      return { class: "working", evidence: `${help}${dflt} (its spec default is no value to give)` };
    case "unknown":
      return { class: "missing", evidence: o.message ?? "unknown option" };
    case "refused":
      if (CONDITIONAL.test(o.message ?? ""))
        return { class: "working", evidence: `takes effect with another flag: ${q(o.given ?? flag)} alone: ${o.message}${dflt}` };
      if (/not applicable|needs an orchestrator|not reachable here|is not available here/.test(o.message ?? ""))
        return { class: "refused", evidence: o.message ?? "" };
      return { class: "working", evidence: `checks its value: ${q(o.given ?? flag)}: ${o.message}; ${help}` };
    case "failed":
      return { class: "working", evidence: `acts on its value: ${q(o.given ?? flag)}: ${o.message}` };
  }
}

export function envClass(o: EnvOutcome | undefined, type: string): { class: Class; evidence: string } {
  if (!o) return { class: "unprobed", evidence: "not probed" };
  switch (o.result) {
    case "refused":
      return { class: "refused", evidence: o.message ?? "" };
    case "validated":
      return { class: "working", evidence: `read: ${o.message}` };
    case "failed":
      return { class: "working", evidence: `acts on it: ${o.message}` };
    case "changes output":
      return { class: "working", evidence: `with \`=${o.value}\` the output differs from the output without it` };
    case "started":
      return /String/.test(type)
        ? { class: "accepted", evidence: `started with ${q(`=${o.value}`)}; no effect observed by this probe` }
        : { class: "missing", evidence: `a malformed value (${q(`=${o.value}`)}) is ignored: the daemon started` };
  }
}

export function classifyDaemonRows(doc: SpecDocument, obs: ReadonlyMap<Daemon, DaemonObservations>, meshctl?: MeshctlObservations): Entry[] {
  const out: Entry[] = [];
  const add = (section: string, spec: string, program: string, c: { class: Class; evidence: string }) => out.push({ file: FILE, section, spec, program, ...c });
  const envByName = new Map(doc.rows.flatMap(envOfRow).map((e) => [e.name, e]));

  for (const row of doc.rows) {
    const section = row.section;
    // Flag tables.
    const flagDaemons = flagTableDaemons(row);
    if (flagDaemons.length > 0) {
      for (const daemon of flagDaemons) {
        for (const spec of flagsOfRow(daemon, row)) {
          add(
            section,
            spec.flag + (spec.short ? ` / ${spec.short}` : ""),
            commandLine(daemon),
            flagClass(daemon, spec.flag, obs.get(daemon)?.flags.get(spec.flag), specDefaultValue(spec)),
          );
        }
      }
      continue;
    }
    if (row.header[0] === "Daemon" && row.header[1] === "Scopes") {
      const daemon = row.cells[0] as Daemon;
      for (const scope of row.cells[1].split(/,\s*/)) {
        const o = obs.get(daemon)?.scopes.get(scope);
        add(
          section,
          `${daemon}: ${scope}`,
          commandLine(daemon),
          o === true ? { class: "working", evidence: `accepted by \`--log_output_level ${scope}:debug\`` } : { class: "missing", evidence: o ?? "not probed" },
        );
      }
      continue;
    }
    const env = envOfRow(row);
    if (env.length > 0) {
      for (const e of env) {
        for (const code of e.by) {
          const program = CODES[code];
          if (program === "meshctl") {
            const o = meshctl?.env?.get(e.name);
            const c = o ? envClass(o, e.type) : { class: "unprobed" as Class, evidence: "not probed" };
            add(section, e.name, "meshctl", {
              ...c,
              evidence: o?.message
                ? c.evidence
                : `\`manifest generate\`${o?.result === "started" ? ", `x simulate`" : ""}: ${c.evidence.replace("the daemon started", "the commands ran")}`,
            });
          } else add(section, e.name, commandLine(program), envClass(obs.get(program)?.env.get(e.name), e.type));
        }
      }
      continue;
    }
    if (section.startsWith("Resources and their fields › Exported counters and gauges")) continue;
    if (row.header[0] === "Daemon" && row.header[1] === "Listener") {
      const daemons = row.cells[0].split(/,\s*/) as Daemon[];
      const flags = [...row.cells[1].matchAll(/`(--[\w-]+)`/g)].map((m) => m[1]);
      for (const daemon of daemons) {
        const classes = flags.map((f) => {
          const seen = obs.get(daemon);
          const main = MAIN_COMMAND[daemon];
          // A listener flag that is not in the daemon's flag table (ControlZ): what its --help says.
          const option = seen?.help.get(main ?? "")?.options.get(f) ?? seen?.help.get("")?.options.get(f);
          const o =
            seen?.flags.get(f) ??
            (option
              ? { documented: option, result: "not given" as const }
              : { result: "unknown" as const, message: `not in \`${commandLine(daemon)} --help\`` });
          const c = flagClass(daemon, f, o);
          const d = o?.documented?.default;
          return { ...c, evidence: `${f}: ${c.class}${d !== undefined ? `, default ${q(d)}` : ""}` };
        });
        add(section, `${row.cells[1]} (default ${row.cells[2]})`, commandLine(daemon), {
          class: combine(classes.map((c) => c.class)),
          evidence: classes.map((c) => c.evidence).join("; "),
        });
      }
      continue;
    }
    // Authentication and Limits: rows that restate flags and variables, classified by theirs.
    if (/^(Authentication|Limits)$/.test(section)) {
      const text = row.cells.join(" ");
      const daemons = DAEMONS.filter((d) => text.includes(d));
      const targets = daemons.length ? daemons : (["disco-agent", "disco-discovery"] as Daemon[]);
      const refs: Array<{ class: Class; evidence: string }> = [];
      for (const f of new Set([...text.matchAll(/--[\w-]+/g)].map((m) => m[0]))) {
        for (const d of targets) {
          const o = obs.get(d)?.flags.get(f);
          if (o) refs.push({ class: flagClass(d, f, o).class, evidence: `${d} ${f}: ${flagClass(d, f, o).class}` });
        }
      }
      for (const v of new Set([...text.matchAll(/\b[A-Z][A-Z0-9_]{3,}\b/g)].map((m) => m[0]))) {
        const spec = envByName.get(v);
        if (!spec) continue;
        for (const code of spec.by) {
          const d = CODES[code as Code];
          if (d === "meshctl" || (daemons.length && !daemons.includes(d))) continue;
          refs.push({ class: envClass(obs.get(d)?.env.get(v), spec.type).class, evidence: `${d} ${v}: ${envClass(obs.get(d)?.env.get(v), spec.type).class}` });
        }
      }
      add(
        section,
        row.cells[0],
        targets.join(", "),
        refs.length
          ? { class: combine(refs.map((r) => r.class)), evidence: refs.map((r) => r.evidence).join("; ") }
          : { class: "unprobed", evidence: "names no flag or variable to probe (certificate lifetimes and limits are not observed by this script)" },
      );
      continue;
    }
    add(section, row.cells[0], "", { class: "unprobed", evidence: "no probe for this table" });
  }

  // disco-discovery's common flags (prose).
  for (const spec of discoveryCommonFlags(doc)) {
    add(
      "Endpoints › disco-discovery (flags common to the root and all subcommands)",
      spec.flag,
      "disco-discovery",
      flagClass("disco-discovery", spec.flag, obs.get("disco-discovery")?.flags.get(spec.flag), specDefaultValue(spec)),
    );
  }
  // Subcommands (prose).
  for (const daemon of DAEMONS) {
    for (const sub of subcommandsOf(doc, daemon)) {
      const help = obs.get(daemon)?.help.get(sub);
      add(
        `Endpoints › ${daemon} (subcommands)`,
        sub,
        daemon,
        help
          ? { class: "working", evidence: `\`${daemon} ${sub} --help\`: ${help.description}` }
          : { class: "missing", evidence: `\`${daemon} ${sub} --help\` fails` },
      );
    }
  }
  // Counters and gauges (tables and paragraphs), per daemon that the spec names.
  for (const m of specMetrics(doc.text)) {
    for (const code of m.by) {
      const program = CODES[code as Code];
      const section = "Resources and their fields › Exported counters and gauges";
      if (program === "meshctl") {
        add(section, `${m.name} (${m.type})`, "meshctl", { class: "missing", evidence: "meshctl is a command-line program: it serves no /metrics" });
        continue;
      }
      const { family, type } = exposition(m);
      const got = obs.get(program)?.metrics.get(family);
      add(
        section,
        `${m.name} (${m.type})`,
        program,
        got === undefined
          ? { class: "missing", evidence: `no \`${family}\` in the scrape of a started ${program}` }
          : got === type
            ? { class: "working", evidence: `scraped: \`# TYPE ${family} ${got}\`` }
            : { class: "partial", evidence: `scraped as a ${got}, spec type ${m.type} (a ${type})` },
      );
    }
  }
  return out;
}
