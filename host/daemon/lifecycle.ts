import { EXIT_FAILURE, EXIT_OK } from "./exit_codes.ts";

// What the lifecycle needs of telemetry's Logger and ScopedLogger
// (host/telemetry/logger.ts), declared here: host/daemon sits below
// host/telemetry, which reads the daemon's flags and version.
interface Logger {
  readonly jsonOnStdout: boolean;
  close(): void;
}
interface ScopedLogger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/**
 * The listening line every daemon prints on stdout once its listeners are
 * bound: `<prefix>{json}` (tools and tests read the bound ports from it).
 * With `--log_as_json` logging to stdout, the line is a JSON log record
 * instead (`msg` is the prefix, `listeners` the ports), so stdout stays JSON
 * lines only.
 */
export function announceListening(prefix: string, listeners: unknown, logger?: Logger): void {
  if (logger?.jsonOnStdout) {
    process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), level: "info", scope: "default", msg: prefix.trim(), listeners })}\n`);
    return;
  }
  process.stdout.write(`${prefix}${JSON.stringify(listeners)}\n`);
}

export interface SignalHandlers {
  /** SIGTERM/SIGINT: drain and stop; resolves when done (a rejection is logged and exits 1). */
  stop: (signal: string) => Promise<void>;
  /**
   * SIGHUP: reread the daemon's configuration, when it has any (false: it
   * has none, which is logged). A daemon is never stopped by SIGHUP.
   */
  reload?: () => boolean;
}

/**
 * The signal conventions of every daemon (docs/daemon-reference.md
 * "Conventions"): SIGTERM and SIGINT drain and stop (a second one while
 * draining is ignored), SIGHUP reloads. Returns the exit code once stopped.
 */
export function handleSignals(handlers: SignalHandlers, log: ScopedLogger): Promise<number> {
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info(`${signal} received: shutting down`);
      handlers.stop(signal).then(
        () => resolve(EXIT_OK),
        (e: Error) => {
          log.error(`shutdown failed: ${e.message}`);
          resolve(EXIT_FAILURE);
        },
      );
    };
    process.on("SIGTERM", () => stop("SIGTERM"));
    process.on("SIGINT", () => stop("SIGINT"));
    process.on("SIGHUP", () => {
      if (stopping) return;
      if (!handlers.reload) log.info("SIGHUP received: this daemon has no configuration to reload (flags are read at start)");
      else if (handlers.reload()) log.info("SIGHUP received: configuration reloaded");
      else log.warn("SIGHUP received: the configuration was not reloaded (see the errors above); the last good configuration stays");
    });
  });
}

/**
 * The tail of every daemon's `server` command: print the listening line,
 * then on SIGTERM or SIGINT close the server and exit 0 (1 if closing
 * fails); SIGHUP calls `reload` when given.
 */
export function serveUntilSignal(
  prefix: string,
  listeners: unknown,
  close: () => Promise<void>,
  log: ScopedLogger,
  logger: Logger,
  reload?: () => boolean,
): void {
  // Handlers first: a signal sent as soon as the listening line is read must find them.
  const stopped = handleSignals({ stop: close, ...(reload ? { reload } : {}) }, log);
  announceListening(prefix, listeners, logger);
  void stopped.then((code) => {
    if (code === EXIT_OK) log.info("stopped");
    logger.close();
    process.exit(code);
  });
}
