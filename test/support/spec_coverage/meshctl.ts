// Probes of meshctl, run as a real process: each command spec 3 describes
// (its --help, then the command itself: offline against files or a running
// disco-agent's admin port where it has such a mode, else as the spec writes
// it), each of its spec flags added to that run, each alias, and the
// variables of spec 2's column CT.
import { copyFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Help, type HelpOption, parseHelp } from "./help.ts";
import { baseEnv, firstLine, pool, runProgram } from "./run.ts";
import type { CommandFlag, CommandItem } from "./spec3_model.ts";
import { type EnvOutcome, probeValue } from "./daemons.ts";
import type { EnvSpec } from "./spec2_model.ts";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "cli", "fixtures");

export interface Run {
  /** The arguments after `meshctl`, temporary paths and the admin URL written as placeholders. */
  readonly args: string;
  readonly status: number | null;
  /** The program's words: the first line of stderr (or stdout) when it did not succeed. */
  readonly message: string;
}

export interface CommandOutcome {
  readonly help?: Help;
  /** The run this command was judged by (offline when it has such a mode). */
  readonly run: Run;
  /** Whether `run` used an offline mode (files, --admin) rather than the spec's form. */
  readonly offline: boolean;
  readonly aliases: ReadonlyMap<string, boolean>;
  /** Known to exist because its refusal names it (its --help was not needed). */
  readonly named: boolean;
}

export interface MeshctlFlagOutcome {
  readonly documented?: HelpOption;
  readonly run?: Run;
  /** The flag and its value as given (temporary paths as `<tmp>`). */
  readonly given?: readonly string[];
}

export interface MeshctlObservations {
  readonly commands: ReadonlyMap<string, CommandOutcome>;
  /** `path|--flag` → outcome. */
  readonly flags: ReadonlyMap<string, MeshctlFlagOutcome>;
  readonly rootHelp?: Help;
  /** Spec 2's CT variables, given to `meshctl manifest generate` (it renders the install, the offline command most of them would shape). */
  readonly env: ReadonlyMap<string, EnvOutcome>;
}

interface Fixtures {
  readonly policy: string;
  readonly values: string;
  readonly admin: string;
}

function writeFixtures(tmp: string, admin: string): Fixtures {
  const policy = join(tmp, "policy.yaml");
  writeFileSync(
    policy,
    "apiVersion: security.mesh.io/v1beta1\nkind: PeerAuthentication\nmetadata: {name: default, namespace: default}\nspec:\n  mtls: {mode: STRICT}\n",
  );
  const values = join(tmp, "values.yaml");
  writeFileSync(values, "global:\n  hub: docker.io/mesh\n  tag: 1.5.0\n");
  copyFileSync(join(FIXTURES, "ingress_v1.in.yaml"), join(tmp, "ingress.yaml"));
  copyFileSync(join(FIXTURES, "inject_workloads.in.yaml"), join(tmp, "workloads.yaml"));
  copyFileSync(join(FIXTURES, "authz_convert", "policy-multiple-rules.yaml"), join(tmp, "rbac.yaml"));
  copyFileSync(join(FIXTURES, "authz_convert", "service-bookinfo.yaml"), join(tmp, "services.yaml"));
  return { policy, values, admin };
}

/** Offline invocations of the commands that work on files. */
function offlineArgs(path: string, f: Fixtures, tmp: string): string[] | undefined {
  const at = (name: string) => join(tmp, name);
  const table: Record<string, string[]> = {
    analyze: ["analyze", "--use-kube=false", f.policy],
    "experimental analyze": ["experimental", "analyze", "--use-kube=false", f.policy],
    "convert-ingress": ["convert-ingress", "-f", at("ingress.yaml")],
    "experimental convert-ingress": ["experimental", "convert-ingress", "-f", at("ingress.yaml")],
    "orch-inject": ["orch-inject", "-f", at("workloads.yaml")],
    validate: ["validate", "-f", f.policy],
    version: ["version"],
    // A debug address where nothing listens (port 1): the command runs and says what it could not reach.
    "experimental wait": ["experimental", "wait", "VirtualService", "reviews.default", "--debugAddress", "127.0.0.1:1"],
    "manifest generate": ["manifest", "generate"],
    "manifest diff": ["manifest", "diff", f.policy, f.policy],
    "manifest migrate": ["manifest", "migrate", f.values],
    "experimental authz convert": ["experimental", "authz", "convert", "-f", at("rbac.yaml"), "-s", at("services.yaml")],
  };
  return table[path];
}

/** Placeholder arguments for the spec's argument forms. */
function placeholders(args: string, f: Fixtures): string[] {
  return args
    .split(/\s+/)
    .filter((a) => a && a !== "..." && a !== "[flags]")
    .flatMap((a) => {
      if (/^\[/.test(a) || /^one|^or$|^more|^names|^workload/.test(a)) return [];
      if (/pod-name/.test(a)) return ["productpage.default"];
      if (/svcname/.test(a)) return ["vm-svc"];
      if (/<ip>/.test(a)) return ["10.0.0.1"];
      if (/port1/.test(a)) return ["http:8080"];
      if (/<type>/.test(a)) return ["VirtualService"];
      if (/<name>\.<namespace>|<name>\[/.test(a)) return ["reviews.default"];
      if (/<name>/.test(a)) return ["reviews"];
      if (/file/.test(a)) return [f.policy];
      return [];
    });
}

const scrubbed = (args: readonly string[], tmp: string, admin: string) => args.join(" ").split(admin).join("<agent admin>").split(tmp).join("<tmp>");

async function run(args: string[], tmp: string, admin: string, env = baseEnv()): Promise<Run> {
  const r = await runProgram("meshctl", args, env);
  const message =
    r.status === 0
      ? ""
      : firstLine(r.stderr || r.stdout, [tmp])
          .split(admin)
          .join("<agent admin>");
  return { args: scrubbed(args, tmp, admin), status: r.status, message };
}

/** A value for a flag: the spec's default where it gives one, else one of the flag's type. */
function flagValue(flag: CommandFlag, option: HelpOption | undefined, f: Fixtures): string[] {
  const d = flag.default;
  const bool = option ? option.argument === undefined || option.argument === "[bool]" : flag.type === "bool";
  if (bool) {
    if (option?.argument === undefined) return [flag.flag];
    return [`${flag.flag}=${d === "off" ? "false" : "true"}`];
  }
  if (d && d !== "empty" && d !== "[]") return [flag.flag, d];
  if (/file|File|filename/.test(flag.flag)) return [flag.flag, f.policy];
  if (flag.type === "duration") return [flag.flag, "30s"];
  if (/int|float/.test(flag.type ?? "")) return [flag.flag, "1"];
  return [flag.flag, "default"];
}

/** Each variable set (malformed or non-default), all at once, one fewer per run that stops naming one. */
async function probeEnv(vars: readonly EnvSpec[], tmp: string): Promise<Map<string, EnvOutcome>> {
  const out = new Map<string, EnvOutcome>();
  const remaining = new Map(vars.map((v) => [v.name, probeValue(v)]));
  // The two offline commands that read them (manifest generate renders the install; x simulate runs sidecars and a CA
  // with the agent's code): each run that stops naming one records it, and the next goes without it.
  const scenario = join(tmp, "scenario.json");
  copyFileSync(join(FIXTURES, "simulate", "single.json"), scenario);
  for (const command of [
    ["manifest", "generate"],
    ["experimental", "simulate", "-f", scenario],
  ]) {
    for (;;) {
      const r = await runProgram("meshctl", command, baseEnv(Object.fromEntries(remaining)));
      if (r.status === 0) break;
      const message = firstLine(r.stderr, [tmp]);
      const named = [...remaining.keys()].find((k) => message.includes(k));
      if (named === undefined) throw new Error(`meshctl ${command.join(" ")}: exit ${r.status} naming no variable: ${message}`);
      const by = `\`${command.slice(0, 2).join(" ").replace("experimental", "x")}\``;
      out.set(named, {
        value: remaining.get(named)!,
        result: /not applicable|needs an orchestrator/.test(message) ? "refused" : "validated",
        message: `${by}: ${message}`,
      });
      remaining.delete(named);
    }
  }
  // Which of the rest change what the command renders: halving the set whose output differs from the output without any.
  const render = async (names: readonly string[]) =>
    (await runProgram("meshctl", ["manifest", "generate"], baseEnv(Object.fromEntries(names.map((n) => [n, remaining.get(n)!]))))).stdout;
  const plain = await render([]);
  const changing = async (names: readonly string[]): Promise<string[]> => {
    if (names.length === 0 || (await render(names)) === plain) return [];
    if (names.length === 1) return [...names];
    const half = Math.ceil(names.length / 2);
    return [...(await changing(names.slice(0, half))), ...(await changing(names.slice(half)))];
  };
  const effective = new Set(await changing([...remaining.keys()]));
  for (const [name, value] of remaining) out.set(name, { value, result: effective.has(name) ? "changes output" : "started" });
  return out;
}

export async function probeMeshctl(items: readonly CommandItem[], tmp: string, admin: string, ctVariables: readonly EnvSpec[]): Promise<MeshctlObservations> {
  const f = writeFixtures(tmp, admin);
  const commands = new Map<string, CommandOutcome>();
  const flags = new Map<string, MeshctlFlagOutcome>();
  const rootHelp = parseHelp((await runProgram("meshctl", ["--help"])).stdout);
  const base = new Map<string, string[]>();

  await pool(
    3,
    items.map((item) => async () => {
      const key = item.path.join(" ");
      if (commands.has(key) || item.path.length === 0) return;
      // The command as the spec writes it first: one that refuses every form (exit 69 naming itself, no offline mode offered) needs no more runs.
      const curated = offlineArgs(key, f, tmp);
      const specForm = [...item.path, ...placeholders(item.args, f)];
      const first = curated ? undefined : await run(specForm, tmp, admin);
      if (first && first.status === 69 && first.message.startsWith(`meshctl ${key}`) && !/offline instead/.test(first.message) && item.aliases.length === 0) {
        commands.set(key, { run: first, offline: false, aliases: new Map(), named: true });
        return;
      }
      const helpRun = await runProgram("meshctl", [...item.path, "--help"]);
      // A group's help, reached through a command the group does not have, names the group only.
      const help =
        helpRun.status === 0 && new RegExp(`^Usage: meshctl ${item.path.map((w) => `(${w}|\\S*\\|${w}|${w}\\|\\S*)`).join(" ")}( |$)`).test(helpRun.stdout)
          ? parseHelp(helpRun.stdout)
          : undefined;
      const offline = curated ?? (help?.options.has("--admin") ? [...item.path, "--admin", admin] : undefined);
      base.set(key, offline ?? specForm);
      const r = offline ? await run(offline, tmp, admin) : first!;
      const aliases = new Map<string, boolean>();
      for (const alias of item.aliases) {
        const aliased = [...item.path.slice(0, -1), alias];
        const h = await runProgram("meshctl", [...aliased, "--help"]);
        aliases.set(alias, h.status === 0 && help !== undefined && h.stdout.split("\n").slice(1).join("\n") === helpRun.stdout.split("\n").slice(1).join("\n"));
      }
      commands.set(key, { ...(help ? { help } : {}), run: r, offline: offline !== undefined, aliases, named: false });
    }),
  );

  const flagTasks: Array<() => Promise<void>> = [];
  for (const item of items) {
    const key = item.path.join(" ");
    const command = commands.get(key);
    for (const flag of item.flags) {
      const option = item.path.length === 0 ? rootHelp.options.get(flag.flag) : (command?.help?.options.get(flag.flag) ?? rootHelp.options.get(flag.flag));
      flagTasks.push(async () => {
        // The global flags: with `version`, the one command that needs nothing.
        const args = item.path.length === 0 ? ["version"] : (base.get(key) ?? [...item.path]);
        if (item.path.length > 0 && command?.run.status === 69 && !command.offline) {
          flags.set(`${key}|${flag.flag}`, { ...(option ? { documented: option } : {}) });
          return;
        }
        const given = flagValue(flag, option, f);
        const r = await run([...args, ...given], tmp, admin);
        flags.set(`${key}|${flag.flag}`, { ...(option ? { documented: option } : {}), run: r, given: given.map((g) => g.split(tmp).join("<tmp>")) });
      });
    }
  }
  await pool(3, flagTasks);
  return { commands, flags, rootHelp, env: await probeEnv(ctVariables, tmp) };
}
