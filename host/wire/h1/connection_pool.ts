// Keep-alive HTTP/1.1 connections per origin (host, port, local address),
// as Node's keep-alive Agent kept them and Envoy's HTTP/1 pool does: at most
// `maxConnectionsPerOrigin` each (requests beyond wait, in order), idle ones
// reused last-in first-out, forgotten the moment they close, end or fail.
//
// The race of a request written on a connection the server is closing is
// avoided as both do: an idle connection is dropped before the server's own
// idle timeout (its `Keep-Alive: timeout=N` hint less a second, as Node's
// agent does), and a request that still meets a reused connection's close
// before any response byte is sent once more on a fresh connection when
// that is safe (no body, an idempotent method: it cannot have been acted
// on twice, as browsers and undici retry). Idle connections do not keep
// the process alive. An origin reached over TLS (tls_connector.ts) has its
// connections keyed by its connector and TLS name too.
import { connect } from "node:net";
import { ClientConnection, type ConnectionOwner } from "./client_connection.ts";
import { Exchange, type ExchangeHandlers, type ExchangeRequest } from "./exchange.ts";
import { requestHead } from "./request_head.ts";
import type { TlsConnector, TlsOrigin } from "./tls_connector.ts";

export interface Origin {
  readonly host: string;
  readonly port: number;
  readonly localAddress?: string;
  /** TLS: its connections are made by its connector, with its SNI and identity check. */
  readonly tls?: TlsOrigin;
}

export interface ConnectionPoolOptions {
  /** Largest response head (and trailers); over it is a protocol error. */
  readonly maxHeaderBytes: number;
  readonly maxConnectionsPerOrigin?: number;
  /** Monotonic milliseconds. */
  readonly now?: () => number;
  /** How often idle connections past their time are closed. */
  readonly sweepIntervalMs?: number;
}

class OriginPool {
  /** Idle connections, the most recently used last. */
  readonly idle: ClientConnection[] = [];
  readonly waiting: Exchange[] = [];
  connections = 0;

  constructor(
    readonly key: string,
    readonly origin: Origin,
  ) {}
}

export class ConnectionPool {
  private readonly origins = new Map<string, OriginPool>();
  private readonly poolOf = new WeakMap<ClientConnection, OriginPool>();
  private readonly maxConnections: number;
  private readonly now: () => number;
  private sweeper: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly owner: ConnectionOwner = {
    reusable: (c) => this.reusable(c),
    gone: (c) => this.gone(c),
    retry: (x) => {
      if (x.origin instanceof OriginPool) this.assign(x.origin, x, true);
    },
  };

  constructor(private readonly options: ConnectionPoolOptions) {
    this.maxConnections = options.maxConnectionsPerOrigin ?? 256;
    this.now = options.now ?? (() => performance.now());
  }

  /** Sends a request to `origin`; throws a TypeError (nothing sent) when its method, target or a field is invalid. */
  request(origin: Origin, request: ExchangeRequest, handlers: ExchangeHandlers): Exchange {
    const exchange = new Exchange(request, requestHead(request.method, request.path, request.headers), handlers);
    const key = this.originKey(origin);
    let pool = this.origins.get(key);
    if (!pool) {
      pool = new OriginPool(key, origin);
      this.origins.set(key, pool);
    }
    exchange.origin = pool;
    this.assign(pool, exchange, false);
    return exchange;
  }

  /** Connections of every origin: open, and idle among them. */
  stats(): { open: number; idle: number } {
    let open = 0;
    let idle = 0;
    for (const p of this.origins.values()) {
      open += p.connections;
      idle += p.idle.length;
    }
    return { open, idle };
  }

  /** Closes every connection; requests in progress fail, waiting ones fail too. */
  close(): void {
    this.closed = true;
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    for (const pool of this.origins.values()) {
      for (const x of pool.waiting.splice(0)) failWaiting(x);
      for (const c of pool.idle.splice(0)) c.destroy();
    }
    for (const c of this.active) c.destroy();
  }

  private readonly active = new Set<ClientConnection>();

  private assign(pool: OriginPool, exchange: Exchange, fresh: boolean): void {
    if (this.closed) return failWaiting(exchange);
    if (!fresh) {
      const now = this.now();
      let c: ClientConnection | undefined;
      while ((c = pool.idle.pop())) {
        if (now - c.idleSince < c.idleLimitMs) {
          c.socket.ref();
          return c.start(exchange);
        }
        c.destroy();
      }
    }
    if (pool.connections >= this.maxConnections) {
      pool.waiting.push(exchange);
      return;
    }
    this.open(pool).start(exchange);
  }

  private open(pool: OriginPool): ClientConnection {
    const o = pool.origin;
    const socket = o.tls
      ? o.tls.connector.connect(pool.key, o.host, o.port, o.localAddress, o.tls)
      : connect({ host: o.host, port: o.port, ...(o.localAddress ? { localAddress: o.localAddress } : {}) });
    const c = new ClientConnection(socket, this.owner, this.options.maxHeaderBytes);
    pool.connections++;
    this.poolOf.set(c, pool);
    this.active.add(c);
    return c;
  }

  private reusable(c: ClientConnection): void {
    const pool = this.poolOf.get(c);
    if (!pool || this.closed) return c.destroy();
    const next = nextWaiting(pool);
    if (next) return c.start(next);
    c.idleSince = this.now();
    c.socket.unref();
    pool.idle.push(c);
    this.sweep();
  }

  private gone(c: ClientConnection): void {
    const pool = this.poolOf.get(c);
    if (!pool) return;
    this.poolOf.delete(c);
    this.active.delete(c);
    pool.connections--;
    const i = pool.idle.lastIndexOf(c);
    if (i >= 0) pool.idle.splice(i, 1);
    // A slot came free: the first waiting request gets a new connection.
    const next = nextWaiting(pool);
    if (next) this.assign(pool, next, false);
    if (pool.connections === 0 && pool.waiting.length === 0) this.origins.delete(pool.key);
  }

  /** Connectors by a number of this pool's, for the keys of their origins. */
  private readonly connectorIds = new WeakMap<TlsConnector, number>();
  private connectorsSeen = 0;

  private originKey(o: Origin): string {
    const key = o.localAddress ? `${o.host}|${o.port}|${o.localAddress}` : `${o.host}|${o.port}`;
    const tls = o.tls;
    if (!tls) return key;
    let id = this.connectorIds.get(tls.connector);
    if (id === undefined) this.connectorIds.set(tls.connector, (id = ++this.connectorsSeen));
    return `${key}|tls|${id}|${tls.servername}|${tls.name}`;
  }

  /** Closes idle connections past their time, while any is idle. */
  private sweep(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => {
      const now = this.now();
      let any = false;
      for (const pool of this.origins.values()) {
        for (const c of [...pool.idle]) if (now - c.idleSince >= c.idleLimitMs) c.destroy();
        if (pool.idle.length > 0) any = true;
      }
      if (!any && this.sweeper) {
        clearInterval(this.sweeper);
        this.sweeper = undefined;
      }
    }, this.options.sweepIntervalMs ?? 1000);
    this.sweeper.unref();
  }
}

/** The first waiting exchange not given up. */
function nextWaiting(pool: OriginPool): Exchange | undefined {
  let x: Exchange | undefined;
  while ((x = pool.waiting.shift())) if (!x.over) return x;
  return undefined;
}

function failWaiting(x: Exchange): void {
  if (x.over) return;
  x.over = true;
  x.deliver(x.handlers.error, Object.assign(new Error("connection pool closed"), { code: "ECONNRESET" }));
}
