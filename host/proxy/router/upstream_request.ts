import { Agent, request as httpRequest } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { HeaderList, LocalReply } from "../../wasm/abi_types.ts";
import { ConnectionPool } from "../../wire/h1/connection_pool.ts";
import type { Exchange, ExchangeHandlers } from "../../wire/h1/exchange.ts";
import type { RequestHeaders } from "../../wire/h1/request_head.ts";
import type { ResponseHead } from "../../wire/h1/response_head.ts";
import type { UpstreamOutcome } from "../cluster/outlier_detection.ts";
import type { FilterHost } from "../filters/filter_host.ts";
import { endToEndHeaders, toOutgoing, toRawHeaders, upstreamHeaders } from "../http/hop_by_hop.ts";
import { type RequestFraming, frameObject, hasBody } from "../http/request_framing.ts";
import { type WholeHead, prepareWholeHead, sendWhole } from "../http/whole_response.ts";
import type { RequestProperties } from "../request_properties.ts";
import { ResponseRelay } from "./response_relay.ts";
import type { ForwardActions, RouteDecision } from "./route_decision.ts";
import { UPSTREAM_MAX_HEADER_BYTES, isFinalStatus, upstreamFailureReply, upstreamProtocolError } from "./upstream_failure.ts";

/**
 * The router's upstream half: sends a routed request to its upstream host
 * over keep-alive connections on the project's own HTTP/1.1 client
 * (host/wire/h1: its connection pool per upstream, with
 * `maxRequestsPerConnection` counted per connection; mutual TLS ones made
 * by the workload certificate's connector, keyed by it) — streaming
 * both bodies, with the route's timeout, retries and mirror, admitted first
 * by the cluster's connection pool; the response goes back through the
 * filter. The downstream side is what the HTTP connection manager hands
 * over for the one request.
 */

/** The downstream request as the connection manager hands it to the router. */
export interface Downstream {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The normalized authority the request came with. */
  readonly authority: string;
  /** How the request's body is delimited; the upstream gets it framed so, whatever the headers say. */
  readonly framing: RequestFraming;
  readonly props: RequestProperties;
  /** A local reply (nothing when the response already began). */
  reply(reply: LocalReply): void;
  /** The exchange is over: its outcome, for the filter's report and the access log. */
  complete(code: number, requestBytes: number, responseBytes: number): void;
  /** The upstream failed (counted, logged). */
  upstreamError(message: string): void;
}

export class UpstreamRequests {
  /** Upstreams, plaintext and mutual TLS: the project's own HTTP/1.1 client (host/wire/h1). */
  private readonly pool = new ConnectionPool({ maxHeaderBytes: UPSTREAM_MAX_HEADER_BYTES });
  /** The mirror's (fire and forget) node:http agent, made on first use. */
  private mirrorAgent: Agent | undefined;

  constructor(private readonly filter: Pick<FilterHost, "onResponseHeaders">) {}

  close(): void {
    this.pool.close();
    this.mirrorAgent?.destroy();
  }

  /** Sends the request (filter stream `id`, 0 when the filter is not in the path) to the routed upstream. */
  send(down: Downstream, id: number, forwarded: HeaderList, method: string, path: string, target: Extract<RouteDecision, { kind: "forward" }>): void {
    const { req, res } = down;
    const control = target.upstream;
    // Sends the request upstream; `finish` tells the connection pool how the request ended.
    const forward = (finish: (outcome: UpstreamOutcome | "cancelled") => void): void => {
      const actions = target.actions;
      const outgoing = actions ? toOutgoing(forwarded) : undefined;
      if (outgoing && actions) {
        outgoing.host = actions.authority ?? down.authority;
        applyRequestHeaders(outgoing, actions);
        frameObject(outgoing, method, down.framing);
      }
      // Without route actions the headers go as a flat list (request_framing.ts frames either).
      const headerList = outgoing ?? upstreamHeaders(forwarded, method, down.authority, down.framing);
      const upstreamPath = actions?.path ?? path;
      let requestBytes = 0;
      const bodiless = !hasBody(down.framing);
      if (actions?.mirror && bodiless) {
        // Upstream's shadow: fire and forget, Host with a `-shadow` suffix.
        const m = actions.mirror;
        this.mirrorAgent ??= new Agent({ keepAlive: true, maxSockets: 256 });
        const shadow = httpRequest(
          { agent: this.mirrorAgent, host: m.host, port: m.port, method, path: upstreamPath, headers: { ...outgoing, host: `${outgoing!.host}-shadow` } },
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
              down.reply({ status: 504, details: "upstream_response_timeout", body: "upstream request timeout", headers: [], grpcStatus: -1 });
              down.complete(504, requestBytes, 0);
            }, actions.timeoutMs)
          : undefined;
      if (timer) res.once("close", () => clearTimeout(timer));
      // The attempt in progress, and how it reports a failure (before or after its response began).
      let current: Exchange | undefined;
      let broke: (e: NodeJS.ErrnoException) => void = () => undefined;
      const retryOn: ReadonlySet<string> = actions?.retries ? new Set(actions.retries.retryOn) : NO_RETRIES;
      const retriableStatus = (code: number) =>
        (retryOn.has("5xx") && code >= 500) || (retryOn.has("gateway-error") && (code === 502 || code === 503 || code === 504));
      const maxRequestsPerConnection = control?.maxRequestsPerConnection;
      const body = down.framing.kind === "chunked" ? "chunked" : bodiless ? "none" : "length";
      const attempt = (left: number) => {
        // Set once this attempt has given up or handed over to the next one: later events of its request are stale.
        let over = false;
        let relay: ResponseRelay | undefined;
        // The upstream failed before a response began: retried when the route says so, else 502 (protocol error) or 503 (upstream_failure.ts).
        const failed = (e: NodeJS.ErrnoException) => {
          if (answered || over) return;
          over = true;
          if (bodiless && left > 0 && (retryOn.has("connect-failure") || retryOn.has("reset") || retryOn.has("5xx") || retryOn.has("gateway-error")))
            return attempt(left - 1);
          answered = true;
          if (timer) clearTimeout(timer);
          const reply = upstreamFailureReply(e);
          finish(reply.status === 502 ? 502 : "connect-failure");
          down.upstreamError(`upstream ${target.host}:${target.port}: ${e.message}`);
          if (!res.headersSent) down.reply(reply);
          else res.destroy();
          down.complete(reply.status, requestBytes, 0);
        };
        const onResponse = (head: ResponseHead, whole: Buffer | undefined) => {
          if (answered || over) return void call.discard();
          if (res.headersSent || res.destroyed) {
            // The client's stream was already ended (the safety net): the answer has nowhere to go.
            answered = true;
            if (timer) clearTimeout(timer);
            call.destroy();
            finish("cancelled");
            return down.complete(res.statusCode, requestBytes, 0);
          }
          const status = head.status;
          if (!isFinalStatus(status)) {
            call.destroy();
            return failed(upstreamProtocolError(`status ${JSON.stringify(status)} is no final response status`));
          }
          if (bodiless && left > 0 && retriableStatus(status)) {
            over = true;
            call.discard();
            return attempt(left - 1);
          }
          // The plain case is written by whole_response.ts (head and whole body in one write), the rest by writeHead.
          let held: WholeHead | undefined;
          try {
            let responseHeaders = endToEndHeaders(head.rawHeaders, id ? [[":status", String(status)]] : []);
            if (actions) responseHeaders = applyResponseHeaders(responseHeaders, actions);
            const filtered = id ? this.filter.onResponseHeaders(id, responseHeaders) : responseHeaders;
            const raw = toRawHeaders(filtered);
            // Both throw on what Node will not write (a header value it calls invalid): nothing was sent yet.
            held = prepareWholeHead(res, status, raw);
            if (!held) res.writeHead(status, raw);
          } catch (e) {
            call.destroy();
            return failed(upstreamProtocolError(`response not relayable: ${(e as Error).message}`));
          }
          answered = true;
          if (timer) clearTimeout(timer);
          down.props.upstreamAddress = `${target.host}:${target.port}`;
          if (whole !== undefined) {
            // Head and whole body in one write to the client.
            if (held) sendWhole(res, held, [whole]);
            else res.end(whole);
            finish(status);
            return down.complete(status, requestBytes, whole.length);
          }
          relay = new ResponseRelay(
            call,
            res,
            (responseBytes) => {
              finish(status);
              down.complete(status, requestBytes, responseBytes);
            },
            // Reset or cut short after the headers went out: the client's stream is reset, as in Envoy.
            (e, responseBytes) => {
              finish(status);
              down.upstreamError(`upstream ${target.host}:${target.port} response cut short: ${e.message}`);
              res.destroy();
              down.complete(status, requestBytes, responseBytes);
            },
            held,
          );
        };
        broke = (e) => (relay ? relay.error(e) : failed(e));
        const handlers: ExchangeHandlers = {
          response: onResponse,
          data: (chunk) => relay?.data(chunk),
          end: () => relay?.end(),
          error: (e) => broke(e),
          drain: () => req.resume(),
        };
        const call = this.pool.request(
          { host: target.host, port: target.port, localAddress: target.localAddress, tls: target.tls },
          { method, path: upstreamPath, headers: headerList as RequestHeaders, body, maxRequestsPerConnection },
          handlers,
        );
        current = call;
        const perTry = actions?.retries?.perTryTimeoutMs;
        if (perTry)
          call.setTimeout(perTry, () => {
            call.destroy();
            broke(new Error("per-try timeout"));
          });
        if (bodiless) call.end();
      };
      attempt(bodiless ? (actions?.retries?.attempts ?? 0) : 0);
      if (!bodiless) {
        // The body streams as it comes (one attempt: requests with a body are not retried); a full upstream pauses the client.
        req.on("data", (chunk: Buffer) => {
          requestBytes += chunk.length;
          if (current && !current.write(chunk)) req.pause();
        });
        req.on("end", () => current?.end());
        // The client left before its body was complete: the upstream must not take a cut body as whole (Envoy resets the stream).
        req.once("close", () => {
          if (req.complete || !current) return;
          current.destroy();
          broke(Object.assign(new Error("the client left before its request body was complete"), { code: "ECONNRESET" }));
        });
      }
    };
    if (control) {
      const admitted = control.admit();
      if (!(admitted instanceof Promise)) {
        down.reply(admitted);
        req.resume();
        down.complete(admitted.status, 0, 0);
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
}

const NO_RETRIES: ReadonlySet<string> = new Set();

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
