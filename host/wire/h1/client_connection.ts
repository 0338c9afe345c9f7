// One HTTP/1.1 client connection: a socket carrying one exchange at a time
// (no pipelining). It writes the request (head, then the body as framed),
// parses the response, and when the response is complete tells its pool
// whether it may carry another request: not after `Connection: close`, an
// HTTP/1.0 response without keep-alive, a close-delimited body, a request
// body left unfinished, bytes nobody asked for, or its request limit.
import type { Socket } from "node:net";
import { type Exchange, type ExchangeCarrier } from "./exchange.ts";
import { LAST_CHUNK, chunkFrame } from "./request_head.ts";
import type { ResponseHead } from "./response_head.ts";
import { type ResponseEvents, ResponseParser } from "./response_parser.ts";

export interface ConnectionOwner {
  /** The exchange completed and the connection may carry another. */
  reusable(connection: ClientConnection): void;
  /** The connection is closed (or closing): forget it. Called once. */
  gone(connection: ClientConnection): void;
  /** A reused connection failed before any response byte: send the (retryable) exchange again on a fresh one. */
  retry(exchange: Exchange): void;
}

export class ClientConnection implements ExchangeCarrier, ResponseEvents {
  /** Requests this connection has carried to completion. */
  served = 0;
  /** Close after this many requests. */
  limit = Number.POSITIVE_INFINITY;
  /** When it went idle, and how long it may stay so (the server's Keep-Alive hint, less a second). */
  idleSince = 0;
  idleLimitMs = Number.POSITIVE_INFINITY;
  private exchange: Exchange | undefined;
  private readonly parser: ResponseParser;
  private requestEnded = false;
  private keepAlive = true;
  private closed = false;
  private error: NodeJS.ErrnoException | undefined;
  private onTimeout: (() => void) | undefined;
  /** The response completed in the read being parsed: released once the read is over (bytes after it make the connection unusable). */
  private releasePending = false;

  constructor(
    readonly socket: Socket,
    private readonly owner: ConnectionOwner,
    maxHeaderBytes: number,
  ) {
    this.parser = new ResponseParser(this, maxHeaderBytes);
    socket.setNoDelay(true);
    socket.on("data", (d: Buffer) => this.onData(d));
    socket.on("drain", () => {
      const x = this.exchange;
      if (x && !x.over && !x.deliver(x.handlers.drain)) this.abandon(x);
    });
    socket.on("error", (e: NodeJS.ErrnoException) => {
      this.error ??= e;
    });
    socket.on("timeout", () => this.onTimeout?.());
    socket.on("end", () => this.onClose());
    socket.on("close", () => this.onClose());
  }

  get busy(): boolean {
    return this.exchange !== undefined;
  }

  /** Sends `exchange` on this connection. */
  start(exchange: Exchange): void {
    this.exchange = exchange;
    this.requestEnded = exchange.request.body === "none";
    const limit = exchange.request.maxRequestsPerConnection;
    if (limit !== undefined && limit < this.limit) this.limit = limit;
    this.parser.expect(exchange.request.method);
    const socket = this.socket;
    if (this.requestEnded) socket.write(exchange.head, "latin1");
    else {
      // The head waits for the body's first bytes of this turn, so a small body goes in the same packet.
      socket.cork();
      socket.write(exchange.head, "latin1");
      process.nextTick(uncork, socket);
    }
    exchange.attached(this);
  }

  writeBody(data: Buffer, last: boolean): boolean {
    const x = this.exchange;
    if (!x || this.requestEnded) return true;
    let flushed = true;
    const chunked = x.request.body === "chunked";
    if (data.length > 0) flushed = this.socket.write(chunked ? chunkFrame(data) : data);
    if (last) {
      this.requestEnded = true;
      if (chunked) flushed = this.socket.write(LAST_CHUNK);
    }
    return flushed;
  }

  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  setTimeout(ms: number, onTimeout: () => void): void {
    this.onTimeout = onTimeout;
    this.socket.setTimeout(ms);
  }

  /** The exchange gave up: the connection's state is unknown, so it is closed. */
  abandon(exchange: Exchange): void {
    if (this.exchange === exchange) this.exchange = undefined;
    else if (this.exchange !== undefined || this.closed) return;
    this.releasePending = false;
    this.destroy();
  }

  destroy(): void {
    this.keepAlive = false;
    this.socket.destroy();
    this.onClose();
  }

  // ResponseEvents (the parser's).
  head(head: ResponseHead, wholeBody: Buffer | undefined): void {
    if (!head.keepAlive) this.keepAlive = false;
    const hint = head.keepAliveTimeoutS;
    if (hint !== undefined) {
      this.idleLimitMs = hint * 1000 - 1000;
      if (this.idleLimitMs <= 0) this.keepAlive = false;
    }
    const x = this.exchange!;
    if (wholeBody !== undefined) this.complete(x);
    if (!x.discarding && !x.deliver(x.handlers.response, head, wholeBody)) this.abandon(x);
  }

  data(chunk: Buffer): void {
    const x = this.exchange;
    if (x && !x.discarding && !x.deliver(x.handlers.data, chunk)) this.abandon(x);
  }

  end(): void {
    const x = this.exchange;
    if (!x) return;
    this.complete(x);
    if (!x.discarding) x.deliver(x.handlers.end);
  }

  private complete(x: Exchange): void {
    x.over = true;
    x.carrier = undefined;
    this.exchange = undefined;
    this.served++;
    if (this.onTimeout) {
      this.onTimeout = undefined;
      this.socket.setTimeout(0);
    }
    if (!this.requestEnded || this.served >= this.limit) this.keepAlive = false;
    if (this.keepAlive && !this.closed) this.releasePending = true;
    else this.destroy();
  }

  /** Back to the pool unless something arrived after the response. */
  release(): void {
    if (this.closed || this.exchange) return;
    if (this.parser.extraneous) return this.destroy();
    this.socket.resume();
    this.owner.reusable(this);
  }

  private onData(d: Buffer): void {
    // Bytes nobody asked for (the connection is idle): whatever they are, its next response would be out of step.
    if (!this.exchange) return this.destroy();
    try {
      this.parser.push(d);
    } catch (e) {
      this.releasePending = false;
      return this.fail(e as NodeJS.ErrnoException);
    }
    if (this.releasePending) {
      this.releasePending = false;
      this.release();
    }
  }

  private onClose(): void {
    if (this.closed) return;
    this.closed = true;
    this.keepAlive = false;
    const x = this.exchange;
    if (x) {
      try {
        this.parser.closed();
      } catch (e) {
        this.fail(this.error ?? (e as NodeJS.ErrnoException));
      }
    }
    if (!this.socket.destroyed) this.socket.destroy();
    this.owner.gone(this);
  }

  private fail(e: NodeJS.ErrnoException): void {
    const x = this.exchange;
    this.exchange = undefined;
    const reused = this.served > 0;
    const untouched = this.parser.untouched;
    this.destroy();
    if (!x || x.over) return;
    x.carrier = undefined;
    if (reused && untouched && x.retryable && (e.code === "ECONNRESET" || e.code === "EPIPE")) {
      x.retryable = false;
      return this.owner.retry(x);
    }
    x.over = true;
    x.deliver(x.handlers.error, e);
  }
}

function uncork(socket: Socket): void {
  socket.uncork();
}
