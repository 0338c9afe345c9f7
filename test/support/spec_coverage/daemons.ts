// Probes of the four daemons, each run as a real process: their --help
// (documented flags, defaults, subcommands), every spec flag (refused ones
// one by one; the others together at their spec defaults in one start),
// every spec variable (a malformed or non-default value each, one start at
// a time until the daemon starts), every spec log scope at debug, and the
// counters and gauges scraped from the started daemon.
import { join } from "node:path";
import { type Help, type HelpOption, parseHelp } from "./help.ts";
import { type Attempt, attemptStart, baseEnv, firstLine, runProgram } from "./run.ts";
import { type Daemon, type EnvSpec, type FlagSpec, MAIN_COMMAND, specDefaultValue } from "./spec2_model.ts";

export interface FlagOutcome {
  readonly documented?: HelpOption;
  /** What was run, for the evidence column (`--flag value`). */
  readonly given?: string;
  readonly result: "accepted" | "refused" | "failed" | "unknown" | "not given";
  /** The program's words (first line of stderr) when it did not accept. */
  readonly message?: string;
}

export interface EnvOutcome {
  readonly value: string;
  readonly result: "refused" | "validated" | "failed" | "started" | "changes output";
  readonly message?: string;
}

export interface DaemonObservations {
  readonly daemon: Daemon;
  readonly help: ReadonlyMap<string, Help>;
  readonly flags: ReadonlyMap<string, FlagOutcome>;
  readonly env: ReadonlyMap<string, EnvOutcome>;
  readonly scopes: ReadonlyMap<string, string | true>;
  /** `# TYPE` family → type of the scrape of the started daemon. */
  readonly metrics: ReadonlyMap<string, string>;
  /** Keys of its listening line. */
  readonly listeners: readonly string[];
}

interface DaemonRecipe {
  readonly prefix: string;
  /** Arguments that make one start use free ports and a temporary folder (flags named here are not probed in the batch). */
  base(tmp: string): string[];
  scrape(listening: Record<string, unknown>): string;
}

export const RECIPES: Readonly<Record<Daemon, DaemonRecipe>> = {
  "disco-agent": {
    prefix: "disco-agent listening ",
    base: (tmp) => ["proxy", "--configDir", tmp, "--inboundPort", "0", "--outboundPort", "0", "--proxyAdminPort", "0"],
    scrape: (l) => `http://127.0.0.1:${l.admin}/stats/prometheus`,
  },
  mesh_ca: {
    prefix: "mesh_ca listening ",
    base: () => ["--self-signed-ca", "--grpc-address", "127.0.0.1", "--grpc-port", "0", "--monitoring-port", "0", "--ctrlz_port", "0"],
    scrape: (l) => `http://127.0.0.1:${l.monitoringPort}/metrics`,
  },
  hubs: {
    prefix: "hubs listening ",
    base: (tmp) => ["server", "--address", "tcp://127.0.0.1:0", "--ctrlz_port", "0", "--monitoringPort", "0", "--configStoreURL", `fs://${tmp}`],
    scrape: (l) => `http://127.0.0.1:${l.monitoringPort}/metrics`,
  },
  "disco-discovery": {
    prefix: "disco-discovery listening: ",
    base: (tmp) => [
      "discovery",
      "--configDir",
      tmp,
      "--grpcAddr",
      "127.0.0.1:0",
      "--httpAddr",
      "",
      "--secureGrpcAddr",
      "",
      "--httpsAddr",
      "",
      "--monitoringAddr",
      "127.0.0.1:0",
      "--ctrlz_port",
      "0",
      "--ctrlz_address",
      "127.0.0.1",
    ],
    scrape: (l) => `http://${l.monitoring}/metrics`,
  },
};

const REFUSED_IN_HELP = /^not applicable|needs an orchestrator API: refused/;

/** The arguments that give a flag a value, in the form its help shows (`--f=true` for `[bool]`). */
function giveFlag(flag: string, option: HelpOption | undefined, value: string): string[] {
  if (option?.argument === "[bool]" || option?.argument === undefined) {
    if (option?.argument === undefined) return value === "true" ? [flag] : [];
    return [`${flag}=${value}`];
  }
  return [flag, value];
}

/** A value other than the spec's default, to see a flag refused. */
function otherValue(spec: FlagSpec): string {
  const d = specDefaultValue(spec);
  if (d === "false") return "true";
  if (d === "true") return "false";
  if (/duration/.test(spec.type)) return d === "7s" ? "9s" : "7s";
  if (/int|float|ratelimit|uint/.test(spec.type)) return d === "7" ? "9" : "7";
  return "spec-coverage-probe";
}

/** Where `message` names `what` as a whole word (-1: not at all). */
const namedAt = (message: string, what: string) => message.search(new RegExp(`(?<![\\w-])${what.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![\\w-])`));

async function helpOf(daemon: Daemon, path: string[]): Promise<Help | undefined> {
  const r = await runProgram(daemon, [...path, "--help"]);
  return r.status === 0 ? parseHelp(r.stdout) : undefined;
}

async function scrape(url: string): Promise<Map<string, string>> {
  const text = await (await fetch(url)).text();
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1], m[2]]));
}

/**
 * Starts with `args` and, while the daemon exits naming one of `candidates`,
 * records that one's outcome and starts again without it.
 */
async function startRemoving<T extends { readonly needles: readonly string[] }>(
  daemon: Daemon,
  candidates: Map<string, T>,
  args: (remaining: Map<string, T>) => { args: string[]; env: NodeJS.ProcessEnv },
  onExit: (name: string, status: number | null, message: string) => void,
  scrub: string[],
): Promise<Attempt & { started: true }> {
  const remaining = new Map(candidates);
  for (;;) {
    const run = args(remaining);
    const attempt = await attemptStart(daemon, run.args, RECIPES[daemon].prefix, run.env);
    if (attempt.started) return attempt;
    // The line naming a candidate: the last such (a start may log other lines before the one that stops it).
    const lines = `${attempt.stdout}\n${attempt.stderr}`.split("\n").reverse();
    let named: string | undefined;
    let message = "";
    for (const line of lines) {
      // The candidate the line names first (`--a: no effect without --b` is about --a).
      named = [...remaining]
        .map(([k, c]) => ({ k, at: Math.min(...c.needles.map((n) => namedAt(line, n)).map((at) => (at < 0 ? Number.POSITIVE_INFINITY : at))) }))
        .filter((c) => c.at !== Number.POSITIVE_INFINITY)
        .sort((a, b) => a.at - b.at)[0]?.k;
      if (named !== undefined) {
        message = firstLine(line, scrub);
        break;
      }
    }
    if (named === undefined) {
      // A complaint naming none of them (a file another flag's default makes it read): find the one by halving.
      named = await culprit(daemon, [...remaining.keys()], (subset) => args(new Map(subset.map((k) => [k, remaining.get(k)!]))));
      const last = `${attempt.stdout}\n${attempt.stderr}`.trim().split("\n").pop() ?? "";
      message = firstLine(last, scrub);
    }
    onExit(named, attempt.status, message);
    remaining.delete(named);
  }
}

/** The one of `keys` without which the daemon starts (halving: the start fails with the half that holds it). */
async function culprit(daemon: Daemon, keys: string[], args: (subset: string[]) => { args: string[]; env: NodeJS.ProcessEnv }): Promise<string> {
  let suspects = keys;
  while (suspects.length > 1) {
    const half = suspects.slice(0, Math.ceil(suspects.length / 2));
    const run = args(half);
    const attempt = await attemptStart(daemon, run.args, RECIPES[daemon].prefix, run.env);
    if (attempt.started) {
      await attempt.stop();
      suspects = suspects.slice(half.length);
    } else suspects = half;
  }
  if (suspects.length === 0) throw new Error(`${daemon}: a start failed, but no probed value alone is the cause`);
  return suspects[0];
}

export async function probeDaemon(
  daemon: Daemon,
  flags: readonly FlagSpec[],
  env: readonly EnvSpec[],
  scopes: readonly string[],
  tmp: string,
  subcommands: readonly string[],
) {
  const recipe = RECIPES[daemon];
  const main = MAIN_COMMAND[daemon];
  const scrub = [tmp];
  const help = new Map<string, Help>();
  const root = await helpOf(daemon, []);
  if (root) help.set("", root);
  for (const sub of subcommands) {
    const h = await helpOf(daemon, [sub]);
    if (h) help.set(sub, h);
  }
  const mainHelp = main ? help.get(main) : root;
  const documented = (flag: string) => mainHelp?.options.get(flag) ?? root?.options.get(flag);
  const base = recipe.base(join(tmp, "config"));
  const flagOutcomes = new Map<string, FlagOutcome>();

  // Undocumented and refused flags: one run each (a refusal stops the program before it starts).
  const batch = new Map<string, FlagSpec>();
  for (const spec of flags) {
    const option = documented(spec.flag);
    if (option && !REFUSED_IN_HELP.test(option.description)) {
      if (!base.includes(spec.flag)) batch.set(spec.flag, spec);
      else flagOutcomes.set(spec.flag, { documented: option, result: "accepted", given: `${spec.flag} ${base[base.indexOf(spec.flag) + 1] || '""'}` });
      continue;
    }
    const value = otherValue(spec);
    const given = option ? giveFlag(spec.flag, option, value) : [spec.flag, value];
    const attempt = await attemptStart(daemon, [...base, ...given], recipe.prefix, baseEnv());
    if (attempt.started) {
      await attempt.stop();
      // Documented as not applicable yet this value taken: the spec's default may be the one refused (what the program does is the other).
      const dflt = specDefaultValue(spec);
      const atDefault = dflt === undefined ? [] : giveFlag(spec.flag, option, dflt);
      const second = atDefault.length ? await attemptStart(daemon, [...base, ...atDefault], recipe.prefix, baseEnv()) : undefined;
      if (second?.started) await second.stop();
      if (second && !second.started && second.status === 2)
        flagOutcomes.set(spec.flag, {
          documented: option,
          given: atDefault.join(" "),
          result: "refused",
          message: `${firstLine(second.stderr, scrub)} (\`${given.join(" ")}\` is taken)`,
        });
      else flagOutcomes.set(spec.flag, { documented: option, given: given.join(" "), result: "accepted" });
    } else {
      const message = firstLine(attempt.stderr, scrub);
      const result = /unknown option/.test(message) ? "unknown" : attempt.status === 2 ? "refused" : "failed";
      flagOutcomes.set(spec.flag, { documented: option, given: given.join(" "), result, message });
    }
  }

  // One start with the rest: the documented flags at their spec defaults, every variable with a malformed (typed) or
  // non-default (string) value, every log scope at debug; again without each the daemon stops on, until it starts.
  type Candidate =
    | { readonly kind: "flag"; readonly spec: FlagSpec; readonly needles: readonly string[] }
    | { readonly kind: "env"; readonly value: string; readonly needles: readonly string[] }
    | { readonly kind: "scope"; readonly scope: string; readonly needles: readonly string[] };
  const candidates = new Map<string, Candidate>();
  for (const [flag, spec] of batch) if (flag !== "--log_output_level") candidates.set(flag, { kind: "flag", spec, needles: [flag] });
  for (const e of env) {
    const value = probeValue(e);
    candidates.set(e.name, { kind: "env", value, needles: value.startsWith("probe-") ? [e.name, value] : [e.name] });
  }
  for (const scope of scopes) candidates.set(`scope ${scope}`, { kind: "scope", scope, needles: [`"${scope}"`] });
  const envOutcomes = new Map<string, EnvOutcome>();
  const scopeOutcomes = new Map<string, string | true>();
  const atDefault = (spec: FlagSpec) => {
    const v = specDefaultValue(spec);
    return v === undefined ? [] : giveFlag(spec.flag, documented(spec.flag), v);
  };
  const started = await startRemoving(
    daemon,
    candidates,
    (remaining) => {
      const given = [...remaining.values()];
      const levels = given.flatMap((c) => (c.kind === "scope" ? [`${c.scope}:debug`] : []));
      return {
        args: [
          ...base,
          ...given.flatMap((c) => (c.kind === "flag" ? atDefault(c.spec) : [])),
          ...(levels.length ? ["--log_output_level", levels.join(",")] : []),
        ],
        env: baseEnv(Object.fromEntries(given.flatMap((c) => (c.kind === "env" ? [[c.needles[0], c.value]] : [])))),
      };
    },
    (key, status, message) => {
      const c = candidates.get(key)!;
      if (c.kind === "flag")
        flagOutcomes.set(key, { documented: documented(key), given: atDefault(c.spec).join(" "), result: status === 2 ? "refused" : "failed", message });
      else if (c.kind === "env")
        envOutcomes.set(key, { value: c.value, result: /not applicable/.test(message) ? "refused" : status === 2 ? "validated" : "failed", message });
      else scopeOutcomes.set(c.scope, message);
    },
    scrub,
  );
  const metrics = await scrape(recipe.scrape(started.listening));
  await started.stop();
  for (const [key, c] of candidates) {
    if (c.kind === "flag" && !flagOutcomes.has(key)) {
      const given = atDefault(c.spec);
      flagOutcomes.set(key, { documented: documented(key), given: given.join(" ") || undefined, result: given.length ? "accepted" : "not given" });
    } else if (c.kind === "env" && !envOutcomes.has(key)) envOutcomes.set(key, { value: c.value, result: "started" });
    else if (c.kind === "scope" && !scopeOutcomes.has(c.scope)) scopeOutcomes.set(c.scope, true);
  }
  if (batch.has("--log_output_level"))
    flagOutcomes.set("--log_output_level", {
      documented: documented("--log_output_level"),
      given: "--log_output_level <each spec scope>:debug",
      result: "accepted",
    });

  return {
    daemon,
    help,
    flags: new Map([...flagOutcomes].map(([k, o]) => [k, o.given === undefined ? o : { ...o, given: o.given.split(tmp).join("<tmp>") }])),
    env: envOutcomes,
    scopes: scopeOutcomes,
    metrics,
    listeners: Object.keys(started.listening),
  } satisfies DaemonObservations;
}

/** A value a reader of the variable must refuse (typed) or that differs from its default (strings, unique per variable so a complaint can be traced to it). */
export function probeValue(e: EnvSpec): string {
  if (/Boolean/.test(e.type)) return "maybe";
  if (/Integer/.test(e.type)) return "many";
  if (/Duration/.test(e.type)) return "soon";
  if (/Floating/.test(e.type)) return "lots";
  return `probe-${e.name.toLowerCase().replace(/_/g, "-")}`;
}
