import { closeSync, openSync, writeSync } from "node:fs";
import { RotatingFile, type RotateOptions } from "./log_rotate.ts";
import { sourceFrame, sourceLocation } from "./source_frames.ts";

export const LOG_LEVELS = ["debug", "info", "warn", "error", "fatal", "none"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3, fatal: 4, none: 5 };

export const DEFAULT_SCOPE = "default";

/** Everything the common logging flags decide (spec 2, "Common logging flags"). */
export interface LoggingOptions {
  asJson: boolean;
  /** Scopes whose lines carry the caller's file:line; may contain `all`. */
  callerScopes: ReadonlySet<string>;
  /** Level per scope; `default` applies to scopes not listed. */
  outputLevels: ReadonlyMap<string, LogLevel>;
  /** Lines at or above the level of their scope carry a stack trace. */
  stacktraceLevels: ReadonlyMap<string, LogLevel>;
  /** `stdout`, `stderr` or file paths. */
  targets: readonly string[];
  rotate?: RotateOptions;
}

export type LogFields = Record<string, unknown>;

interface Sink {
  write(line: string): void;
  close(): void;
}

function sinkFor(target: string): Sink {
  if (target === "stdout") return { write: (l) => process.stdout.write(l), close: () => {} };
  if (target === "stderr") return { write: (l) => process.stderr.write(l), close: () => {} };
  const fd = openSync(target, "a");
  return { write: (l) => writeSync(fd, l), close: () => closeSync(fd) };
}

/** The stack below the logger's own frames, each named by its TypeScript source. */
function callerFrames(): string[] {
  const lines = new Error().stack?.split("\n").slice(1) ?? [];
  return lines
    .filter((l) => l.includes("at "))
    .map(sourceFrame)
    .filter((l) => !/[/\\]telemetry[/\\]logger\.ts:/.test(l));
}

/**
 * A logger with named scopes whose levels can change at run time (ControlZ).
 * Console lines are `<time>\t<level>\t<scope>\t<message>[\t<key>=<value>…]`
 * (scope omitted for `default`); JSON lines are
 * `{"time":…,"level":…,"scope":…,"msg":…,…fields}`.
 */
export class Logger {
  private readonly levels = new Map<string, LogLevel>();
  private readonly sinks: Sink[];

  constructor(
    readonly scopes: readonly string[],
    private readonly options: LoggingOptions,
    private readonly clock: () => Date = () => new Date(),
  ) {
    for (const [scope, level] of options.outputLevels) this.levels.set(scope, level);
    this.sinks = options.targets.map(sinkFor);
    if (options.rotate) this.sinks.push(new RotatingFile(options.rotate, () => this.clock().getTime()));
  }

  /** Whether log lines are JSON and go to stdout (then every line on stdout must be JSON). */
  get jsonOnStdout(): boolean {
    return this.options.asJson && this.options.targets.includes("stdout");
  }

  levelOf(scope: string): LogLevel {
    return this.levels.get(scope) ?? this.levels.get(DEFAULT_SCOPE) ?? "info";
  }

  /** Current level of every scope (except the pseudo-scope `all`). */
  currentLevels(): Record<string, LogLevel> {
    const out: Record<string, LogLevel> = {};
    for (const s of this.scopes) if (s !== "all") out[s] = this.levelOf(s);
    return out;
  }

  /** Sets the level of one scope, or of every scope for `all`. Throws on unknown scopes or levels. */
  setLevel(scope: string, level: string): void {
    if (!(LOG_LEVELS as readonly string[]).includes(level)) throw new Error(`unknown log level ${JSON.stringify(level)} (known: ${LOG_LEVELS.join(", ")})`);
    if (scope === "all") {
      for (const s of this.scopes) if (s !== "all") this.levels.set(s, level as LogLevel);
      return;
    }
    if (!this.scopes.includes(scope)) throw new Error(`unknown log scope ${JSON.stringify(scope)} (known: ${this.scopes.join(", ")})`);
    this.levels.set(scope, level as LogLevel);
  }

  scope(name: string): ScopedLogger {
    return new ScopedLogger(this, name);
  }

  enabled(scope: string, level: LogLevel): boolean {
    return level !== "none" && RANK[level] >= RANK[this.levelOf(scope)];
  }

  emit(scope: string, level: LogLevel, msg: string, fields?: LogFields): void {
    if (!this.enabled(scope, level)) return;
    const time = this.clock().toISOString();
    const withCaller = this.options.callerScopes.has("all") || this.options.callerScopes.has(scope);
    const stackLevel = this.options.stacktraceLevels.get(scope) ?? this.options.stacktraceLevels.get(DEFAULT_SCOPE) ?? "none";
    const frames = withCaller || (stackLevel !== "none" && RANK[level] >= RANK[stackLevel]) ? callerFrames() : [];
    const caller = withCaller && frames.length > 0 ? sourceLocation(frames[0]) : undefined;
    const stack = stackLevel !== "none" && RANK[level] >= RANK[stackLevel] ? frames.join("\n") : undefined;
    let line: string;
    if (this.options.asJson) {
      line = JSON.stringify({ time, level, scope, msg, ...(caller ? { caller } : {}), ...fields, ...(stack ? { stack } : {}) });
    } else {
      const parts = [time, level];
      if (scope !== DEFAULT_SCOPE) parts.push(scope);
      if (caller) parts.push(caller);
      parts.push(msg);
      for (const [k, v] of Object.entries(fields ?? {})) parts.push(`${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
      line = parts.join("\t");
      if (stack) line += `\n${stack}`;
    }
    for (const sink of this.sinks) sink.write(`${line}\n`);
  }

  close(): void {
    for (const sink of this.sinks) sink.close();
  }
}

export class ScopedLogger {
  constructor(
    private readonly logger: Logger,
    readonly name: string,
  ) {}

  enabled(level: LogLevel): boolean {
    return this.logger.enabled(this.name, level);
  }

  debug(msg: string, fields?: LogFields): void {
    this.logger.emit(this.name, "debug", msg, fields);
  }

  info(msg: string, fields?: LogFields): void {
    this.logger.emit(this.name, "info", msg, fields);
  }

  warn(msg: string, fields?: LogFields): void {
    this.logger.emit(this.name, "warn", msg, fields);
  }

  error(msg: string, fields?: LogFields): void {
    this.logger.emit(this.name, "error", msg, fields);
  }

  fatal(msg: string, fields?: LogFields): void {
    this.logger.emit(this.name, "fatal", msg, fields);
  }
}
