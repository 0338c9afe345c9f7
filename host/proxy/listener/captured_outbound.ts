// The outbound listener's connection stage under traffic capture: each
// accepted connection's original destination (getsockopt SO_ORIGINAL_DST)
// picks its filter chain, as Envoy's virtualOutbound does
// (capture_routing.ts): HTTP to the HTTP connection manager's server, TCP
// proxied to an endpoint (round robin) or to the original destination
// (ALLOW_ANY), nothing (REGISTRY_ONLY). A connection that was not
// redirected goes to the HTTP server as before.
import type { Server as HttpServer } from "node:http";
import { connect, createServer, type Server, type Socket } from "node:net";
import { type ConnectionOptions, connect as connectTls } from "node:tls";
import { type CapturedOutbound, type Destination, PASSTHROUGH_CLUSTER, looksLikeHttp } from "./capture_routing.ts";

export interface CapturedOutboundOptions {
  /** The HTTP connection manager's server: HTTP connections are emitted to it. */
  http: HttpServer;
  /** Where the connection was going before the capture redirected it; undefined when it was not redirected. */
  originalDestination: (socket: Socket) => Destination | undefined;
  /** The route of a redirected connection (routeCapturedOutbound over the current registry). */
  route: (destination: Destination) => CapturedOutbound;
  /**
   * The endpoint of a registry service port and how to reach it, as the
   * cluster manager decides for HTTP (round robin, DestinationRule or auto
   * mutual TLS): `tls` set originates mutual TLS; undefined when the cluster
   * has no endpoint; a string when the connection cannot be made (why).
   * Absent, or null for a connection (no security path): the route's own
   * endpoints in turn, plain text.
   */
  upstream?: (service: { fqdn: string; port: number }) => CapturedUpstream | string | undefined | null;
  onLog: (level: "debug" | "info" | "warn" | "error", message: string) => void;
}

export interface CapturedUpstream {
  readonly address: string;
  readonly port: number;
  readonly tls?: ConnectionOptions;
}

export interface CapturedOutboundStats {
  /** Connections that were not redirected (the app called the listener itself). */
  direct: number;
  http: number;
  tcp: number;
  passthrough: number;
  blackhole: number;
  /** TCP connections closed because their cluster had no endpoint, or the endpoint refused. */
  upstreamFailures: number;
  /** TCP connections proxied over mutual TLS to an endpoint with a sidecar. */
  mtls: number;
}

export class CapturedOutboundListener {
  readonly server: Server;
  readonly stats: CapturedOutboundStats = { direct: 0, http: 0, tcp: 0, passthrough: 0, blackhole: 0, upstreamFailures: 0, mtls: 0 };
  private readonly next = new Map<string, number>();

  constructor(private readonly options: CapturedOutboundOptions) {
    // Half-open as the HTTP server's own sockets are: a TCP client's FIN is passed on and the answer may still come back (Envoy's tcp_proxy).
    this.server = createServer({ pauseOnConnect: true, noDelay: true, allowHalfOpen: true }, (socket) => this.accept(socket));
  }

  private accept(socket: Socket): void {
    socket.on("error", () => socket.destroy());
    const d = this.options.originalDestination(socket);
    if (!d) {
      this.stats.direct++;
      return this.http(socket);
    }
    this.dispatch(socket, d, this.options.route(d));
  }

  private dispatch(socket: Socket, d: Destination, r: CapturedOutbound): void {
    switch (r.kind) {
      case "http":
        this.stats.http++;
        return this.http(socket);
      case "sniff":
        // upstream's protocol sniffing: the client's first bytes decide (a server-first protocol must declare its port).
        socket.once("readable", () => {
          const first = socket.read() as Buffer | null;
          if (first === null) return socket.destroy();
          socket.unshift(first);
          this.dispatch(socket, d, looksLikeHttp(first) ? { kind: "http" } : r.otherwise);
        });
        return;
      case "tcp":
        return this.tcp(socket, d, r);
      case "blackhole":
        this.stats.blackhole++;
        this.options.onLog("debug", `outbound: ${d.address}:${d.port} is not in the registry (REGISTRY_ONLY): connection closed (BlackHoleCluster)`);
        socket.destroy();
        return;
    }
  }

  private http(socket: Socket): void {
    this.options.http.emit("connection", socket);
    socket.resume();
  }

  private tcp(socket: Socket, d: Destination, r: CapturedOutbound & { kind: "tcp" }): void {
    if (r.cluster === PASSTHROUGH_CLUSTER) this.stats.passthrough++;
    else this.stats.tcp++;
    const chosen = this.endpoint(r);
    if (chosen === undefined || typeof chosen === "string") {
      this.stats.upstreamFailures++;
      this.options.onLog("warn", `outbound: ${d.address}:${d.port} (${r.cluster}): ${chosen ?? "no endpoint"}: connection closed`);
      socket.destroy();
      return;
    }
    if (chosen.tls) this.stats.mtls++;
    const target = { host: chosen.address, port: chosen.port, noDelay: true, allowHalfOpen: true };
    const upstream = chosen.tls ? connectTls({ ...chosen.tls, ...target }) : connect(target);
    const fail = (e: Error) => {
      this.stats.upstreamFailures++;
      this.options.onLog("warn", `outbound: ${d.address}:${d.port} (${r.cluster}) → ${chosen.address}:${chosen.port}: ${e.message}`);
      socket.destroy();
    };
    upstream.once("error", fail);
    upstream.once(chosen.tls ? "secureConnect" : "connect", () => {
      upstream.off("error", fail);
      upstream.on("error", () => socket.destroy());
      socket.on("close", () => upstream.destroy());
      upstream.on("close", () => socket.destroy());
      socket.pipe(upstream);
      upstream.pipe(socket);
      socket.resume();
    });
  }

  /** The cluster manager's choice for a registry service port, else the route's endpoints in turn. */
  private endpoint(r: CapturedOutbound & { kind: "tcp" }): CapturedUpstream | string | undefined {
    const managed = r.service && this.options.upstream ? this.options.upstream(r.service) : null;
    if (managed !== null) return managed;
    if (r.endpoints.length === 0) return undefined;
    const i = this.next.get(r.cluster) ?? 0;
    this.next.set(r.cluster, (i + 1) % r.endpoints.length);
    return r.endpoints[i % r.endpoints.length];
  }

  close(): void {
    this.server.close();
  }
}
