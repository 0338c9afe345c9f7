import { type Command, Option } from "commander";
import { parseBoolFlag } from "../flags.ts";
import { usageError } from "../program.ts";
import { GO_FALSE, GO_TRUE } from "../env_values.ts";

/**
 * A flag or environment variable of spec 2 that has no meaning in this
 * build (it needs an orchestrator API, MCP, a component we do not have …).
 * It exists so that giving it is refused with the reason, never silently
 * accepted without effect. Its default (the value upstream uses when it is
 * not given) is accepted: asking for what we do anyway changes nothing.
 */
export interface NotApplicable {
  /** `--flag` or `VARIABLE`. */
  readonly name: string;
  /** `bool` flags take `--flag`, `--flag=true|false`; others a value. */
  readonly type: "bool" | "value";
  /** The spec's default, as text (`false`, `""`, `10s`). */
  readonly default: string;
  /** Why it does not apply here, one clause: "needs an orchestrator API". */
  readonly reason: string;
  /** Other values that ask for what this build does anyway (accepted too). */
  readonly alsoAccepted?: readonly string[];
  /**
   * When the spec's default asks for something this build does not do: the
   * only values accepted (what it does); the default given explicitly is
   * refused like any other value.
   */
  readonly only?: readonly string[];
  /** The spec's one-letter form of the flag (`-n`), refused the same way. */
  readonly short?: string;
}

export const na = (name: string, type: "bool" | "value", dflt: string, reason: string, alsoAccepted?: readonly string[]): NotApplicable =>
  Object.freeze({ name, type, default: dflt, reason, ...(alsoAccepted ? { alsoAccepted } : {}) });

/** Go's strconv.ParseBool spellings. */

/** Whether a given value asks for the default (booleans as Go's strconv.ParseBool reads them). */
export function isDefaultValue(entry: NotApplicable, value: string): boolean {
  const accepted = entry.only ?? [entry.default, ...(entry.alsoAccepted ?? [])];
  if (entry.type === "bool") {
    return (accepted.includes("true") && GO_TRUE.includes(value)) || (accepted.includes("false") && GO_FALSE.includes(value));
  }
  return accepted.includes(value);
}

/** The one-line refusal. */
export function refusal(entry: NotApplicable): string {
  return `${entry.name}: not applicable here: ${entry.reason} (docs/daemon-reference.md)`;
}

/**
 * Adds the not-applicable flags to a command (shown in --help with their
 * reason) and refuses any of them given with a value other than the default:
 * one line naming the flag, exit 2, before the action runs.
 */
export function addNotApplicableFlags(cmd: Command, entries: readonly NotApplicable[], program: string): Command {
  const options = new Map<string, NotApplicable>();
  for (const e of entries) {
    const flags = e.short ? `${e.short}, ${e.name}` : e.name;
    const option =
      e.type === "bool"
        ? new Option(`${flags} [bool]`, `not applicable: ${e.reason}`).argParser(parseBoolFlag)
        : new Option(`${flags} <value>`, `not applicable: ${e.reason}`);
    cmd.addOption(option);
    options.set(option.attributeName(), e);
  }
  return cmd.hook("preAction", (_root, action) => {
    if (action !== cmd) return;
    for (const [key, e] of options) {
      if (cmd.getOptionValueSource(key) !== "cli") continue;
      const value = cmd.getOptionValue(key) as unknown;
      if (!isDefaultValue(e, String(value))) usageError(program, refusal(e));
    }
  });
}

/** Refuses (exit 2, one line) any not-applicable variable set to a value other than its default; empty counts as unset. */
export function refuseNotApplicableEnvironment(entries: readonly NotApplicable[], program: string, env: NodeJS.ProcessEnv = process.env): void {
  for (const e of entries) {
    const value = env[e.name];
    if (value === undefined || value === "") continue;
    if (!isDefaultValue(e, value)) usageError(program, `${e.name}=${JSON.stringify(value)}: ${refusal(e).slice(e.name.length + 2)}`);
  }
}
