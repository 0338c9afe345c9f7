// One hub endpoint's HTTP/2 connection, kept between calls, and the unary
// gRPC attempts sent on it, over this project's own HTTP/2 client
// (host/wire/h2/): grpc-js cost about 660 µs of CPU per call more than
// Node's `http2`, and Node's `http2` 2.5 times what this client costs
// (docs/benchmarks.md, "Hub calls over a hand-rolled HTTP/2 client").
//
// - Connected on first use; kept. A connection that drops, or that the hub
//   closes with GOAWAY, is replaced at the next call, at once (the calls the
//   hub accepted before the GOAWAY finish on the old one; those it did not
//   fail as refused, UNAVAILABLE, and are retried as the policy says).
// - A connection attempt that fails puts the endpoint in backoff: calls fail
//   at once (UNAVAILABLE `No connection established. Last error: …`, as grpc-js
//   said it) until the wait is over, then the next call connects again. The
//   waits grow ×2 from `initialBackoffMs` to `maxBackoffMs` (each less up to 20 %, at random), so a
//   hub that comes back is used again within about `maxBackoffMs`.
// - A connection not established within `connectTimeoutMs` (a hub address
//   that drops SYNs) is given up like a refused one.
// - Keep-alive: a PING every `keepaliveTimeMs`, also between calls; one not
//   answered within `keepaliveTimeoutMs` drops the connection, so a vanished
//   hub (no FIN, no RST) is noticed.
// - Sockets are unref'd: an idle hub connection does not keep the process
//   alive (an attempt's deadline timer does, while it runs).

import type { OutgoingHttpHeaders } from "node:http2";
import { connect as netConnect, isIP } from "node:net";
import { connect as tlsConnect, type PeerCertificate } from "node:tls";
import { GRPC_CODES } from "../wire/status_codes.ts";
import { Http2ClientSession } from "../wire/h2/client_session.ts";
import type { ClientStream, ResponseHeaders, StreamEnd } from "../wire/h2/client_stream.ts";
import { ErrorCode } from "../wire/h2/frames.ts";
import { encodeHeaderBlock, type HeaderField } from "../wire/h2/hpack.ts";
import type { ClusterAddress } from "./clusters.ts";
import { type GrpcStatus, httpStatusToGrpc, oversizedMessage, resetStatus, trailerStatus, unaryResponseMessage } from "./grpc_wire.ts";

/** Mutual TLS to the hub: PEM trust roots, client certificate chain and key; the hub's certificate checked by `checkServerIdentity` when given, else against `servername`/the host. */
export interface HubTlsOptions {
  ca: string | Buffer;
  cert: string | Buffer;
  key: string | Buffer;
  /** SNI and the name the default check expects; default the endpoint's host (none for an IP address). */
  servername?: string;
  /** Replaces the host-name check (a mesh hub proves a SPIFFE identity instead). */
  checkServerIdentity?: (host: string, cert: PeerCertificate) => Error | undefined;
}

export interface ConnectionTiming {
  /** A connection (TCP and TLS) not established by then is given up, and the endpoint backs off. */
  connectTimeoutMs: number;
  keepaliveTimeMs: number;
  keepaliveTimeoutMs: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
}

/** How one attempt ended: the hub's message, or a status and whether the hub had sent anything (headers or trailers). */
export type AttemptOutcome = { ok: true; message: Uint8Array } | { ok: false; status: GrpcStatus; answered: boolean };

/** Stops an attempt (RST_STREAM CANCEL); its `done` is then never called. */
export type CancelAttempt = () => void;

const NO_CANCEL: CancelAttempt = () => {};
/** How long a connection retired by `retire()` keeps serving the calls already on it. */
export const RETIRED_CONNECTION_GRACE_MS = 10_000;

/** One HTTP/2 session and what is known about it. */
interface Link {
  session: Http2ClientSession;
  /** Why the session failed, when it did. */
  error?: Error;
}

export class HubConnection {
  private link: Link | undefined;
  private failedConnects = 0;
  private retryAt = 0;
  private lastError = "";
  private readonly scheme: string;
  private readonly authority: string;
  /** Header blocks by the headers object they encode (a headers object is not changed once made). */
  private readonly encodedHeaders = new WeakMap<OutgoingHttpHeaders, Buffer>();

  constructor(
    private readonly address: ClusterAddress,
    target: string,
    private readonly tls: HubTlsOptions | undefined,
    private readonly timing: ConnectionTiming,
    private readonly random: () => number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.scheme = tls ? "https" : "http";
    const url = `${this.scheme}://${target}`;
    this.authority = address.kind === "tcp" && URL.canParse(url) ? new URL(url).host : "localhost";
  }

  /**
   * Sends one unary call: `headers` (grpc_wire.ts `hubRequestHeaders`) and the
   * framed message. `done` is called once with the outcome, possibly before
   * this returns (no connection, in backoff), never after the returned
   * cancel function ran.
   */
  unary(headers: OutgoingHttpHeaders, framed: Buffer, done: (outcome: AttemptOutcome) => void): CancelAttempt {
    const link = this.ready();
    if (typeof link === "string") {
      done({ ok: false, status: { code: GRPC_CODES.UNAVAILABLE, details: link }, answered: false });
      return NO_CANCEL;
    }
    const call = new UnaryCall(link, done);
    try {
      call.stream = link.session.requestEncoded(this.headerBlock(headers), framed, call);
    } catch (e) {
      done({ ok: false, status: { code: GRPC_CODES.UNAVAILABLE, details: `No connection established. Last error: ${String(e)}` }, answered: false });
      return NO_CANCEL;
    }
    return () => call.cancel();
  }

  /** Drops the connection; attempts still on it end as dropped (the transport cancels its own first). */
  close(): void {
    this.link?.session.destroy();
    this.link = undefined;
  }

  /** Takes no new calls; the calls on the connection may finish within RETIRED_CONNECTION_GRACE_MS, then it is dropped. */
  retire(): void {
    const link = this.link;
    this.link = undefined;
    if (!link || link.session.destroyed) return;
    link.session.close();
    setTimeout(() => link.session.destroy(), RETIRED_CONNECTION_GRACE_MS).unref();
  }

  /**
   * The request's header block. The transport passes the same headers object
   * for calls of the same shape (method, metadata, deadline), so it is
   * encoded once per shape and connection (the block names this connection's
   * authority and scheme).
   */
  private headerBlock(headers: OutgoingHttpHeaders): Buffer {
    let block = this.encodedHeaders.get(headers);
    if (block === undefined) {
      block = encodeHeaderBlock(this.fields(headers));
      this.encodedHeaders.set(headers, block);
    }
    return block;
  }

  /** The request's header fields: pseudo-header fields first, then the others; a list value as several fields. */
  private fields(headers: OutgoingHttpHeaders): HeaderField[] {
    const fields: HeaderField[] = [
      [":method", String(headers[":method"] ?? "POST")],
      [":scheme", this.scheme],
      [":authority", this.authority],
      [":path", String(headers[":path"])],
    ];
    for (const name in headers) {
      if (name.charCodeAt(0) === 0x3a) continue;
      const value = headers[name];
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const v of value) fields.push([name, v]);
      else fields.push([name, String(value)]);
    }
    return fields;
  }

  /** The live session, a new one, or (in backoff) why there is none. */
  private ready(): Link | string {
    const link = this.link;
    if (link && !link.session.closing) return link;
    if (this.failedConnects > 0 && this.now() < this.retryAt) return `No connection established. Last error: ${this.lastError}`;
    this.link = this.open();
    return this.link;
  }

  private open(): Link {
    const { address, tls } = this;
    let socket: ReturnType<typeof netConnect>;
    if (address.kind === "unix") socket = tls ? tlsConnect({ path: address.path, ...tlsOptions(tls, undefined) }) : netConnect(address.path);
    else
      socket = tls
        ? tlsConnect({ host: address.host, port: address.port, ...tlsOptions(tls, address.host) })
        : netConnect({ host: address.host, port: address.port });
    let keepalive: NodeJS.Timeout | undefined;
    let pingTimeout: NodeJS.Timeout | undefined;
    const session: Http2ClientSession = new Http2ClientSession(socket, tls !== undefined, {
      onConnect: () => {
        clearTimeout(connectTimeout);
        this.failedConnects = 0;
        keepalive = setInterval(() => {
          if (pingTimeout || session.destroyed) return;
          pingTimeout = setTimeout(
            () => session.destroy(new Error(`keep-alive PING not answered within ${this.timing.keepaliveTimeoutMs} ms`)),
            this.timing.keepaliveTimeoutMs,
          ).unref();
          session.ping(() => {
            clearTimeout(pingTimeout);
            pingTimeout = undefined;
          });
        }, this.timing.keepaliveTimeMs).unref();
      },
      // Streams the hub accepted finish on this session, which then closes; new calls open another.
      onGoaway: () => {
        if (this.link === link) this.link = undefined;
      },
      onClose: (error) => {
        link.error = error;
        clearTimeout(connectTimeout);
        clearInterval(keepalive);
        clearTimeout(pingTimeout);
        if (this.link === link) this.link = undefined;
        if (!session.connected) {
          this.failedConnects++;
          this.lastError = error ? String(error) : "the connection closed before it was established";
          const ceiling = Math.min(this.timing.maxBackoffMs, this.timing.initialBackoffMs * 2 ** (this.failedConnects - 1));
          this.retryAt = this.now() + ceiling * (0.8 + 0.2 * this.random());
        }
      },
    });
    session.unref();
    const link: Link = { session };
    const connectTimeout = setTimeout(
      () => session.destroy(new Error(`connection not established within ${this.timing.connectTimeoutMs} ms`)),
      this.timing.connectTimeoutMs,
    ).unref();
    return link;
  }
}

/** One attempt on a session: what the hub answered so far, and how that becomes the outcome. */
class UnaryCall {
  stream: ClientStream | undefined;
  private finished = false;
  private answered = false;
  private httpStatus: number | undefined;
  private status: GrpcStatus | undefined;
  private readonly chunks: Buffer[] = [];
  private received = 0;

  constructor(
    private readonly link: Link,
    private readonly done: (outcome: AttemptOutcome) => void,
  ) {}

  onHeaders(headers: ResponseHeaders, endStream: boolean): void {
    if (!this.answered) {
      this.answered = true;
      this.httpStatus = Number(headers[":status"]);
      if (endStream) this.status = trailerStatus(headers, this.httpStatus);
    } else this.status = trailerStatus(headers, this.httpStatus);
  }

  onData(chunk: Buffer): void {
    if (this.finished) return;
    this.chunks.push(chunk);
    this.received += chunk.length;
    const tooLarge = this.received >= 5 && this.received - chunk.length < 5 ? oversizedMessage(Buffer.concat(this.chunks, this.received)) : undefined;
    if (tooLarge) {
      const httpStatus = this.httpStatus;
      this.finish({ ok: false, status: httpStatus !== undefined && httpStatus !== 200 ? httpStatusToGrpc(httpStatus) : tooLarge, answered: true });
      this.stream?.cancel(ErrorCode.CANCEL);
    }
  }

  onEnd(end: StreamEnd): void {
    if (this.finished) return;
    const { status, answered, httpStatus } = this;
    if (end.kind === "ended" && status !== undefined) {
      if (status.code !== GRPC_CODES.OK) return this.finish({ ok: false, status, answered: true });
      const response = unaryResponseMessage(this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.received));
      return this.finish("message" in response ? { ok: true, message: response.message } : { ok: false, status: response.status, answered: true });
    }
    if (end.kind === "dropped") {
      const cause = end.error ?? this.link.error;
      const details = end.connected
        ? `Connection dropped${cause ? `: ${cause.message}` : ""}`
        : `No connection established. Last error: ${cause ? String(cause) : "the connection closed"}`;
      return this.finish({ ok: false, status: { code: GRPC_CODES.UNAVAILABLE, details }, answered });
    }
    const rst = end.kind === "reset" ? end.code : ErrorCode.NO_ERROR;
    if (rst === ErrorCode.NO_ERROR && httpStatus !== undefined && httpStatus !== 200)
      return this.finish({ ok: false, status: httpStatusToGrpc(httpStatus), answered });
    this.finish({ ok: false, status: resetStatus(rst), answered });
  }

  cancel(): void {
    if (this.finished) return;
    this.finished = true;
    this.stream?.cancel(ErrorCode.CANCEL);
  }

  private finish(outcome: AttemptOutcome): void {
    if (this.finished) return;
    this.finished = true;
    this.done(outcome);
  }
}

function tlsOptions(tls: HubTlsOptions, host: string | undefined) {
  const servername = tls.servername ?? (host !== undefined && isIP(host) === 0 ? host : undefined);
  return {
    ca: tls.ca,
    cert: tls.cert,
    key: tls.key,
    ALPNProtocols: ["h2"],
    ...(servername !== undefined ? { servername } : {}),
    ...(tls.checkServerIdentity ? { checkServerIdentity: tls.checkServerIdentity } : {}),
  };
}
