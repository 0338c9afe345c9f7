import { type Command, InvalidArgumentError, Option } from "commander";
import { intFlag, parseBoolFlag } from "../daemon/flags.ts";
import { DEFAULT_SCOPE, LOG_LEVELS, type LogLevel, type LoggingOptions } from "./logger.ts";

/**
 * Logs go to stderr by default (upstream: stdout): stdout carries the
 * programs' data (the listening line, `version`, `request` answers), so the
 * two never mix (docs/daemon-reference.md "Conventions").
 */
const DEFAULT_TARGETS: readonly string[] = Object.freeze(["stderr"]);

/** Adds the common logging flags of every daemon subcommand (spec 2, "Common logging flags"). */
export function addLoggingFlags(cmd: Command): Command {
  return cmd
    .addOption(new Option("--log_as_json [bool]", "JSON log output instead of console format").argParser(parseBoolFlag).default(false))
    .option("--log_caller <scopes>", "comma-separated scopes that include caller info; `all` for every scope", "")
    .option("--log_output_level <levels>", "comma list <scope>:<level>; level one of debug, info, warn, error, fatal, none", "default:info")
    .option("--log_rotate <path>", "path of the optional rotating log file", "")
    .option("--log_rotate_max_age <days>", "days before rotation; 0 = no limit", intFlag(0, 2 ** 31 - 1), 30)
    .option("--log_rotate_max_backups <n>", "backups kept; 0 = no limit", intFlag(0, 2 ** 31 - 1), 1000)
    .option("--log_rotate_max_size <megabytes>", "size in megabytes at which the log file rotates", intFlag(0, Number.MAX_SAFE_INTEGER), 104857600)
    .option("--log_stacktrace_level <levels>", "comma list <scope>:<level> where stack traces are captured", "default:none")
    .addOption(
      new Option("--log_target <path>", "output paths (repeatable); stdout and stderr are special values")
        .argParser((v: string, prev: string[]) => (prev === DEFAULT_TARGETS ? [v] : [...prev, v]))
        .default(DEFAULT_TARGETS, "[stderr]"),
    );
}

/** Parses `scope:level,scope:level` (a bare level is the default scope's; `all:level` sets every scope). */
export function parseLevelList(text: string, scopes: readonly string[], flag: string): Map<string, LogLevel> {
  const out = new Map<string, LogLevel>();
  for (const item of text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const colon = item.lastIndexOf(":");
    const scope = colon < 0 ? DEFAULT_SCOPE : item.slice(0, colon);
    const level = colon < 0 ? item : item.slice(colon + 1);
    if (!(LOG_LEVELS as readonly string[]).includes(level))
      throw new InvalidArgumentError(`${flag}: unknown level ${JSON.stringify(level)} in ${JSON.stringify(item)} (known: ${LOG_LEVELS.join(", ")})`);
    if (!scopes.includes(scope)) throw new InvalidArgumentError(`${flag}: unknown scope ${JSON.stringify(scope)} (known: ${scopes.join(", ")})`);
    if (scope === "all") for (const s of scopes) out.set(s, level as LogLevel);
    else out.set(scope, level as LogLevel);
  }
  return out;
}

/** Typed logging options from parsed commander options; throws InvalidArgumentError naming the flag. */
export function loggingOptionsFrom(opts: Record<string, unknown>, scopes: readonly string[]): LoggingOptions {
  const callerScopes = new Set(
    String(opts.log_caller ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
  );
  for (const s of callerScopes) {
    if (!scopes.includes(s)) throw new InvalidArgumentError(`--log_caller: unknown scope ${JSON.stringify(s)} (known: ${scopes.join(", ")})`);
  }
  const rotatePath = String(opts.log_rotate ?? "");
  return {
    asJson: opts.log_as_json === true,
    callerScopes,
    outputLevels: parseLevelList(String(opts.log_output_level ?? "default:info"), scopes, "--log_output_level"),
    stacktraceLevels: parseLevelList(String(opts.log_stacktrace_level ?? "default:none"), scopes, "--log_stacktrace_level"),
    targets: (opts.log_target as string[] | undefined) ?? DEFAULT_TARGETS,
    rotate: rotatePath
      ? {
          path: rotatePath,
          maxAgeDays: Number(opts.log_rotate_max_age ?? 30),
          maxBackups: Number(opts.log_rotate_max_backups ?? 1000),
          maxSizeMb: Number(opts.log_rotate_max_size ?? 104857600),
        }
      : undefined,
  };
}
