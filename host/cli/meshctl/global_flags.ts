import { type Command, InvalidArgumentError, Option } from "commander";
import type { MeshctlIo } from "./io.ts";
import { orchestratorFlagGiven } from "./needs_orchestrator.ts";
import { DEFAULT_ROOT_NAMESPACE } from "../../config/mesh_config.ts";

/**
 * The global flags of spec 3, accepted by every meshctl command before or
 * after the command name (`meshctl -i foo validate …` = `meshctl validate … -i foo`).
 * Subcommands must not define options with these names or short letters
 * (-i, -c, -n); read them with `globalFlags(command)`.
 */
export interface GlobalFlags {
  /** Mesh system namespace (root namespace of mesh-wide policies). */
  meshNamespace: string;
  /** Scope → level, after `--log_output_level`. */
  logOutputLevel: Readonly<Record<LogScope, LogLevel>>;
  /** Config namespace; "" when not given (commands then use their own default, e.g. `default`). */
  namespace: string;
}

export const DEFAULT_MESH_NAMESPACE = DEFAULT_ROOT_NAMESPACE;
export const LOG_LEVELS = ["debug", "info", "warn", "error", "fatal", "none"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_SCOPES = [
  "ads",
  "all",
  "analysis",
  "attributes",
  "authn",
  "cache",
  "anchorclient",
  "configmapcontroller",
  "default",
  "cloudca",
  "grpcAdapter",
  "installer",
  "mcp",
  "model",
  "patch",
  "processing",
  "rbac",
  "resource",
  "sds",
  "secretfetcher",
  "source",
  "stsclient",
  "tpath",
  "translator",
  "util",
  "validation",
  "vault",
] as const;
export type LogScope = (typeof LOG_SCOPES)[number];
export const DEFAULT_LOG_OUTPUT_LEVEL = "default:info,validation:error,processing:error,source:error,analysis:warn,installer:warn,translator:warn";

/**
 * Parses `<scope>:<level>,…` (a bare `<level>` sets `default`). Scopes not
 * named keep the level of `default`; `all:<level>` sets every scope.
 */
export function parseLogOutputLevel(text: string): Readonly<Record<LogScope, LogLevel>> {
  const named: Partial<Record<LogScope, LogLevel>> = {};
  for (const item of text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0)) {
    const colon = item.lastIndexOf(":");
    const scope = (colon < 0 ? "default" : item.slice(0, colon)) as LogScope;
    const level = (colon < 0 ? item : item.slice(colon + 1)) as LogLevel;
    if (!LOG_SCOPES.includes(scope)) throw new InvalidArgumentError(`unknown scope ${JSON.stringify(scope)} (scopes: ${LOG_SCOPES.join(", ")})`);
    if (!LOG_LEVELS.includes(level))
      throw new InvalidArgumentError(`unknown level ${JSON.stringify(level)} for scope ${scope} (levels: ${LOG_LEVELS.join(", ")})`);
    if (scope === "all") for (const s of LOG_SCOPES) named[s] = level;
    else named[scope] = level;
  }
  const base = named.default ?? "info";
  return Object.freeze(Object.fromEntries(LOG_SCOPES.map((s) => [s, named[s] ?? base]))) as Record<LogScope, LogLevel>;
}

/** The global flags that select an orchestrator: a value given is refused (exit 69, needs_orchestrator.ts). */
const ORCHESTRATOR_FLAGS = [
  ["context", "--context"],
  ["orchconfig", "--orchconfig"],
] as const;

/** Adds the global flags to the root program; `exit` ends the run (a flag that needs an orchestrator: 69, nothing done). */
export function addGlobalFlags(program: Command, io: MeshctlIo, exit: (code: number) => never): Command {
  program.hook("preAction", (_root, action) => {
    const o = action.optsWithGlobals() as Record<string, string | undefined>;
    for (const [key, flag] of ORCHESTRATOR_FLAGS) {
      if (o[key]) exit(orchestratorFlagGiven(commandPath(action), flag, io.stderr));
    }
  });
  return program
    .addOption(new Option("--context <name>", "orchestrator config context name (needs an orchestrator API: refused, exit 69)").default(""))
    .addOption(new Option("-i, --meshNamespace <namespace>", "mesh system namespace").default(DEFAULT_MESH_NAMESPACE))
    .addOption(new Option("-c, --orchconfig <file>", "orchestrator config file (needs an orchestrator API: refused, exit 69)").default(""))
    .addOption(
      new Option("--log_output_level <levels>", `comma list of <scope>:<level>; levels: ${LOG_LEVELS.join(", ")}`)
        .default(DEFAULT_LOG_OUTPUT_LEVEL)
        .argParser((value: string) => {
          parseLogOutputLevel(value);
          return value;
        }),
    )
    .addOption(new Option("-n, --namespace <namespace>", "config namespace").default(""));
}

/** The global flags as seen from any command (its own options and its ancestors'). */
export function globalFlags(command: Command): GlobalFlags {
  const o = command.optsWithGlobals() as Record<string, string>;
  return {
    meshNamespace: o.meshNamespace || DEFAULT_MESH_NAMESPACE,
    logOutputLevel: parseLogOutputLevel(o.log_output_level ?? DEFAULT_LOG_OUTPUT_LEVEL),
    namespace: o.namespace ?? "",
  };
}

/** `proxy-config cluster`, `x authz check`: the command's words below the program. */
function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(" ");
}
