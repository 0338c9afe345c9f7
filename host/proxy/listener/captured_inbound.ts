// The inbound listener's connection stage under traffic capture: a
// redirected connection to a TCP port of the app (declared so by the
// registry, or whose first bytes are neither TLS nor HTTP) is proxied as TCP
// to the app on its original destination, dialled from 127.0.0.6 (upstream's
// inbound passthrough); everything else goes on to the listener's TLS or HTTP
// stage as before. Mutual TLS STRICT takes no plain TCP: such a connection
// is closed, as upstream's STRICT listener refuses plain text.
import { connect, createServer, type Server, type Socket } from "node:net";
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
  /** The address the app is dialled from. */
  sourceAddress: string;
  onLog: (level: "debug" | "info" | "warn" | "error", message: string) => void;
}

export interface CapturedInboundStats {
  tcp: number;
  /** Plain TCP refused by STRICT mutual TLS, or the app refused the connection. */
  refused: number;
}

export class CapturedInboundListener {
  readonly server: Server;
  readonly stats: CapturedInboundStats = { tcp: 0, refused: 0 };

  constructor(private readonly options: CapturedInboundOptions) {
    this.server = createServer({ pauseOnConnect: true, noDelay: true, allowHalfOpen: true }, (socket) => this.accept(socket));
  }

  private accept(socket: Socket): void {
    socket.on("error", () => socket.destroy());
    const o = this.options;
    const d = o.originalDestination(socket);
    const protocol = d ? o.protocol(d) : "http";
    if (!d || protocol === "http") return this.next(socket);
    if (protocol === "tcp") return this.tcp(socket, d);
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

  private tcp(socket: Socket, d: Destination): void {
    const o = this.options;
    if (!o.plaintextAllowed()) {
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
  }
}
