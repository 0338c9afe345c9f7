// The inbound listener's connection stage under traffic capture: a
// redirected connection to a TCP port of the app (declared so by the
// registry, or whose first bytes are neither TLS nor HTTP) is proxied as TCP
// to the app on its original destination, dialled from 127.0.0.6 (upstream's
// inbound passthrough); everything else goes on to the listener's TLS or HTTP
// stage as before. A TCP port's connection that starts a TLS handshake is
// the client sidecar's mutual TLS (upstream's sidecars originate it for TCP
// too): it is terminated here, the client certificate checked against the
// mesh roots, and the plain bytes go to the app. Mutual TLS STRICT takes no
// plain TCP: such a connection is closed, as upstream's STRICT listener
// refuses plain text.
import { connect, createServer, type Server, type Socket } from "node:net";
import { type Server as TlsServer, type TLSSocket, createServer as createTlsServer } from "node:tls";
import { type Destination, looksLikeHttp } from "./capture_routing.ts";

/** First byte of a TLS handshake record. */
const TLS_HANDSHAKE = 0x16;

export interface CapturedInboundOptions {
  /** The listener's next stage (the mutual TLS listener's or the HTTP server's `connection`). */
  next: (socket: Socket) => void;
  originalDestination: (socket: Socket) => Destination | undefined;
  /** The protocol of the app's port the connection was going to (capturedInboundProtocol over the current registry). */
  protocol: (destination: Destination) => "http" | "tcp" | undefined;
  /** Whether plain text is accepted (no security path, or PeerAuthentication PERMISSIVE/DISABLE). */
  plaintextAllowed: () => boolean;
  /** The workload's key, chain and the mesh roots, when there is a security path: mutual TLS is accepted on TCP ports. */
  tls?: () => { key: string; cert: string; ca: string };
  /** The address the app is dialled from. */
  sourceAddress: string;
  onLog: (level: "debug" | "info" | "warn" | "error", message: string) => void;
}

export interface CapturedInboundStats {
  tcp: number;
  /** Plain TCP refused by STRICT mutual TLS, or the app refused the connection. */
  refused: number;
  /** TCP connections that came over mutual TLS (counted in `tcp` too). */
  mtls: number;
}

export class CapturedInboundListener {
  readonly server: Server;
  readonly stats: CapturedInboundStats = { tcp: 0, refused: 0, mtls: 0 };
  private tls: TlsServer | undefined;
  /** Original destinations of connections in their TLS handshake, by the client's address and port. */
  private readonly handshaking = new Map<string, Destination>();

  constructor(private readonly options: CapturedInboundOptions) {
    this.server = createServer({ pauseOnConnect: true, noDelay: true, allowHalfOpen: true }, (socket) => this.accept(socket));
  }

  private accept(socket: Socket): void {
    socket.on("error", () => socket.destroy());
    const o = this.options;
    const d = o.originalDestination(socket);
    const protocol = d ? o.protocol(d) : "http";
    if (!d || protocol === "http") return this.next(socket);
    if (protocol === "tcp") return o.tls ? this.tcpOrTls(socket, d) : this.tcp(socket, d);
    // Undeclared: TLS or HTTP go on; anything else is TCP for the app (a server-first protocol must declare its port).
    socket.once("readable", () => {
      const first = socket.read() as Buffer | null;
      if (first === null) return socket.destroy();
      socket.unshift(first);
      if (first[0] === TLS_HANDSHAKE || looksLikeHttp(first)) this.next(socket);
      else this.tcp(socket, d);
    });
  }

  private next(socket: Socket): void {
    this.options.next(socket);
    socket.resume();
  }

  /** A declared TCP port with a security path: a TLS handshake first is mutual TLS; anything else is plain TCP (a server-first app waits for the client here, as upstream's listener does for its TLS inspector). */
  private tcpOrTls(socket: Socket, d: Destination): void {
    socket.once("readable", () => {
      const first = socket.read(1) as Buffer | null;
      if (first === null) return socket.destroy();
      socket.unshift(first);
      if (first[0] === TLS_HANDSHAKE) this.mutualTls(socket, d);
      else this.tcp(socket, d);
    });
  }

  private mutualTls(raw: Socket, d: Destination): void {
    const server = this.tlsServer();
    const peer = `${raw.remoteAddress}:${raw.remotePort}`;
    this.handshaking.set(peer, d);
    raw.once("close", () => this.handshaking.delete(peer));
    server.emit("connection", raw);
  }

  /** The TLS stage of the TCP ports: the client certificate must chain to the mesh roots (rejectUnauthorized), as the HTTP ports' mutual TLS listener asks. */
  private tlsServer(): TlsServer {
    if (this.tls) return this.tls;
    const o = this.options;
    const server = createTlsServer({ ...o.tls!(), requestCert: true, rejectUnauthorized: true, minVersion: "TLSv1.2" });
    server.on("secureConnection", (secure: TLSSocket) => {
      const d = this.handshaking.get(`${secure.remoteAddress}:${secure.remotePort}`);
      if (!d) return secure.destroy();
      this.stats.mtls++;
      this.tcp(secure, d, true);
    });
    server.on("tlsClientError", (e, s) => {
      this.stats.refused++;
      o.onLog("debug", `inbound: mutual TLS handshake from ${s.remoteAddress} on a TCP port failed: ${e.message}`);
      s.destroy();
    });
    this.tls = server;
    return server;
  }

  /** Takes a new certificate (rotation); new handshakes use it. */
  refresh(): void {
    if (this.tls && this.options.tls) this.tls.setSecureContext(this.options.tls());
  }

  private tcp(socket: Socket, d: Destination, authenticated = false): void {
    const o = this.options;
    if (!authenticated && !o.plaintextAllowed()) {
      this.stats.refused++;
      o.onLog("debug", `inbound: plain TCP to ${d.address}:${d.port} from ${socket.remoteAddress} refused: mutual TLS is STRICT`);
      socket.destroy();
      return;
    }
    this.stats.tcp++;
    const app = connect({ host: d.address, port: d.port, localAddress: o.sourceAddress, noDelay: true, allowHalfOpen: true });
    const fail = (e: Error) => {
      this.stats.refused++;
      o.onLog("warn", `inbound: TCP to the app at ${d.address}:${d.port}: ${e.message}`);
      socket.destroy();
    };
    app.once("error", fail);
    app.once("connect", () => {
      app.off("error", fail);
      app.on("error", () => socket.destroy());
      socket.on("close", () => app.destroy());
      app.on("close", () => socket.destroy());
      socket.pipe(app);
      app.pipe(socket);
      socket.resume();
    });
  }

  close(): void {
    this.server.close();
    this.tls?.close();
  }
}
