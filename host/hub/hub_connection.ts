// One hub endpoint's HTTP/2 connection, kept between calls, and the unary
// gRPC attempts sent on it (Node's `http2` directly: grpc-js cost about 660 µs
// of CPU per call more, docs/benchmarks.md).
//
// - Connected on first use; kept. A connection that drops, or that the hub
//   closes with GOAWAY, is replaced at the next call, at once.
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
// - Sessions are unref'd: an idle hub connection does not keep the process
//   alive (an attempt's deadline timer does, while it runs).

import { type ClientHttp2Session, type ClientHttp2Stream, connect as http2Connect, constants as h2, type OutgoingHttpHeaders } from "node:http2";
import { connect as netConnect, isIP } from "node:net";
import { connect as tlsConnect, type PeerCertificate } from "node:tls";
import { GRPC_CODES } from "../wire/status_codes.ts";
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
  session: ClientHttp2Session;
  /** The connection (and TLS handshake) completed. */
  connected: boolean;
  /** Why the session failed, when it did. */
  error?: Error;
}

export class HubConnection {
  private link: Link | undefined;
  private failedConnects = 0;
  private retryAt = 0;
  private lastError = "";
  private readonly authority: string;

  constructor(
    private readonly address: ClusterAddress,
    target: string,
    private readonly tls: HubTlsOptions | undefined,
    private readonly timing: ConnectionTiming,
    private readonly random: () => number,
    private readonly now: () => number = () => performance.now(),
  ) {
    const scheme = tls ? "https" : "http";
    this.authority = address.kind === "tcp" && URL.canParse(`${scheme}://${target}`) ? `${scheme}://${target}` : `${scheme}://localhost`;
  }

  /**
   * Sends one unary call: `headers` (grpc_wire.ts `requestHeaders`) and the
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
    let stream: ClientHttp2Stream;
    try {
      stream = link.session.request(headers);
    } catch (e) {
      done({ ok: false, status: { code: GRPC_CODES.UNAVAILABLE, details: `No connection established. Last error: ${String(e)}` }, answered: false });
      return NO_CANCEL;
    }
    let finished = false;
    let answered = false;
    let httpStatus: number | undefined;
    let status: GrpcStatus | undefined;
    let streamError: Error | undefined;
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = (outcome: AttemptOutcome) => {
      if (finished) return;
      finished = true;
      done(outcome);
    };
    stream.on("response", (h, flags) => {
      answered = true;
      httpStatus = Number(h[h2.HTTP2_HEADER_STATUS]);
      if (flags & h2.NGHTTP2_FLAG_END_STREAM) status = trailerStatus(h, httpStatus);
    });
    stream.on("trailers", (h) => {
      status = trailerStatus(h, httpStatus);
    });
    stream.on("data", (chunk: Buffer) => {
      if (finished) return;
      chunks.push(chunk);
      received += chunk.length;
      const tooLarge = received >= 5 && received - chunk.length < 5 ? oversizedMessage(Buffer.concat(chunks, received)) : undefined;
      if (tooLarge) {
        finish({ ok: false, status: httpStatus !== undefined && httpStatus !== 200 ? httpStatusToGrpc(httpStatus) : tooLarge, answered: true });
        stream.close(h2.NGHTTP2_CANCEL);
      }
    });
    stream.on("error", (e) => {
      streamError = e;
    });
    stream.on("close", () => {
      if (finished) return;
      if (status !== undefined) {
        if (status.code !== GRPC_CODES.OK) return finish({ ok: false, status, answered: true });
        const response = unaryResponseMessage(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received));
        return finish("message" in response ? { ok: true, message: response.message } : { ok: false, status: response.status, answered: true });
      }
      if (link.session.destroyed) {
        const cause = (streamError?.cause as Error | undefined) ?? link.error ?? streamError;
        const details = link.connected
          ? `Connection dropped${cause ? `: ${cause.message}` : ""}`
          : `No connection established. Last error: ${cause ? String(cause) : "the connection closed"}`;
        return finish({ ok: false, status: { code: GRPC_CODES.UNAVAILABLE, details }, answered });
      }
      const rst = stream.rstCode ?? h2.NGHTTP2_NO_ERROR;
      if (rst === h2.NGHTTP2_NO_ERROR && httpStatus !== undefined && httpStatus !== 200)
        return finish({ ok: false, status: httpStatusToGrpc(httpStatus), answered });
      finish({ ok: false, status: resetStatus(rst), answered });
    });
    stream.end(framed);
    return () => {
      if (finished) return;
      finished = true;
      if (!stream.closed) stream.close(h2.NGHTTP2_CANCEL);
    };
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

  /** The live session, a new one, or (in backoff) why there is none. */
  private ready(): Link | string {
    const link = this.link;
    if (link && !link.session.destroyed && !link.session.closed) return link;
    if (this.failedConnects > 0 && this.now() < this.retryAt) return `No connection established. Last error: ${this.lastError}`;
    this.link = this.open();
    return this.link;
  }

  private open(): Link {
    const { address, tls } = this;
    const createConnection = () => {
      if (address.kind === "unix") return tls ? tlsConnect({ path: address.path, ...tlsOptions(tls, undefined) }) : netConnect(address.path);
      return tls
        ? tlsConnect({ host: address.host, port: address.port, ...tlsOptions(tls, address.host) })
        : netConnect({ host: address.host, port: address.port });
    };
    const session = http2Connect(this.authority, { createConnection, settings: { enablePush: false } });
    session.unref();
    const link: Link = { session, connected: false };
    let keepalive: NodeJS.Timeout | undefined;
    let pingTimeout: NodeJS.Timeout | undefined;
    const connectTimeout = setTimeout(
      () => session.destroy(new Error(`connection not established within ${this.timing.connectTimeoutMs} ms`)),
      this.timing.connectTimeoutMs,
    ).unref();
    session.once("connect", () => {
      clearTimeout(connectTimeout);
      link.connected = true;
      this.failedConnects = 0;
      keepalive = setInterval(() => {
        if (pingTimeout || session.destroyed) return;
        pingTimeout = setTimeout(
          () => session.destroy(new Error(`keep-alive PING not answered within ${this.timing.keepaliveTimeoutMs} ms`)),
          this.timing.keepaliveTimeoutMs,
        ).unref();
        try {
          session.ping(() => {
            clearTimeout(pingTimeout);
            pingTimeout = undefined;
          });
        } catch {
          // the session is closing; its close event cleans up
        }
      }, this.timing.keepaliveTimeMs).unref();
    });
    session.on("error", (e) => {
      link.error = e;
    });
    session.on("goaway", () => {
      // Streams the hub accepted finish on this session, which then closes; new calls open another.
      if (this.link === link) this.link = undefined;
      if (!session.closed) session.close();
    });
    session.once("close", () => {
      clearTimeout(connectTimeout);
      clearInterval(keepalive);
      clearTimeout(pingTimeout);
      if (this.link === link) this.link = undefined;
      if (!link.connected) {
        this.failedConnects++;
        this.lastError = link.error ? String(link.error) : "the connection closed before it was established";
        const ceiling = Math.min(this.timing.maxBackoffMs, this.timing.initialBackoffMs * 2 ** (this.failedConnects - 1));
        this.retryAt = this.now() + ceiling * (0.8 + 0.2 * this.random());
      }
    });
    return link;
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
