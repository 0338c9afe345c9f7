import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The process-wide safety net of a data-path daemon (issue 25): an error
 * nothing caught, thrown or rejected anywhere in the work a request set off
 * (its callbacks, timers, promises), is logged with its stack and counted,
 * the request it belongs to is ended (500 when nothing was answered yet,
 * else its stream reset), and the process goes on serving every other
 * request. An uncaught error outside any request (start-up, configuration,
 * a bug in the daemon's own plumbing) still ends the process with exit
 * code 1, as an unhandled error does: a daemon in an unknown state must not
 * linger. Which work belongs to a request is tracked by AsyncLocalStorage:
 * `run` marks a request's handling, and every callback and promise it
 * creates carries the mark.
 */

/** What the net knows of the request an error escaped from. */
export interface RequestScope {
  /** Names where the error came from in the log (`inbound`, `outbound`). */
  readonly listener: string;
  /** Ends the request after an uncaught error: answer 500 or reset it; must not throw. */
  end(error: unknown): void;
}

export interface SafetyNetLog {
  error(message: string): void;
  fatal(message: string): void;
}

export class SafetyNet {
  private readonly scope = new AsyncLocalStorage<RequestScope>();
  private caughtErrors = 0;

  constructor(
    private readonly log: SafetyNetLog,
    private readonly exit: (code: number) => void = (code) => process.exit(code),
  ) {}

  /** Uncaught errors of request paths so far (the admin `server.uncaught_request_errors`). */
  get caught(): number {
    return this.caughtErrors;
  }

  /** Runs `f` (a request's handling) so that an error escaping any work it starts is the request's. */
  run<T>(scope: RequestScope, f: () => T): T {
    return this.scope.run(scope, f);
  }

  /** Takes the process's uncaught exceptions and unhandled rejections (once per process). */
  install(proc: NodeJS.Process = process): void {
    proc.on("uncaughtException", (e) => this.handle(e, "uncaught exception"));
    proc.on("unhandledRejection", (reason) => this.handle(reason, "unhandled rejection"));
  }

  /** What the process hooks call; public for the tests of the policy itself. */
  handle(error: unknown, kind: string): void {
    const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
    const request = this.scope.getStore();
    if (!request) {
      this.log.fatal(`${kind} outside any request: ${text}`);
      this.exit(1);
      return;
    }
    this.caughtErrors++;
    this.log.error(`${request.listener}: ${kind} in a request path, request ended, serving on (${this.caughtErrors} so far): ${text}`);
    try {
      request.end(error);
    } catch {
      // Ending the request is best effort; the net itself must never throw.
    }
  }
}
