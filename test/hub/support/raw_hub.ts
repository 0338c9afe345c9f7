// A hub speaking gRPC's HTTP/2 wire by hand (node:http2, real loopback
// sockets, optionally mutual TLS), so a test can make it misbehave in ways a
// gRPC server library never does: reset streams, answer HTTP 503, send
// trailers-only errors, compressed messages, never answer, drop the
// connection, send GOAWAY.
import { once } from "node:events";
import {
  constants as h2,
  createSecureServer,
  createServer,
  type Http2Server,
  type Http2SecureServer,
  type IncomingHttpHeaders,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from "node:http2";
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";

/** One request as the raw hub saw it. */
export interface RawRequest {
  headers: IncomingHttpHeaders;
  /** The DATA bytes, framing included. */
  body: Buffer;
  /** Which connection (1-based, in accept order). */
  connection: number;
  /** The client certificate's subjectAltName under TLS. */
  clientSan?: string;
}

/** What the hub does with one request; called once its body has arrived. */
export type RawBehaviour = (stream: ServerHttp2Stream, request: RawRequest) => void;

/** gRPC's 5-byte prefix + message. */
export function framed(message: Uint8Array, compressed = false): Buffer {
  const out = Buffer.alloc(5 + message.byteLength);
  out[0] = compressed ? 1 : 0;
  out.writeUInt32BE(message.byteLength, 1);
  out.set(message, 5);
  return out;
}

/** A well-formed OK answer carrying `message`. */
export function answerOk(stream: ServerHttp2Stream, message: Uint8Array): void {
  stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
  stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
  stream.end(framed(message));
}

export class RawHub {
  readonly requests: RawRequest[] = [];
  readonly sessions = new Set<ServerHttp2Session>();
  /** The accepted sockets, to drop a connection without a word (no GOAWAY). */
  readonly sockets = new Set<Socket>();
  /** Connections accepted so far. */
  accepted = 0;
  /** Streams the client cancelled or that otherwise closed without our answer finishing. */
  aborted = 0;

  private constructor(
    private readonly server: Http2Server | Http2SecureServer,
    readonly port: number,
    public behaviour: RawBehaviour,
  ) {}

  static async start(behaviour: RawBehaviour, tls?: { key: Buffer; cert: Buffer; ca: Buffer }, port = 0): Promise<RawHub> {
    const server = tls ? createSecureServer({ ...tls, requestCert: true, rejectUnauthorized: true, allowHTTP1: false }) : createServer();
    let hub: RawHub | undefined;
    server.on(tls ? "secureConnection" : "connection", (socket: Socket) => {
      hub!.sockets.add(socket);
      socket.on("close", () => hub!.sockets.delete(socket));
    });
    server.on("session", (session) => {
      hub!.accepted++;
      hub!.sessions.add(session);
      (session as ServerHttp2Session & { connectionNumber?: number }).connectionNumber = hub!.accepted;
      session.on("error", () => {});
      session.on("close", () => hub!.sessions.delete(session));
    });
    server.on("stream", (stream, headers) => {
      stream.on("error", () => {});
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("aborted", () => hub!.aborted++);
      stream.on("end", () => {
        const session = stream.session as ServerHttp2Session & { connectionNumber?: number };
        const socket = session.socket as TLSSocket;
        const request: RawRequest = {
          headers,
          body: Buffer.concat(chunks),
          connection: session.connectionNumber ?? 0,
          clientSan: tls ? socket.getPeerCertificate?.().subjectaltname : undefined,
        };
        hub!.requests.push(request);
        hub!.behaviour(stream, request);
      });
    });
    server.listen(port, "127.0.0.1");
    await once(server, "listening");
    hub = new RawHub(server, (server.address() as { port: number }).port, behaviour);
    return hub;
  }

  get target(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Closes every connection's socket at once, as a crashed hub would. */
  dropConnections(): void {
    for (const s of this.sockets) s.destroy();
  }

  /** Stops listening and drops every connection. */
  async close(): Promise<void> {
    for (const s of this.sessions) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export const RST = h2;
