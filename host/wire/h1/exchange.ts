// One request and its response on the HTTP/1.1 client: what the caller
// holds (write the body, end it, pause or drop the response, give up) while
// the pool finds it a connection, and the callbacks it hears back.
import { AsyncResource } from "node:async_hooks";
import type { RequestHeaders } from "./request_head.ts";
import type { ResponseHead } from "./response_head.ts";

export interface ExchangeHandlers {
  /** The final response head; `wholeBody`: the whole body when it came with the head (then neither `data` nor `end` follows). */
  response(head: ResponseHead, wholeBody: Buffer | undefined): void;
  data(chunk: Buffer): void;
  /** The response body is complete. */
  end(): void;
  /** The exchange failed (before or after the head); nothing else follows. */
  error(e: NodeJS.ErrnoException): void;
  /** A request-body write that returned false has been flushed. */
  drain(): void;
}

export interface ExchangeRequest {
  readonly method: string;
  readonly path: string;
  /** The fields, framing field included (Content-Length or `Transfer-Encoding: chunked`). */
  readonly headers: RequestHeaders;
  /** How the body is written: none (the head is the whole request), as is (Content-Length), or in chunks. */
  readonly body: "none" | "length" | "chunked";
  /** `maxRequestsPerConnection`: the connection is closed after serving this many. */
  readonly maxRequestsPerConnection?: number;
}

/** What the connection an exchange runs on does for it. */
export interface ExchangeCarrier {
  writeBody(data: Buffer, last: boolean): boolean;
  pause(): void;
  resume(): void;
  setTimeout(ms: number, onTimeout: () => void): void;
  abandon(exchange: Exchange): void;
}

const IDEMPOTENT: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"]);

export class Exchange {
  /** The head, written when the exchange gets its connection. */
  readonly head: string;
  /**
   * The async context the exchange was made in: its callbacks run in it, not
   * in the context of whichever exchange opened the connection (as Node's
   * client runs each response's callbacks in its request's context), so
   * AsyncLocalStorage (the agent's safety net) sees the right request.
   */
  readonly scope = new AsyncResource("H1EXCHANGE", { requireManualDestroy: true });
  /** The pool's record of where it goes. */
  origin: unknown;
  /** The connection it runs on, once it has one. */
  carrier: ExchangeCarrier | undefined;
  /** Over: completed, failed or given up; later calls do nothing. */
  over = false;
  /** The rest of the response is read and dropped (the connection may be reused). */
  discarding = false;
  /** Body written before a connection was found. */
  private early: Buffer[] | undefined;
  private earlyEnd = false;
  private paused = false;
  private timeout: { ms: number; onTimeout: () => void } | undefined;
  /** May be sent again on a fresh connection when a reused one fails before any response byte (bodiless, idempotent; once). */
  retryable: boolean;

  constructor(
    readonly request: ExchangeRequest,
    head: string,
    readonly handlers: ExchangeHandlers,
  ) {
    this.head = head;
    this.retryable = request.body === "none" && IDEMPOTENT.has(request.method);
  }

  /** Writes request body bytes; false: wait for `drain`. */
  write(data: Buffer): boolean {
    if (this.over || data.length === 0) return true;
    if (this.carrier) return this.carrier.writeBody(data, false);
    (this.early ??= []).push(data);
    return false;
  }

  /** The request body is complete. */
  end(): void {
    if (this.over) return;
    if (this.carrier) this.carrier.writeBody(EMPTY, true);
    else this.earlyEnd = true;
  }

  /** Stops reading the response until resume(). */
  pause(): void {
    this.paused = true;
    this.carrier?.pause();
  }

  resume(): void {
    this.paused = false;
    this.carrier?.resume();
  }

  /** Drops the rest of the response: read and thrown away, nothing more is heard. */
  discard(): void {
    this.discarding = true;
    this.resume();
  }

  /** An inactivity timeout on the exchange's connection (as a socket timeout), while the exchange lasts. */
  setTimeout(ms: number, onTimeout: () => void): void {
    const inScope = () => this.deliver(onTimeout);
    this.timeout = { ms, onTimeout: inScope };
    this.carrier?.setTimeout(ms, inScope);
  }

  /** Gives up: the connection is closed (its state is unknown), nothing more is heard. */
  destroy(): void {
    if (this.over) return;
    this.over = true;
    this.carrier?.abandon(this);
    this.carrier = undefined;
  }

  /**
   * Runs one of the handlers in the exchange's context. A handler that
   * throws (a bug upstream of here) ends the exchange, and its error is
   * thrown again on the next tick in the exchange's context, so the process's
   * uncaught-error handling sees it as this request's; false then (the
   * connection's state is unknown: it is closed).
   */
  deliver<A extends unknown[]>(fn: (...args: A) => void, ...args: A): boolean {
    try {
      this.scope.runInAsyncScope(fn, this.handlers, ...args);
      return true;
    } catch (e) {
      this.over = true;
      this.carrier = undefined;
      this.scope.runInAsyncScope(rethrowNextTick, undefined, e);
      return false;
    }
  }

  /** Called by the connection that takes the exchange: what was asked before it came. */
  attached(carrier: ExchangeCarrier): void {
    this.carrier = carrier;
    if (this.timeout) carrier.setTimeout(this.timeout.ms, this.timeout.onTimeout);
    if (this.paused) carrier.pause();
    const early = this.early;
    this.early = undefined;
    let flushed = true;
    if (early) for (let i = 0; i < early.length; i++) flushed = carrier.writeBody(early[i], this.earlyEnd && i === early.length - 1);
    else if (this.earlyEnd) carrier.writeBody(EMPTY, true);
    if (early && flushed && !this.earlyEnd) this.deliver(this.handlers.drain);
  }
}

const EMPTY = Buffer.alloc(0);

function rethrowNextTick(e: unknown): void {
  process.nextTick(rethrow, e);
}

function rethrow(e: unknown): never {
  throw e;
}
