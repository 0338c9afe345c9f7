import { type LogFields, Logger, type LogLevel } from "../../../telemetry/logger.ts";

/**
 * Keeps a component's last log lines (warnings and worse) in memory: the
 * sidecars and the CA of a simulate run would otherwise all write to
 * meshctl's stderr. The lines go into the error when a component fails to start.
 */
export class MemoryLogger extends Logger {
  readonly lines: string[] = [];

  constructor(scopes: readonly string[]) {
    super(scopes, { asJson: false, callerScopes: new Set(), outputLevels: new Map([["default", "warn"]]), stacktraceLevels: new Map(), targets: [] });
  }

  override emit(scope: string, level: LogLevel, msg: string, fields?: LogFields): void {
    if (!this.enabled(scope, level)) return;
    this.lines.push(`${level}\t${scope === "default" ? "" : `${scope}\t`}${msg}${fields ? `\t${JSON.stringify(fields)}` : ""}`);
    if (this.lines.length > 200) this.lines.shift();
  }
}
