import type { Logger, ScopedLogger } from "../telemetry/logger.ts";
import { EXIT_FAILURE, EXIT_OK } from "./exit_codes.ts";

/**
 * The tail of every daemon's `server` command: print the stable listening
 * line (`<prefix>{json}`, which tools and tests read the bound ports from),
 * then on SIGTERM or SIGINT close the server and exit 0 (1 if closing fails).
 */
export function serveUntilSignal(prefix: string, listeners: unknown, close: () => Promise<void>, log: ScopedLogger, logger: Logger): void {
  process.stdout.write(`${prefix}${JSON.stringify(listeners)}\n`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info(`${signal} received: shutting down`);
    close().then(
      () => {
        log.info("stopped");
        logger.close();
        process.exit(EXIT_OK);
      },
      (e: Error) => {
        log.error(`shutdown failed: ${e.message}`);
        process.exit(EXIT_FAILURE);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}
