// The listeners' capture stages (traffic capture on): in front of the
// outbound HTTP server, the route of each redirected connection by its
// original destination (captured_outbound.ts); in front of the inbound TLS
// or HTTP stage, redirected TCP to the app (captured_inbound.ts). Both feed
// the servers behind them, which then never listen themselves.
import type { Server as HttpServer } from "node:http";
import type { Server } from "node:net";
import { INBOUND_PASSTHROUGH_SOURCE } from "../../capture/iptables_rules.ts";
import { type CaptureRegistry, type OutboundTrafficMode, capturedInboundProtocol, routeCapturedOutbound } from "./capture_routing.ts";
import { CapturedInboundListener } from "./captured_inbound.ts";
import { type CapturedOutboundOptions, CapturedOutboundListener } from "./captured_outbound.ts";
import type { ConnectionStage } from "./connection.ts";

export interface CaptureStageOptions {
  outboundHttp: HttpServer;
  outboundConnections: ConnectionStage;
  /** The inbound listener's next stage: the mutual TLS listener's server, else the HTTP server. */
  inboundNext: Server;
  /** The inbound HTTP server, when `inboundNext` is not it (the TLS stage then feeds it). */
  inboundHttpBehindTls: boolean;
  inboundHttp: HttpServer;
  inboundConnections: ConnectionStage;
  /** A gateway is not captured: no inbound stage. */
  gateway: boolean;
  registry: () => CaptureRegistry;
  outboundTrafficPolicy: () => OutboundTrafficMode;
  /** Plain text accepted inbound (no security path, or PeerAuthentication not STRICT). */
  plaintextAllowed: () => boolean;
  /** The workload's key, chain and mesh roots (security path): captured inbound TCP accepts mutual TLS. */
  inboundTls?: () => { key: string; cert: string; ca: string };
  /** Captured outbound TCP to a registry service port: the cluster manager's endpoint and client TLS (captured_outbound.ts). */
  outboundUpstream?: CapturedOutboundOptions["upstream"];
  onLog: (level: "debug" | "info" | "warn" | "error", message: string) => void;
}

export interface CaptureStages {
  readonly outbound: CapturedOutboundListener;
  readonly inbound?: CapturedInboundListener;
}

/** Builds both stages and has the connection stages read each accepted socket's original destination. */
export function captureStages(o: CaptureStageOptions): CaptureStages {
  const outbound = new CapturedOutboundListener({
    http: o.outboundHttp,
    originalDestination: (socket) => o.outboundConnections.originalDestination(socket),
    route: (d) => routeCapturedOutbound(o.registry(), d, o.outboundTrafficPolicy()),
    ...(o.outboundUpstream ? { upstream: o.outboundUpstream } : {}),
    onLog: o.onLog,
  });
  o.outboundConnections.watch(outbound.server);
  // Node starts an HTTP server's header-deadline check when it listens; one fed by another stage never does.
  o.outboundHttp.emit("listening");
  if (o.gateway) {
    o.inboundConnections.watch(o.inboundNext);
    return { outbound };
  }
  const inbound = new CapturedInboundListener({
    next: (socket) => o.inboundNext.emit("connection", socket),
    originalDestination: (socket) => o.inboundConnections.originalDestination(socket),
    protocol: (d) => capturedInboundProtocol(o.registry(), d),
    plaintextAllowed: o.plaintextAllowed,
    ...(o.inboundTls ? { tls: o.inboundTls } : {}),
    sourceAddress: INBOUND_PASSTHROUGH_SOURCE,
    onLog: o.onLog,
  });
  o.inboundConnections.watch(inbound.server);
  if (!o.inboundHttpBehindTls) o.inboundHttp.emit("listening");
  return { outbound, inbound };
}
