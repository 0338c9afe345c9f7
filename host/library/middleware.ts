// The Connect/Express middleware, and what it shares with the Fastify plugin:
// a node:http or HTTP/2 compatibility request read as a CheckRequest, a
// denial answered as the sidecar answers it, and the report made when the
// response is over (status, sizes, duration).

import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import type { CheckRequest, Decision, FilterMiddleware, HeaderValue, MiddlewareOptions, NodeRequest, NodeResponse } from "./types.ts";

/** What the adapters need of the filter: a decision, at once when the module made it without the hub. */
export interface Decider {
  decide(request: CheckRequest): Decision | Promise<Decision>;
}

/** The TLS peer identity of each connection (a URI SAN of the client certificate), read once per connection. */
const peerIdentities = new WeakMap<object, string | null>();

function peerIdentity(socket: Socket | TLSSocket | undefined): string | undefined {
  if (!socket || !(socket as TLSSocket).encrypted) return undefined;
  let known = peerIdentities.get(socket);
  if (known === undefined) {
    const tls = socket as TLSSocket;
    const cert = tls.authorized ? tls.getPeerCertificate() : undefined;
    const uris = (cert?.subjectaltname ?? "")
      .split(", ")
      .filter((s) => s.startsWith("URI:"))
      .map((s) => s.slice(4));
    known = uris.find((u) => u.startsWith("spiffe://")) ?? uris[0] ?? null;
    peerIdentities.set(socket, known);
  }
  return known ?? undefined;
}

/** A node:http or HTTP/2 compatibility request as the filter reads it. */
export function checkRequestOf(req: NodeRequest, url?: string): CheckRequest {
  const socket = req.socket as Socket | TLSSocket | undefined;
  const h2 = "authority" in req && typeof req.authority === "string";
  return {
    method: req.method ?? "GET",
    path: url ?? (req as { originalUrl?: string }).originalUrl ?? req.url ?? "/",
    headers: req.headers,
    authority: h2 ? (req as { authority: string }).authority : undefined,
    scheme: h2 ? (req as { scheme: string }).scheme : (socket as TLSSocket | undefined)?.encrypted ? "https" : "http",
    sourceAddress: socket?.remoteAddress,
    sourcePort: socket?.remotePort,
    destinationAddress: socket?.localAddress,
    destinationPort: socket?.localPort,
    peerIdentity: peerIdentity(socket),
    protocol: req.httpVersionMajor === 2 ? "HTTP/2" : `HTTP/${req.httpVersion}`,
  };
}

/**
 * Counts the body bytes the response writes (its content-length when set
 * is not trusted: a HEAD answer or an error can send fewer); returns the count so far.
 */
export function countResponseBytes(res: NodeResponse): () => number {
  let bytes = 0;
  const target = res as unknown as { write: (...args: unknown[]) => boolean; end: (...args: unknown[]) => unknown };
  const write = target.write;
  const end = target.end;
  const count = (chunk: unknown, encoding: unknown) => {
    if (typeof chunk === "string") bytes += Buffer.byteLength(chunk, typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8");
    else if (chunk instanceof Uint8Array) bytes += chunk.byteLength;
  };
  target.write = function (this: unknown, chunk: unknown, encoding?: unknown, ...rest: unknown[]) {
    count(chunk, encoding);
    return write.call(this, chunk, encoding, ...rest);
  };
  target.end = function (this: unknown, chunk?: unknown, encoding?: unknown, ...rest: unknown[]) {
    if (typeof chunk !== "function") count(chunk, encoding);
    return end.call(this, chunk, encoding, ...rest);
  };
  return () => bytes;
}

/** The request body's size as announced (the filter does not read bodies). */
export function requestBytes(req: NodeRequest): number {
  const length = Number(req.headers["content-length"]);
  return Number.isFinite(length) && length > 0 ? length : 0;
}

/** Sends the filter's denial, as the sidecar does: its status, `content-type: text/plain` unless told otherwise, the body. */
export function sendDenial(res: NodeResponse, decision: Decision): void {
  const headers: Record<string, string | number> = { ...decision.headers, "content-length": Buffer.byteLength(decision.body) };
  (res as { writeHead(status: number, headers: Record<string, string | number>): unknown }).writeHead(decision.status, headers);
  (res as { end(body: string): unknown }).end(decision.body);
}

/** Applies the headers an allowed request gained (forwarded attributes) so the application and its calls see them. */
export function applyAddedHeaders(req: NodeRequest, decision: Decision): void {
  const added = decision.headers;
  for (const name in added) (req.headers as Record<string, string>)[name] = added[name];
}

/** Reports the request once its response is over (or the connection closed before). */
export function reportWhenDone(req: NodeRequest, res: NodeResponse, decision: Decision, started: number): void {
  const responseBytes = countResponseBytes(res);
  res.once("close", () => {
    decision.report({
      status: res.headersSent ? res.statusCode : 0,
      requestBytes: requestBytes(req),
      responseBytes: responseBytes(),
      durationMs: performance.now() - started,
      headers: res.getHeaders() as Record<string, HeaderValue>,
    });
  });
}

export function connectMiddleware(filter: Decider, options: MiddlewareOptions): FilterMiddleware {
  const skip = options.skip;
  return (req, res, next) => {
    if (skip?.(req)) return next();
    const started = performance.now();
    const go = (decision: Decision) => {
      if (!decision.allowed) {
        reportWhenDone(req, res, decision, started);
        sendDenial(res, decision);
        return;
      }
      applyAddedHeaders(req, decision);
      reportWhenDone(req, res, decision, started);
      next();
    };
    let decided: Decision | Promise<Decision>;
    try {
      decided = filter.decide(checkRequestOf(req));
    } catch (e) {
      return next(e);
    }
    if (decided instanceof Promise) decided.then(go, next);
    else go(decided);
  };
}
