import { type Server as HttpServer } from "node:http";
import { type Server as NetServer, type Socket, createServer as createNetServer } from "node:net";
import { type Server as TlsServer, type TLSSocket, createSecureContext, createServer as createTlsServer } from "node:tls";
import type { ServerMtlsMode } from "../../security/mtls/peer_authn.ts";

/**
 * The inbound transport of a sidecar port (spec rules 3–7; security.md §1.2):
 * STRICT accepts only a TLS handshake with a client certificate issued by the
 * mesh roots (anything else is closed: no HTTP status); DISABLE hands every
 * connection to the HTTP server as plain text; PERMISSIVE looks at the first
 * byte (0x16, a TLS handshake record) and does either. The mode is read per
 * connection, so a configuration change applies to new connections.
 */

/** First byte of a TLS record carrying a handshake (RFC 8446 §5.1, ContentType handshake = 22). */
const TLS_HANDSHAKE = 0x16;

export interface MtlsListenerStats {
  tls: number;
  plaintext: number;
  /** Handshakes that failed (no or untrusted client certificate, plain text on STRICT). */
  handshakeFailures: number;
  /** Plain-text connections refused because the mode was STRICT. */
  plaintextRefused: number;
}

export interface MtlsListenerOptions {
  http: HttpServer;
  mode: () => ServerMtlsMode;
  /** Key, chain and the mesh roots the client certificate must chain to. */
  tls: () => { key: string; cert: string; ca: string };
  onLog: (level: "debug" | "info" | "warn" | "error", message: string) => void;
  /** Deadline for the first byte (PERMISSIVE) and for the TLS handshake; 0 = none. The HTTP server's header deadline follows. */
  firstBytesTimeoutMs?: number;
  /** Called when that deadline closes a connection. */
  onTimeout?: () => void;
  /**
   * A gateway's HTTPS servers instead of mesh mutual TLS: no client
   * certificate asked, the certificate chosen per handshake by SNI (null:
   * none to offer, the handshake fails). `mode` then says STRICT (TLS) or
   * DISABLE (plain HTTP).
   */
  serverCertificate?: (servername: string | undefined) => { key: string; cert: string } | null;
}

export class MtlsListener {
  readonly server: NetServer;
  readonly stats: MtlsListenerStats = { tls: 0, plaintext: 0, handshakeFailures: 0, plaintextRefused: 0 };
  private readonly tlsServer: TlsServer;

  constructor(private readonly options: MtlsListenerOptions) {
    const deadline = options.firstBytesTimeoutMs ?? 0;
    const pick = options.serverCertificate;
    this.tlsServer = pick
      ? createTlsServer({
          minVersion: "TLSv1.2",
          ...(deadline > 0 ? { handshakeTimeout: deadline } : {}),
          SNICallback: (servername, cb) => {
            const c = pick(servername || undefined);
            if (!c) return cb(new Error(`no certificate for ${JSON.stringify(servername)}`));
            try {
              cb(null, createSecureContext({ ...c, minVersion: "TLSv1.2" }));
            } catch (e) {
              cb(e as Error);
            }
          },
        })
      : createTlsServer({
          ...options.tls(),
          requestCert: true,
          rejectUnauthorized: true,
          minVersion: "TLSv1.2",
          ...(deadline > 0 ? { handshakeTimeout: deadline } : {}),
        });
    this.tlsServer.on("secureConnection", (s: TLSSocket) => {
      this.stats.tls++;
      options.http.emit("connection", s);
    });
    this.tlsServer.on("tlsClientError", (e: NodeJS.ErrnoException, s) => {
      this.stats.handshakeFailures++;
      if (e.code === "ERR_TLS_HANDSHAKE_TIMEOUT") options.onTimeout?.();
      options.onLog("debug", `inbound TLS handshake from ${s.remoteAddress}:${s.remotePort} failed: ${e.message}`);
      s.destroy();
    });
    // noDelay: the HTTP server's own listener turns Nagle's algorithm off (Node's
    // default), but it never sees these connections; as Envoy does on every
    // connection, a response's last small write then goes out at once instead
    // of waiting for the peer's delayed ACK (tens of ms per request on loopback).
    this.server = createNetServer({ pauseOnConnect: true, noDelay: true }, (socket) => this.accept(socket));
  }

  /** Takes a new certificate (rotation); new handshakes use it. */
  refresh(): void {
    if (!this.options.serverCertificate) this.tlsServer.setSecureContext(this.options.tls());
  }

  private accept(socket: Socket): void {
    socket.on("error", () => socket.destroy());
    const mode = this.options.mode();
    if (mode === "DISABLE") return this.plain(socket);
    if (mode === "STRICT") return this.secure(socket);
    const deadline = this.options.firstBytesTimeoutMs ?? 0;
    const onDeadline = () => {
      this.options.onTimeout?.();
      socket.destroy();
    };
    if (deadline > 0) socket.setTimeout(deadline, onDeadline);
    socket.once("readable", () => {
      // Removes the listener too: the HTTP server sets its own timeouts on this socket later.
      if (deadline > 0) socket.setTimeout(0, onDeadline);
      const first = socket.read(1) as Buffer | null;
      if (first === null) return socket.destroy();
      socket.unshift(first);
      if (first[0] === TLS_HANDSHAKE) this.secure(socket);
      else this.plain(socket);
    });
  }

  private plain(socket: Socket): void {
    this.stats.plaintext++;
    this.options.http.emit("connection", socket);
    socket.resume();
  }

  private secure(socket: Socket): void {
    this.tlsServer.emit("connection", socket);
    socket.resume();
  }

  close(): void {
    this.server.close();
    this.tlsServer.close();
  }
}
