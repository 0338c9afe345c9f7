import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import type { Server } from "node:http";
import type { Socket } from "node:net";
import type { SafetyNet } from "../../daemon/safety_net.ts";
import type { PathNormalization } from "../../security/authz/path.ts";
import type { HeaderList, LocalReply } from "../../wasm/abi_types.ts";
import type { FilterHost, RequestDecision } from "../filters/filter_host.ts";
import type { ConnectionStage } from "../listener/connection.ts";
import { DEFAULT_LISTENER_LIMITS, ListenerGuard, type ListenerLimits } from "../listener_limits.ts";
import { RequestProperties, connectionFacts } from "../request_properties.ts";
import type { RouteDecision, RouteRequest } from "../router/route_decision.ts";
import { type Downstream, UpstreamRequests } from "../router/upstream_request.ts";
import { requestHead, toOutgoing } from "./hop_by_hop.ts";
import { type FramingRefusal, type RequestFraming, hasBody } from "./request_framing.ts";
import { type TargetRefusal, normalizeRequestTarget } from "./request_target.ts";

/**
 * Envoy's HTTP connection manager for one listener: each request is read
 * and checked at the edge (framing, target normalization, limits), runs
 * through the decoding filters (the security filter when the security path
 * is on, then the Wasm filter), is routed by the router and sent upstream
 * (router/upstream_request.ts); local replies and the access record are
 * written here.
 */

/** The security filter (authentication, authorization) of a listener, run before the Wasm filter. */
export interface SecurityFilter {
  decode(req: IncomingMessage, headers: HeaderList): Promise<SecurityStageResult>;
}

/** The router of a listener: where a request goes, or null when it has nowhere to go (502). */
export interface HttpRouter {
  route(request: RouteRequest): RouteDecision | null;
}

export interface HttpConnectionManagerOptions {
  name: "inbound" | "outbound";
  filter: FilterHost;
  router: HttpRouter;
  /** Extra properties the filter may read (e.g. the destination service). */
  properties?: (authority: string) => Readonly<Record<string, string>>;
  onLog: (level: "debug" | "info" | "warn" | "error", message: string) => void;
  /**
   * Security stage before the filter (only with the security path on,
   * docs/security.md): a local reply, or the headers to go on with and more
   * properties for the filter (`connection.*`, `mesh.authn_payload`).
   */
  security?: SecurityFilter;
  /** The listener's connection stage: each request's original destination, when its connection was redirected. */
  connections?: ConnectionStage;
  /** Mesh `pathNormalization` for the request target (read per request); default BASE. */
  pathNormalization?: () => PathNormalization;
  /** Timeouts and connection/request limits (listener_limits.ts); default DEFAULT_LISTENER_LIMITS. */
  limits?: ListenerLimits;
  /** True when another listener accepts the connections and hands them to `server` (mtls_listener.ts); it must then `guard.guardAccepts` that listener. */
  acceptedElsewhere?: boolean;
  /** Each request once its response is over or the client left (access logs, `--proxyAccessLogService`). */
  onAccess?: (record: AccessRecord) => void;
  /** The process's safety net (host/daemon/safety_net.ts): an uncaught error in a request's work ends that request only. */
  safetyNet?: Pick<SafetyNet, "run">;
}

/** What an access log needs of one request, gathered when it is over. */
export interface AccessRecord {
  listener: "inbound" | "outbound";
  /** When the request came in (ms since the epoch) and how long until its response was over. */
  startedAt: number;
  durationNs: bigint;
  downstreamRemote: { address: string; port: number };
  downstreamLocal: { address: string; port: number };
  /** `1.0` or `1.1`. */
  httpVersion: string;
  method: string;
  /** The normalized path and authority the listener routed by (the request as received, when it was refused at the edge). */
  path: string;
  authority: string;
  /** The request target as received, when normalization changed it. */
  originalPath?: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** 0 when the client left before a response began. */
  status: number;
  requestBodyBytes: number;
  responseBodyBytes: number;
  /** `host:port` of the upstream that answered. */
  upstream?: string;
  /** Why the proxy answered itself (`overload`, `upstream_connect_error`, `no_healthy_upstream`, …). */
  localReplyDetails?: string;
  /** An AUDIT AuthorizationPolicy matched the request. */
  accessLogHint?: boolean;
}

/** `accessLogHint`: an AUDIT policy matched (upstream's RBAC LOG: dynamic metadata `envoy.common` `access_log_hint`). */
export type SecurityStageResult =
  | { kind: "reply"; reply: LocalReply; accessLogHint?: boolean }
  | { kind: "continue"; headers: HeaderList; properties: Record<string, string>; mtls: boolean; accessLogHint?: boolean };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Counters of one listener, for /stats. */
export interface ListenerStats {
  requests: number;
  localReplies: number;
  upstreamErrors: number;
  active: number;
  /** Requests refused with 400 at the edge, by reason (request_target.ts). */
  rejectedTargets: Partial<Record<TargetRefusal, number>>;
  /** Requests refused (400/501) for their body framing, by Envoy's response code details (request_framing.ts). */
  rejectedFraming: Partial<Record<FramingRefusal, number>>;
}

/** What an exchange reports back to its listener. */
interface ExchangeOwner {
  reply(res: ServerResponse, reply: LocalReply): void;
  complete(x: Exchange, code: number, requestBytes: number, responseBytes: number): void;
  upstreamError(message: string): void;
}

/**
 * One request on its way through the listener; it is also the downstream
 * side the router sends upstream (one object per request, no closures).
 */
class Exchange implements Downstream {
  /** The filter's stream, 0 when the filter is not in the path (set once the filter decided). */
  id = 0;
  accessLogHint?: boolean;

  constructor(
    private readonly owner: ExchangeOwner,
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly props: RequestProperties,
    /** The normalized request target's path and authority. */
    readonly path: string,
    readonly authority: string,
    /** How the request's body is delimited; the upstream gets it framed so, whatever the headers say. */
    readonly framing: RequestFraming,
    readonly started: bigint,
  ) {}

  reply(reply: LocalReply): void {
    this.owner.reply(this.res, reply);
  }

  complete(code: number, requestBytes: number, responseBytes: number): void {
    this.owner.complete(this, code, requestBytes, responseBytes);
  }

  upstreamError(message: string): void {
    this.owner.upstreamError(message);
  }
}

/**
 * An HTTP/1.1 listener that runs each request through the filter and
 * forwards it over keep-alive connections, streaming both bodies (nothing is
 * buffered whole), dropping hop-by-hop headers, and counting the sizes the
 * report needs. A request the filter decides at once goes on in the same
 * turn of the event loop; properties are answered when the filter reads them.
 */
export class HttpConnectionManager {
  readonly server: Server;
  readonly guard: ListenerGuard;
  readonly stats: ListenerStats = { requests: 0, localReplies: 0, upstreamErrors: 0, active: 0, rejectedTargets: {}, rejectedFraming: {} };
  private readonly upstreams: UpstreamRequests;
  /** Each request's exchange, once it has one (its access record reads the outcome). */
  private readonly exchanges = new WeakMap<ServerResponse, Exchange>();
  /** Each local reply's reason, for its access record. */
  private readonly localReplyDetails = new WeakMap<ServerResponse, string>();
  /** Connections whose framing was refused: nothing after that request is read or forwarded. */
  private readonly refusedConnections = new WeakSet<object>();
  private readonly owner: ExchangeOwner = {
    reply: (res, reply) => this.reply(res, reply),
    complete: (x, code, requestBytes, responseBytes) => this.complete(x, code, requestBytes, responseBytes),
    upstreamError: (message) => {
      this.stats.upstreamErrors++;
      this.options.onLog("warn", `${this.options.name}: ${message}`);
    },
  };

  constructor(private readonly options: HttpConnectionManagerOptions) {
    this.upstreams = new UpstreamRequests(options.filter);
    this.guard = new ListenerGuard(options.limits ?? DEFAULT_LISTENER_LIMITS);
    this.server = createServer(this.guard.httpServerOptions(), (req, res) => this.onRequest(req, res));
    this.guard.guardHttp(this.server, options.acceptedElsewhere === true);
    if (!options.acceptedElsewhere) this.guard.guardAccepts(this.server);
  }

  close(): void {
    this.upstreams.close();
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    const net = this.options.safetyNet;
    if (net) net.run({ listener: this.options.name, end: () => this.endAfterUncaughtError(res) }, () => this.serve(req, res));
    else this.serve(req, res);
  }

  /** After an uncaught error in the request's work (the safety net): 500 when nothing was answered, else the stream is reset. */
  private endAfterUncaughtError(res: ServerResponse): void {
    if (res.writableEnded) return;
    if (res.headersSent) return void res.destroy();
    this.reply(res, { status: 500, details: "internal_error", body: "internal error", headers: [["connection", "close"]], grpcStatus: -1 });
  }

  private serve(req: IncomingMessage, res: ServerResponse): void {
    // A request Node parsed behind one whose framing was refused: its bytes have no trustworthy boundary.
    if (this.refusedConnections.has(req.socket)) return void res.destroy();
    this.stats.requests++;
    this.stats.active++;
    const admitted = this.guard.admitRequest(req);
    // 'close' comes once: a plain listener, without once()'s wrapper and removal.
    const onAccess = this.options.onAccess;
    if (onAccess) {
      const startedAt = Date.now();
      const startNs = process.hrtime.bigint();
      res.on("close", () => {
        this.requestOver(req);
        onAccess(this.accessRecord(req, res, startedAt, startNs));
      });
    } else res.on("close", () => this.requestOver(req));
    if (!admitted) {
      // Over the concurrent-request limit: refused before the filter, as an overloaded Envoy does.
      this.reply(res, { status: 503, details: "overload", body: "proxy overloaded", headers: [], grpcStatus: -1 });
      req.resume();
      return;
    }
    try {
      this.handle(req, res)?.catch((e) => this.failed(res, e));
    } catch (e) {
      this.failed(res, e);
    }
  }

  private requestOver(req: IncomingMessage): void {
    this.stats.active--;
    this.guard.requestDone(req);
  }

  /** A request's handling threw or rejected: 500 when nothing was answered, else the stream is reset. */
  private failed(res: ServerResponse, e: unknown): void {
    this.options.onLog("error", `${this.options.name}: ${(e as Error).message}`);
    if (!res.headersSent) res.writeHead(500).end();
    else res.destroy();
  }

  private handle(req: IncomingMessage, res: ServerResponse): Promise<void> | undefined {
    const o = this.options;
    const started = process.hrtime.bigint();
    const socket = req.socket as Socket;
    const head = requestHead(req.rawHeaders, req.method, req.httpVersion);
    if (head.framing.kind === "refused") {
      const { status, details } = head.framing;
      this.stats.rejectedFraming[details] = (this.stats.rejectedFraming[details] ?? 0) + 1;
      o.onLog("debug", `${o.name}: ${status} for ${req.method} ${JSON.stringify(req.url)} from ${socket.remoteAddress}:${socket.remotePort}: ${details}`);
      // As Envoy after a codec error: answer, then close without reading further (the body's end is unknown).
      this.refusedConnections.add(socket);
      this.reply(res, { status, details, body: status === 501 ? "Not Implemented" : "Bad Request", headers: [["connection", "close"]], grpcStatus: -1 });
      res.once("finish", () => socket.destroySoon());
      return;
    }
    // No body: Node pushes the request's end right after this returns. One read() first means
    // the stream takes that end at once, not through the five ticks (readable, resume, end,
    // destroy, close) node:http's _dump would run it through once the response is done; nothing
    // reads a bodiless request after this, and one that does (resume, 'data') still gets its end.
    if (!hasBody(head.framing)) req.read();
    // The one normalization of the target: every later stage, and the upstream, see this path.
    const requestTarget = normalizeRequestTarget(req.method ?? "GET", req.url ?? "/", head.host, o.pathNormalization?.());
    if (!requestTarget.ok) {
      this.stats.rejectedTargets[requestTarget.reason] = (this.stats.rejectedTargets[requestTarget.reason] ?? 0) + 1;
      o.onLog(
        "debug",
        `${o.name}: 400 for ${req.method} ${JSON.stringify(req.url)} from ${socket.remoteAddress}:${socket.remotePort}: ${requestTarget.message}`,
      );
      this.reply(res, { status: 400, details: requestTarget.reason, body: "Bad Request", headers: [["connection", "close"]], grpcStatus: -1 });
      req.resume();
      return;
    }
    const authority = requestTarget.authority;
    // Every later stage reads the request through this one list (made at its size: no growth on the way).
    const fields = head.headers;
    const headers: HeaderList = new Array(4 + fields.length);
    headers[0] = [":method", req.method ?? "GET"];
    headers[1] = [":path", requestTarget.path];
    headers[2] = [":authority", authority];
    headers[3] = [":scheme", "http"];
    for (let i = 0; i < fields.length; i++) headers[4 + i] = fields[i];
    const props = new RequestProperties(connectionFacts(socket), req.httpVersion === "1.1" ? "HTTP/1.1" : `HTTP/${req.httpVersion}`);
    props.route = o.properties?.(authority);
    const exchange = new Exchange(this.owner, req, res, props, requestTarget.path, authority, head.framing, started);
    if (o.onAccess) this.exchanges.set(res, exchange);
    if (o.security) return this.securityStage(exchange, headers, o.security);
    return this.filter(exchange, headers);
  }

  private async securityStage(x: Exchange, headers: HeaderList, security: SecurityFilter): Promise<void> {
    const result = await security.decode(x.req, headers);
    if (result.accessLogHint) x.accessLogHint = true;
    if (result.kind === "reply") {
      this.reply(x.res, result.reply);
      x.req.resume();
      return;
    }
    x.props.mtls = result.mtls;
    x.props.stage = result.properties;
    return this.filter(x, result.headers);
  }

  private filter(x: Exchange, headers: HeaderList): Promise<void> | undefined {
    // The listener's own list has lower-case names (requestHead); a security stage's is checked.
    const decision = this.options.filter.onRequestHeaders(headers, x.props, this.options.security === undefined);
    if (decision instanceof Promise) return decision.then((d) => this.afterFilter(x, headers, d));
    return this.afterFilter(x, headers, decision);
  }

  private afterFilter(x: Exchange, headers: HeaderList, decision: RequestDecision): Promise<void> | undefined {
    const { req, res } = x;
    const o = this.options;
    if (decision.kind === "reply") {
      this.reply(res, decision.reply);
      req.resume();
      x.id = decision.id;
      this.complete(x, decision.reply.status, 0, Buffer.byteLength(decision.reply.body));
      return;
    }
    if (decision.kind === "failed" && !decision.failOpen) {
      this.reply(res, { status: 503, details: "wasm_fail_stream", body: "filter failed", headers: [], grpcStatus: -1 });
      req.resume();
      return;
    }
    x.id = decision.kind === "continue" ? decision.id : 0;
    const forwarded = decision.kind === "continue" ? decision.headers : headers;
    const path = headerValue(forwarded, ":path") ?? x.path;
    const method = headerValue(forwarded, ":method") ?? req.method ?? "GET";
    const routedAuthority = headerValue(forwarded, ":authority") ?? x.authority;
    const destination = o.connections?.originalDestination(req.socket);
    const routed = o.router.route(
      destination
        ? { authority: routedAuthority, method, path, headers: forwarded, destination }
        : { authority: routedAuthority, method, path, headers: forwarded },
    );
    const delayMs = routed?.kind === "reply" ? routed.delayMs : routed?.actions?.delayMs;
    if (delayMs) return sleep(delayMs).then(() => this.route(x, forwarded, method, path, routed));
    this.route(x, forwarded, method, path, routed);
    return undefined;
  }

  private route(x: Exchange, forwarded: HeaderList, method: string, path: string, routed: RouteDecision | null): void {
    const { req, res } = x;
    if (routed?.kind === "reply") {
      this.reply(res, routed.reply);
      req.resume();
      this.complete(x, routed.reply.status, 0, 0);
      return;
    }
    const target = routed;
    if (!target) {
      this.reply(res, { status: 502, details: "no_upstream", body: "no upstream for this host", headers: [], grpcStatus: -1 });
      req.resume();
      this.complete(x, 502, 0, 0);
      return;
    }
    this.upstreams.send(x, x.id, forwarded, method, path, target);
  }

  private reply(res: ServerResponse, reply: LocalReply): void {
    // Already answered or reset (the safety net ended it): nothing more to write.
    if (res.headersSent || res.destroyed) return;
    this.stats.localReplies++;
    if (reply.details && this.options.onAccess) this.localReplyDetails.set(res, reply.details);
    const headers = toOutgoing(reply.headers);
    headers["content-length"] = Buffer.byteLength(reply.body);
    if (!headers["content-type"]) headers["content-type"] = "text/plain";
    res.writeHead(reply.status, headers).end(reply.body);
  }

  // The report needs the outcome: response.code, sizes and duration answer from here on (the access record reads it too).
  private complete(x: Exchange, code: number, requestBytes: number, responseBytes: number): void {
    x.props.outcome = { code, requestBytes, responseBytes, durationNs: process.hrtime.bigint() - x.started };
    if (x.id) this.options.filter.finish(x.id);
  }

  private accessRecord(req: IncomingMessage, res: ServerResponse, startedAt: number, startNs: bigint): AccessRecord {
    const x = this.exchanges.get(res);
    const socket = req.socket;
    const outcome = x?.props.outcome;
    const details = this.localReplyDetails.get(res);
    const url = req.url ?? "/";
    return {
      listener: this.options.name,
      startedAt,
      durationNs: process.hrtime.bigint() - startNs,
      downstreamRemote: { address: socket.remoteAddress ?? "", port: socket.remotePort ?? 0 },
      downstreamLocal: { address: socket.localAddress ?? "", port: socket.localPort ?? 0 },
      httpVersion: req.httpVersion,
      method: req.method ?? "GET",
      path: x?.path ?? url,
      authority: x?.authority ?? req.headers.host ?? "",
      ...(x && x.path !== url ? { originalPath: url } : {}),
      headers: req.headers,
      status: res.headersSent ? res.statusCode : 0,
      requestBodyBytes: outcome?.requestBytes ?? 0,
      responseBodyBytes: outcome?.responseBytes ?? (details !== undefined ? Number(res.getHeader("content-length") ?? 0) : 0),
      ...(x?.props.upstreamAddress ? { upstream: x.props.upstreamAddress } : {}),
      ...(details !== undefined ? { localReplyDetails: details } : {}),
      ...(x?.accessLogHint ? { accessLogHint: true } : {}),
    };
  }
}

function headerValue(headers: HeaderList, name: string): string | undefined {
  for (const [k, v] of headers) if (k === name) return v;
  return undefined;
}
