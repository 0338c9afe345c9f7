import type { IncomingMessage, Server as HttpServer, ServerOptions } from "node:http";
import type { Server as NetServer, Socket } from "node:net";

/**
 * Bounded resources of one HTTP listener (issue 15 item 4; docs/sidecar.md
 * "Listener limits"): a slow or idle client cannot hold the listener, and a
 * flood of connections or requests is cut at a configured size while
 * requests already admitted keep being served.
 *
 * - header read timeout (Envoy `request_headers_timeout`): a connection that
 *   has not sent complete request headers this long after it opened, or after
 *   its next request began, gets 408 and is closed (slowloris);
 * - idle timeout (Envoy `common_http_protocol_options.idle_timeout`): a
 *   kept-alive connection with no request in flight is closed;
 * - maximum connections: at the limit, a new connection takes the place of
 *   the oldest connection still in its TLS handshake or before its first
 *   byte (issue 25 item 5: silent connections must not lock a port), else of
 *   the connection that has been without a request in flight the longest
 *   (idle, or still sending its headers); when every connection has a request
 *   in flight, the new one is closed at once;
 * - maximum concurrent requests (Envoy's circuit-breaker `max_requests`): a
 *   request over the limit is answered 503 without reaching the filter or
 *   the app.
 * 0 turns a limit off. Every enforcement is counted (`ListenerLimitStats`).
 */

export interface ListenerLimits {
  readonly headerReadTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly maxConnections: number;
  readonly maxConcurrentRequests: number;
}

/** Defaults: Envoy's edge recommendations and defaults (docs/sidecar.md "Listener limits"). */
export const DEFAULT_LISTENER_LIMITS: ListenerLimits = Object.freeze({
  headerReadTimeoutMs: 10_000,
  idleTimeoutMs: 3_600_000,
  maxConnections: 4096,
  maxConcurrentRequests: 1024,
});

export interface ListenerLimitStats {
  /** Connections closed on arrival: the limit was reached and every connection had a request in flight. */
  connectionsRefused: number;
  /** Connections without a request in flight closed to make room for a new one. */
  connectionsEvicted: number;
  /** Connections answered 408: headers not complete within the header read timeout (also TLS handshakes and first bytes that never came). */
  headerTimeouts: number;
  /** Kept-alive connections closed after the idle timeout. */
  idleTimeouts: number;
  /** Requests answered 503: the concurrent-request limit was reached. */
  requestsRefused: number;
  /** Requests that did not parse (answered 400 or 431 by the HTTP server). */
  malformedRequests: number;
}

interface HttpConnection {
  /** Requests in flight on the connection. */
  active: number;
  /** When it last had no request in flight (connected or finished a response). */
  idleSince: number;
  /** Kept alive: a response on it finished and no request is in flight; the idle timeout applies. */
  kept: boolean;
  /** The socket's bytesRead when it was last left idle: a next request that began since makes it busy again. */
  readAtIdle: number;
}

const RESPONSES: Record<string, string> = {
  ERR_HTTP_REQUEST_TIMEOUT: "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
  HPE_HEADER_OVERFLOW: "HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
};
const BAD_REQUEST = "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";

export class ListenerGuard {
  readonly stats: ListenerLimitStats = {
    connectionsRefused: 0,
    connectionsEvicted: 0,
    headerTimeouts: 0,
    idleTimeouts: 0,
    requestsRefused: 0,
    malformedRequests: 0,
  };
  /** Accepted sockets (the accepting server's), open or closing, in arrival order. */
  private readonly accepted = new Set<Socket>();
  /** Accepted sockets the HTTP server took (after a TLS handshake: the TLS socket on top); the others are still handshaking or silent. */
  private readonly served = new WeakMap<Socket, Socket>();
  /** Sockets the HTTP server serves (a TLS socket when the listener speaks TLS), in arrival order. */
  private readonly connections = new Map<Socket, HttpConnection>();
  private requestsInFlight = 0;

  constructor(
    readonly limits: ListenerLimits = DEFAULT_LISTENER_LIMITS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Options for `http.createServer`: Node's header timeout carries the header
   * read timeout. The idle timeout is the guard's own sweep (guardHttp), not
   * Node's keepAliveTimeout, which arms a socket timer (a Timeout, a bound
   * function, a timer-list insert) after every response and clears it at the
   * next request: per request, where the sweep costs per connection and
   * second.
   */
  httpServerOptions(): ServerOptions {
    const header = this.limits.headerReadTimeoutMs;
    return {
      headersTimeout: header,
      // No deadline on a whole request (Envoy's request_timeout is off by default); slow bodies hold a request slot, which is bounded.
      requestTimeout: 0,
      // How often Node looks for connections past the header deadline: the deadline is met within this.
      connectionsCheckingInterval: sweepIntervalMs(header),
      keepAliveTimeout: 0,
    };
  }

  /** The number of open connections and requests in flight (for /stats). */
  get open(): { connections: number; requests: number } {
    return { connections: this.accepted.size, requests: this.requestsInFlight };
  }

  /**
   * Counts and limits the connections of the server that accepts them (the
   * HTTP server itself, or the TLS/plain-text listener in front of it).
   */
  guardAccepts(server: NetServer): void {
    server.on("connection", (socket: Socket) => this.admitConnection(socket));
  }

  /** Header read and idle timeouts on the HTTP server, counted; per-connection request tracking for eviction. */
  guardHttp(server: HttpServer, fedByAnotherListener: boolean): void {
    server.on("connection", (socket: Socket) => {
      this.connections.set(socket, { active: 0, idleSince: this.now(), kept: false, readAtIdle: 0 });
      this.served.set(acceptedSocketOf(socket), socket);
      socket.once("close", () => this.connections.delete(socket));
    });
    const idle = this.limits.idleTimeoutMs;
    if (idle > 0) {
      // Met within a quarter of the timeout, at most a second late (Node's keepAliveTimeout allowed itself a second too).
      const sweep = setInterval(() => this.closeIdle(), sweepIntervalMs(idle));
      sweep.unref();
      server.once("close", () => clearInterval(sweep));
    }
    server.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => {
      const code = error.code ?? "";
      if (code === "ERR_HTTP_REQUEST_TIMEOUT") this.stats.headerTimeouts++;
      else if (code.startsWith("HPE_")) this.stats.malformedRequests++;
      if (code === "ECONNRESET" || !socket.writable) return void socket.destroy();
      // Requests read before the bad one keep their answers, in order (as Envoy, which reads a
      // connection's next request only once the previous response is out): the error answer follows them.
      // A connection whose last response said it closes (`Connection: close`, a refused framing) gets nothing more.
      afterPendingResponses(socket, (closing) => {
        if (socket.writable && !closing) socket.end(RESPONSES[code] ?? BAD_REQUEST);
        socket.destroy();
      });
    });
    // Node runs its header-deadline check once the server is listening; a server fed by another listener never is.
    if (fedByAnotherListener) server.emit("listening");
  }

  /** Counts a header deadline met outside the HTTP server (a TLS handshake, the first byte of a sniffed connection). */
  headerTimeout(): void {
    this.stats.headerTimeouts++;
  }

  /**
   * Registers a request; false when it is over the concurrent-request limit
   * (answer 503). The caller releases it with `requestDone` when its response
   * closes (one close listener per request serves the listener's counters too).
   */
  admitRequest(req: IncomingMessage): boolean {
    const connection = this.connections.get(req.socket);
    if (connection) connection.active++;
    this.requestsInFlight++;
    const max = this.limits.maxConcurrentRequests;
    if (max > 0 && this.requestsInFlight > max) {
      this.stats.requestsRefused++;
      return false;
    }
    return true;
  }

  /** The response of an admitted request closed. */
  requestDone(req: IncomingMessage): void {
    this.requestsInFlight--;
    const socket = req.socket;
    const connection = this.connections.get(socket);
    if (connection && --connection.active === 0) {
      connection.idleSince = this.now();
      connection.kept = true;
      connection.readAtIdle = socket.bytesRead;
    }
  }

  /**
   * The idle timeout (Envoy's idle_timeout, as Node's keepAliveTimeout did
   * it): a kept-alive connection with no request in flight and not a byte
   * read for `idleTimeoutMs` is closed. One whose next request has begun is
   * the header read timeout's (Node's headersTimeout); one that never
   * finished a request is too.
   */
  private closeIdle(): void {
    const deadline = this.now() - this.limits.idleTimeoutMs;
    for (const [socket, c] of this.connections) {
      if (!c.kept || c.active > 0 || socket.destroyed) continue;
      if (socket.bytesRead !== c.readAtIdle) {
        c.kept = false;
        continue;
      }
      if (c.idleSince > deadline) continue;
      this.stats.idleTimeouts++;
      this.connections.delete(socket);
      socket.destroy();
    }
  }

  private admitConnection(socket: Socket): void {
    const max = this.limits.maxConnections;
    if (max > 0 && this.accepted.size >= max) {
      const victim = this.oldestUnserved() ?? this.longestWithoutRequest();
      if (victim === undefined) {
        this.stats.connectionsRefused++;
        socket.destroy();
        return;
      }
      this.stats.connectionsEvicted++;
      this.connections.delete(victim);
      this.accepted.delete(acceptedSocketOf(victim));
      victim.destroy();
    }
    this.accepted.add(socket);
    socket.once("close", () => this.accepted.delete(socket));
  }

  /** The oldest accepted connection the HTTP server has not taken yet: a TLS handshake or a first byte still to come. */
  private oldestUnserved(): Socket | undefined {
    // Arrival order: the first one found is the oldest.
    for (const socket of this.accepted) if (!this.served.has(socket) && !socket.destroyed) return socket;
    return undefined;
  }

  private longestWithoutRequest(): Socket | undefined {
    let best: Socket | undefined;
    let since = Infinity;
    for (const [socket, c] of this.connections) {
      if (c.active === 0 && c.idleSince < since && !socket.destroyed) {
        best = socket;
        since = c.idleSince;
      }
    }
    return best;
  }
}

/** How often a deadline of `ms` is checked: a quarter of it, between 100 ms and a second (30 s when it is off). */
function sweepIntervalMs(ms: number): number {
  return ms > 0 ? Math.max(100, Math.min(1000, Math.floor(ms / 4))) : 30_000;
}

/** The accepted TCP socket under a connection the HTTP server serves: itself, or the one a TLS socket wraps. */
export function acceptedSocketOf(socket: Socket): Socket {
  return (socket as Socket & { _parent?: Socket | null })._parent ?? socket;
}

type ServedSocket = Socket & { _httpMessage?: { writableFinished?: boolean; _last?: boolean; once(event: "finish" | "close", f: () => void): unknown } | null };

/** Runs `then` once every response Node queued on the connection is written (none: at once); `closing`: one of them closes the connection. */
function afterPendingResponses(socket: Socket, then: (closing: boolean) => void, closing = false): void {
  const pending = (socket as ServedSocket)._httpMessage;
  const last = closing || pending?._last === true;
  if (!pending || pending.writableFinished || socket.destroyed) return then(last);
  let done = false;
  const next = () => {
    if (done) return;
    done = true;
    // Node hands the connection to the next queued response right after this one finishes.
    setImmediate(() => afterPendingResponses(socket, then, last));
  };
  pending.once("finish", next);
  pending.once("close", next);
}
