import { type AsyncHook, createHook, executionAsyncResource } from "node:async_hooks";

/**
 * The process-wide safety net of a data-path daemon (issue 25): an error
 * nothing caught, thrown or rejected anywhere in the work a request set off
 * (its callbacks, timers, promises), is logged with its stack and counted,
 * the request it belongs to is ended (500 when nothing was answered yet,
 * else its stream reset), and the process goes on serving every other
 * request. An uncaught error outside any request (start-up, configuration,
 * a bug in the daemon's own plumbing) still ends the process with exit
 * code 1, as an unhandled error does: a daemon in an unknown state must not
 * linger. Which work belongs to a request is tracked as AsyncLocalStorage
 * tracks its store (RequestScopes): `run` marks a request's handling, and
 * every callback and promise it creates carries the mark.
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
  private readonly scopes = new RequestScopes();
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
    return this.scopes.run(scope, f);
  }

  /** Takes the process's uncaught exceptions and unhandled rejections (once per process). */
  install(proc: NodeJS.Process = process): void {
    proc.on("uncaughtException", (e) => this.handle(e, "uncaught exception"));
    proc.on("unhandledRejection", (reason) => this.handle(reason, "unhandled rejection"));
  }

  /** What the process hooks call; public for the tests of the policy itself. */
  handle(error: unknown, kind: string): void {
    const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
    const request = this.scopes.current();
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

/**
 * Which request each piece of async work belongs to, as AsyncLocalStorage
 * propagates its store on Node 20 (an init hook: a resource created while
 * another runs carries that one's mark), kept in a WeakMap beside the
 * resources instead of a symbol-keyed property on each: the property gave
 * every object Node's HTTP path handles (ticks, write requests, sockets'
 * messages, promises) a second hidden class, which made that code's property
 * accesses polymorphic and its optimized code deoptimize ("wrong map"). A
 * resource created outside any request gets no entry.
 */
export class RequestScopes {
  private readonly marks = new WeakMap<object, RequestScope>();
  private hook: AsyncHook | undefined;

  /** Runs `f` with `scope` as the mark of the work running now and of all it creates. */
  run<T>(scope: RequestScope, f: () => T): T {
    if (this.hook === undefined) {
      const marks = this.marks;
      this.hook = createHook({
        init(_asyncId, _type, _triggerAsyncId, resource: object) {
          const mark = marks.get(executionAsyncResource());
          if (mark !== undefined) marks.set(resource, mark);
        },
      }).enable();
    }
    const resource = executionAsyncResource();
    const before = this.marks.get(resource);
    if (before === scope) return f();
    this.marks.set(resource, scope);
    try {
      return f();
    } finally {
      if (before === undefined) this.marks.delete(resource);
      else this.marks.set(resource, before);
    }
  }

  /** The mark of the work running now (undefined outside any request). */
  current(): RequestScope | undefined {
    return this.hook === undefined ? undefined : this.marks.get(executionAsyncResource());
  }
}
