import type { Writable } from "node:stream";
import type { LogLevel, LogScope } from "./global_flags.ts";

/**
 * meshctl's log lines, on stderr, under the spec 3 scopes and the levels of
 * `--log_output_level` (upstream's istioctl logs the same way): a line is
 * written when its level is at or above its scope's. Lines have the form of
 * the daemons' console logs, `<time>\t<level>\t[<scope>\t]<message>` (no
 * scope for `default`). What a command prints as its result or its
 * diagnostics (analyze's messages, validate's problems) is output, not log.
 */
const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3, fatal: 4, none: 5 };

export interface MeshctlLog {
  debug(scope: LogScope, message: string): void;
  info(scope: LogScope, message: string): void;
  warn(scope: LogScope, message: string): void;
  error(scope: LogScope, message: string): void;
  enabled(scope: LogScope, level: LogLevel): boolean;
}

export function meshctlLog(levels: Readonly<Record<LogScope, LogLevel>>, stderr: Writable, clock: () => Date = () => new Date()): MeshctlLog {
  const enabled = (scope: LogScope, level: LogLevel) => level !== "none" && RANK[level] >= RANK[levels[scope]];
  const emit = (level: LogLevel) => (scope: LogScope, message: string) => {
    if (!enabled(scope, level)) return;
    stderr.write(`${[clock().toISOString(), level, ...(scope === "default" ? [] : [scope]), message].join("\t")}\n`);
  };
  return { debug: emit("debug"), info: emit("info"), warn: emit("warn"), error: emit("error"), enabled };
}
