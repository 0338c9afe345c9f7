import { Agent, type IncomingMessage, type ServerResponse, createServer, request as httpRequest } from "node:http";
import { request as httpsRequest, type RequestOptions as HttpsRequestOptions } from "node:https";
import type { Server } from "node:http";
import type { Socket } from "node:net";
import type { HeaderList, LocalReply } from "../wasm/abi_types.ts";
import { endToEndHeaders, requestHead, toOutgoing, toRawHeaders, upstreamHeaders } from "./hop_by_hop.ts";
import { type FramingRefusal, type RequestFraming, frameObject, hasBody } from "./request_framing.ts";
import type { FilterHost, RequestDecision } from "./filter_host.ts";
import { connectionFacts, RequestProperties } from "./request_properties.ts";
import { type TargetRefusal, normalizeRequestTarget } from "./request_target.ts";
import type { PathNormalization } from "../security/authz/path.ts";
import { DEFAULT_LISTENER_LIMITS, ListenerGuard, type ListenerLimits } from "./listener_limits.ts";
import type { UpstreamOutcome } from "./outlier_detection.ts";
import { countRequestOnConnection } from "./requests_per_connection.ts";
import type { SafetyNet } from "../daemon/safety_net.ts";
import { UPSTREAM_MAX_HEADER_BYTES, isFinalStatus, upstreamFailureReply, upstreamProtocolError } from "./upstream_failure.ts";

/**
 * Where a listener sends a request: host and port (and the local address to
 * dial from), or null when it has nowhere to go. `socket` is the connection
 * the request came on.
 */
export type UpstreamResolver = (authority: string, socket: Socket) => { host: string; port: number; localAddress?: string } | null;

export interface HttpProxyOptions {
  name: "inbound" | "outbound";
  filter: FilterHost;
  upstream: UpstreamResolver;
  /** Extra properties the filter may read (e.g. the destination service). */
  properties?: (authority: string) => Readonly<Record<string, string>>;
  onLog: (level: "debug" | "info" | "warn" | "error", message: string) => void;
  /**
   * Security stage before the filter (only with the security path on,
   * docs/security.md): a local reply, or the headers to go on with and more
   * properties for the filter (`connection.*`, `mesh.authn_payload`).
   */
  beforeFilter?: (req: IncomingMessage, headers: HeaderList) => Promise<SecurityStageResult>;
  /** Routing with client TLS (security path on): replaces `upstream` when it returns a value. */
  route?: (request: { authority: string; method: string; path: string; headers: HeaderList }) => RouteDecision;
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

/** Where a request goes: a host and port, plain or with TLS options (mutual TLS origination), or a local reply; `delayMs`: an injected fault delay first. */
export type RouteDecision =
  | { kind: "forward"; host: string; port: number; tls?: HttpsRequestOptions; actions?: ForwardActions; upstream?: UpstreamControl }
  | { kind: "reply"; reply: LocalReply; delayMs?: number };

/** What a VirtualService route does to a forwarded request (host/proxy/security_policy.ts RouteActions). */
export interface ForwardActions {
  readonly path?: string;
  readonly authority?: string;
  readonly setHeaders: ReadonlyArray<readonly [string, string]>;
  readonly addHeaders: ReadonlyArray<readonly [string, string]>;
  readonly removeHeaders: readonly string[];
  readonly responseHeaders: ReadonlyArray<{
    readonly set: Readonly<Record<string, string>>;
    readonly add: Readonly<Record<string, string>>;
    readonly remove: readonly string[];
  }>;
  readonly timeoutMs?: number;
  /** Retries of a request without a body on connection failure and on the 5xx/gateway-error/retriable codes retryOn names. */
  readonly retries?: { readonly attempts: number; readonly perTryTimeoutMs?: number; readonly retryOn: readonly string[] };
  readonly delayMs?: number;
  readonly mirror?: { readonly host: string; readonly port: number };
}

/**
 * The DestinationRule limits of the request's upstream cluster: admission
 * (connection-pool limits; a local reply when over them) and, once the
 * exchange is over, its outcome (outlier detection). `cancelled`: the
 * client went away before an answer; the slot is freed, nothing recorded.
 */
export interface UpstreamControl {
  admit(): Promise<(outcome: UpstreamOutcome | "cancelled") => void> | LocalReply;
  /** `connectionPool.http.maxRequestsPerConnection`: a connection is closed after serving this many. */
  readonly maxRequestsPerConnection?: number;
}

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

/** One request on its way through the listener. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  props: RequestProperties;
  /** The normalized request target's path and authority. */
  path: string;
  authority: string;
  /** How the request's body is delimited; the upstream gets it framed so, whatever the headers say. */
  framing: RequestFraming;
  started: bigint;
  accessLogHint?: boolean;
}

/**
 * An HTTP/1.1 listener that runs each request through the filter and
 * forwards it over keep-alive connections, streaming both bodies (nothing is
 * buffered whole), dropping hop-by-hop headers, and counting the sizes the
 * report needs. A request the filter decides at once goes on in the same
 * turn of the event loop; properties are answered when the filter reads them.
 */
export class HttpProxy {
  readonly server: Server;
  readonly guard: ListenerGuard;
  readonly stats: ListenerStats = { requests: 0, localReplies: 0, upstreamErrors: 0, active: 0, rejectedTargets: {}, rejectedFraming: {} };
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 256 });
  /** Each request's exchange, once it has one (its access record reads the outcome). */
  private readonly exchanges = new WeakMap<ServerResponse, Exchange>();
  /** Each local reply's reason, for its access record. */
  private readonly localReplyDetails = new WeakMap<ServerResponse, string>();
  /** Connections whose framing was refused: nothing after that request is read or forwarded. */
  private readonly refusedConnections = new WeakSet<object>();

  constructor(private readonly options: HttpProxyOptions) {
    this.guard = new ListenerGuard(options.limits ?? DEFAULT_LISTENER_LIMITS);
    this.server = createServer(this.guard.httpServerOptions(), (req, res) => this.onRequest(req, res));
    this.guard.guardHttp(this.server, options.acceptedElsewhere === true);
    if (!options.acceptedElsewhere) this.guard.guardAccepts(this.server);
  }

  close(): void {
    this.agent.destroy();
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
    const startedAt = Date.now();
    const startNs = process.hrtime.bigint();
    res.once("close", () => {
      this.stats.active--;
      this.guard.requestDone(req);
      this.options.onAccess?.(this.accessRecord(req, res, startedAt, startNs));
    });
    if (!admitted) {
      // Over the concurrent-request limit: refused before the filter, as an overloaded Envoy does.
      this.reply(res, { status: 503, details: "overload", body: "proxy overloaded", headers: [], grpcStatus: -1 });
      req.resume();
      return;
    }
    const failed = (e: unknown) => {
      this.options.onLog("error", `${this.options.name}: ${(e as Error).message}`);
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    };
    try {
      this.handle(req, res)?.catch(failed);
    } catch (e) {
      failed(e);
    }
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
    // Every later stage reads the request through this one list.
    const headers: HeaderList = [
      [":method", req.method ?? "GET"],
      [":path", requestTarget.path],
      [":authority", authority],
      [":scheme", "http"],
    ];
    for (const pair of head.headers) headers.push(pair);
    const props = new RequestProperties(connectionFacts(socket), req.httpVersion === "1.1" ? "HTTP/1.1" : `HTTP/${req.httpVersion}`);
    props.route = o.properties?.(authority);
    const exchange: Exchange = { req, res, props, path: requestTarget.path, authority, framing: head.framing, started };
    if (o.onAccess) this.exchanges.set(res, exchange);
    if (o.beforeFilter) return this.securityStage(exchange, headers, o.beforeFilter);
    return this.filter(exchange, headers);
  }

  private async securityStage(x: Exchange, headers: HeaderList, stage: NonNullable<HttpProxyOptions["beforeFilter"]>): Promise<void> {
    const result = await stage(x.req, headers);
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
    const decision = this.options.filter.onRequestHeaders(headers, x.props, this.options.beforeFilter === undefined);
    if (decision instanceof Promise) return decision.then((d) => this.afterFilter(x, headers, d));
    return this.afterFilter(x, headers, decision);
  }

  private afterFilter(x: Exchange, headers: HeaderList, decision: RequestDecision): Promise<void> | undefined {
    const { req, res } = x;
    const o = this.options;
    if (decision.kind === "reply") {
      this.reply(res, decision.reply);
      req.resume();
      this.complete(decision.id, x, decision.reply.status, 0, Buffer.byteLength(decision.reply.body));
      return;
    }
    if (decision.kind === "failed" && !decision.failOpen) {
      this.reply(res, { status: 503, details: "wasm_fail_stream", body: "filter failed", headers: [], grpcStatus: -1 });
      req.resume();
      return;
    }
    const id = decision.kind === "continue" ? decision.id : 0;
    const forwarded = decision.kind === "continue" ? decision.headers : headers;
    const path = headerValue(forwarded, ":path") ?? x.path;
    const method = headerValue(forwarded, ":method") ?? req.method ?? "GET";
    const routedAuthority = headerValue(forwarded, ":authority") ?? x.authority;
    const routed = o.route?.({ authority: routedAuthority, method, path, headers: forwarded });
    const delayMs = routed?.kind === "reply" ? routed.delayMs : routed?.actions?.delayMs;
    if (delayMs) return sleep(delayMs).then(() => this.route(x, id, forwarded, method, path, routedAuthority, routed));
    this.route(x, id, forwarded, method, path, routedAuthority, routed);
    return undefined;
  }

  private route(
    x: Exchange,
    id: number,
    forwarded: HeaderList,
    method: string,
    path: string,
    routedAuthority: string,
    routed: RouteDecision | undefined,
  ): void {
    const { req, res } = x;
    const o = this.options;
    if (routed?.kind === "reply") {
      this.reply(res, routed.reply);
      req.resume();
      this.complete(id, x, routed.reply.status, 0, 0);
      return;
    }
    const target = routed ?? o.upstream(routedAuthority, req.socket);
    if (!target) {
      this.reply(res, { status: 502, details: "no_upstream", body: "no upstream for this host", headers: [], grpcStatus: -1 });
      req.resume();
      this.complete(id, x, 502, 0, 0);
      return;
    }
    const control = routed?.kind === "forward" ? routed.upstream : undefined;
    // Sends the request upstream; `finish` tells the connection pool how the request ended.
    const forward = (finish: (outcome: UpstreamOutcome | "cancelled") => void): void => {
      const actions = routed?.kind === "forward" ? routed.actions : undefined;
      const outgoing = actions ? toOutgoing(forwarded) : undefined;
      if (outgoing && actions) {
        outgoing.host = actions.authority ?? x.authority;
        applyRequestHeaders(outgoing, actions);
        frameObject(outgoing, method, x.framing);
      }
      // Without route actions the headers go to Node as a flat list (request_framing.ts frames either).
      const headerList = outgoing ?? upstreamHeaders(forwarded, method, x.authority, x.framing);
      const upstreamPath = actions?.path ?? path;
      let requestBytes = 0;
      let responseBytes = 0;
      const bodiless = !hasBody(x.framing);
      if (!bodiless) {
        req.on("data", (chunk: Buffer) => {
          requestBytes += chunk.length;
        });
      }
      const tlsOptions = routed?.kind === "forward" ? routed.tls : undefined;
      const send = tlsOptions ? httpsRequest : httpRequest;
      if (actions?.mirror && bodiless) {
        // Upstream's shadow: fire and forget, Host with a `-shadow` suffix.
        const m = actions.mirror;
        const shadow = httpRequest(
          { agent: this.agent, host: m.host, port: m.port, method, path: upstreamPath, headers: { ...outgoing, host: `${outgoing!.host}-shadow` } },
          (r) => r.resume(),
        );
        shadow.on("error", () => undefined);
        shadow.end();
      }
      let answered = false;
      const timer =
        actions?.timeoutMs !== undefined && actions.timeoutMs > 0
          ? setTimeout(() => {
              if (answered) return;
              answered = true;
              current?.destroy();
              finish(504);
              this.reply(res, { status: 504, details: "upstream_response_timeout", body: "upstream request timeout", headers: [], grpcStatus: -1 });
              this.complete(id, x, 504, requestBytes, 0);
            }, actions.timeoutMs)
          : undefined;
      if (timer) res.once("close", () => clearTimeout(timer));
      let current: ReturnType<typeof httpRequest> | undefined;
      const retryOn: ReadonlySet<string> = actions?.retries ? new Set(actions.retries.retryOn) : NO_RETRIES;
      const retriableStatus = (code: number) =>
        (retryOn.has("5xx") && code >= 500) || (retryOn.has("gateway-error") && (code === 502 || code === 503 || code === 504));
      const attempt = (left: number) => {
        const options = tlsOptions
          ? { ...tlsOptions, host: target.host, port: target.port, method, path: upstreamPath, headers: headerList, maxHeaderSize: UPSTREAM_MAX_HEADER_BYTES }
          : {
              agent: this.agent,
              host: target.host,
              port: target.port,
              ...("localAddress" in target && target.localAddress ? { localAddress: target.localAddress } : {}),
              method,
              path: upstreamPath,
              headers: headerList,
              maxHeaderSize: UPSTREAM_MAX_HEADER_BYTES,
            };
        // The upstream failed before a response began: retried when the route says so, else 502 (protocol error) or 503 (upstream_failure.ts).
        // Set once this attempt has given up or handed over to the next one: later events of its request are stale.
        let over = false;
        const failed = (e: NodeJS.ErrnoException) => {
          if (answered || over) return;
          over = true;
          if (bodiless && left > 0 && (retryOn.has("connect-failure") || retryOn.has("reset") || retryOn.has("5xx") || retryOn.has("gateway-error")))
            return attempt(left - 1);
          answered = true;
          if (timer) clearTimeout(timer);
          const reply = upstreamFailureReply(e);
          finish(reply.status === 502 ? 502 : "connect-failure");
          this.stats.upstreamErrors++;
          o.onLog("warn", `${o.name}: upstream ${target.host}:${target.port}: ${e.message}`);
          if (!res.headersSent) this.reply(res, reply);
          else res.destroy();
          this.complete(id, x, reply.status, requestBytes, 0);
        };
        const upstream = send(options, (up) => {
          if (answered || over) return void up.resume();
          if (res.headersSent || res.destroyed) {
            // The client's stream was already ended (the safety net): the answer has nowhere to go.
            answered = true;
            if (timer) clearTimeout(timer);
            up.destroy();
            finish("cancelled");
            return this.complete(id, x, res.statusCode, requestBytes, 0);
          }
          const status = up.statusCode;
          if (!isFinalStatus(status)) {
            up.destroy();
            return failed(upstreamProtocolError(`status ${JSON.stringify(up.statusCode)} is no final response status`));
          }
          if (bodiless && left > 0 && retriableStatus(status)) {
            over = true;
            up.resume();
            return attempt(left - 1);
          }
          try {
            let responseHeaders = endToEndHeaders(up.rawHeaders, id ? [[":status", String(status)]] : []);
            if (actions) responseHeaders = applyResponseHeaders(responseHeaders, actions);
            const filtered = id ? o.filter.onResponseHeaders(id, responseHeaders) : responseHeaders;
            // Throws on what Node will not write (a header value it calls invalid): nothing was sent yet.
            res.writeHead(status, toRawHeaders(filtered));
          } catch (e) {
            up.destroy();
            return failed(upstreamProtocolError(`response not relayable: ${(e as Error).message}`));
          }
          answered = true;
          if (timer) clearTimeout(timer);
          x.props.upstreamAddress = `${target.host}:${target.port}`;
          up.on("data", (chunk: Buffer) => {
            responseBytes += chunk.length;
          });
          up.pipe(res);
          up.on("end", () => {
            finish(status);
            this.complete(id, x, status, requestBytes, responseBytes);
          });
          // Reset or cut short after the headers went out: the client's stream is reset, as in Envoy.
          up.on("error", (e) => {
            finish(status);
            this.stats.upstreamErrors++;
            o.onLog("warn", `${o.name}: upstream ${target.host}:${target.port} response cut short: ${e.message}`);
            res.destroy();
            this.complete(id, x, status, requestBytes, responseBytes);
          });
        });
        // A 101 nobody asked for (the listener forwards no Upgrade): Node hands over the socket; it is closed, the client gets 502.
        upstream.on("upgrade", (_res, socket: Socket) => {
          socket.destroy();
          failed(upstreamProtocolError("unsolicited 101 Switching Protocols"));
        });
        current = upstream;
        if (control?.maxRequestsPerConnection) {
          const limit = control.maxRequestsPerConnection;
          const agent = (tlsOptions ? tlsOptions.agent : this.agent) as Agent | undefined;
          upstream.on("socket", (socket) => countRequestOnConnection(agent, socket as Socket, limit));
        }
        if (actions?.retries?.perTryTimeoutMs) upstream.setTimeout(actions.retries.perTryTimeoutMs, () => upstream.destroy(new Error("per-try timeout")));
        upstream.on("error", failed);
        if (bodiless) upstream.end();
        else {
          req.pipe(upstream);
          // The client left before its body was complete: the upstream must not take a cut body as whole (Envoy resets the stream).
          req.once("close", () => {
            if (!req.complete) upstream.destroy();
          });
        }
      };
      attempt(bodiless ? (actions?.retries?.attempts ?? 0) : 0);
    };
    if (control) {
      const admitted = control.admit();
      if (!(admitted instanceof Promise)) {
        this.reply(res, admitted);
        req.resume();
        this.complete(id, x, admitted.status, 0, 0);
        return;
      }
      // One close listener: before admission it marks the client gone, after it frees the slot.
      let closed = false;
      let finish: ((outcome: UpstreamOutcome | "cancelled") => void) | undefined;
      res.once("close", () => {
        closed = true;
        finish?.("cancelled");
      });
      void admitted.then((done) => {
        let finished = false;
        const once = (outcome: UpstreamOutcome | "cancelled") => {
          if (finished) return;
          finished = true;
          done(outcome);
        };
        finish = once;
        // The client left while the request waited for a connection.
        if (closed) return once("cancelled");
        forward(once);
      });
      return;
    }
    forward(() => undefined);
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
  private complete(id: number, x: Exchange, code: number, requestBytes: number, responseBytes: number): void {
    x.props.outcome = { code, requestBytes, responseBytes, durationNs: process.hrtime.bigint() - x.started };
    if (id) this.options.filter.finish(id);
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

const NO_RETRIES: ReadonlySet<string> = new Set();

function headerValue(headers: HeaderList, name: string): string | undefined {
  for (const [k, v] of headers) if (k === name) return v;
  return undefined;
}

/** A route's request header operations: set replaces, add appends, remove drops. */
function applyRequestHeaders(outgoing: Record<string, string | string[] | number | undefined>, a: ForwardActions): void {
  for (const name of a.removeHeaders) delete outgoing[name.toLowerCase()];
  for (const [k, v] of a.setHeaders) outgoing[k.toLowerCase()] = v;
  for (const [k, v] of a.addHeaders) {
    const name = k.toLowerCase();
    const prev = outgoing[name];
    outgoing[name] = prev === undefined ? v : [...(Array.isArray(prev) ? prev : [String(prev)]), v];
  }
}

function applyResponseHeaders(headers: HeaderList, a: ForwardActions): HeaderList {
  let out = [...headers];
  for (const ops of a.responseHeaders) {
    const removed = new Set(ops.remove.map((n) => n.toLowerCase()));
    const set = new Map(Object.entries(ops.set).map(([k, v]) => [k.toLowerCase(), v]));
    out = out.filter(([k]) => !removed.has(k.toLowerCase()) && !set.has(k.toLowerCase()));
    out.push(...set.entries(), ...Object.entries(ops.add).map(([k, v]) => [k.toLowerCase(), v] as [string, string]));
  }
  return out;
}
