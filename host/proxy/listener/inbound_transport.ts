import type { Server as HttpServer } from "node:http";
import type { GatewayTlsServer } from "../../mesh/gateway_tls.ts";
import { serverForSni } from "../../mesh/gateway_tls.ts";
import type { ServerMtlsMode } from "../../security/mtls/peer_authn.ts";
import type { ScopedLogger } from "../../telemetry/logger.ts";
import type { ListenerGuard } from "../listener_limits.ts";
import type { WorkloadTls } from "../workload_tls.ts";
import { MtlsListener } from "./mtls_listener.ts";

/**
 * The TLS half of the inbound listener's connection stage, on the security
 * path: a sidecar's port speaks mesh mutual TLS as the applied
 * PeerAuthentication says (STRICT, PERMISSIVE, DISABLE, read per
 * connection), with the workload certificate, renewed in place; a gateway's
 * port speaks what its Gateway servers say, HTTPS with the credential chosen
 * by SNI (tls.mode SIMPLE) or plain HTTP.
 */

interface Common {
  /** The HTTP server the accepted connections are handed to (the connection manager's). */
  http: HttpServer;
  guard: ListenerGuard;
  onLog: (level: "debug" | "info" | "warn" | "error", message: string) => void;
  sds: Pick<ScopedLogger, "debug" | "info">;
}

export type InboundTransportOptions =
  | (Common & { tls: WorkloadTls; serverMode: () => ServerMtlsMode })
  | (Common & { gatewayServers: () => readonly GatewayTlsServer[] });

export function inboundTransport(o: InboundTransportOptions): MtlsListener {
  const deadlines = {
    onLog: o.onLog,
    firstBytesTimeoutMs: o.guard.limits.headerReadTimeoutMs,
    onTimeout: () => o.guard.headerTimeout(),
  };
  let listener: MtlsListener;
  if ("gatewayServers" in o) {
    const servers = () => o.gatewayServers().filter((s) => s.cert !== undefined);
    listener = new MtlsListener({
      http: o.http,
      mode: () => (servers().length > 0 ? "STRICT" : "DISABLE"),
      tls: () => ({ key: "", cert: "", ca: "" }),
      serverCertificate: (sni) => {
        const s = serverForSni(servers(), sni);
        return s ? { cert: s.cert!, key: s.key! } : null;
      },
      ...deadlines,
    });
  } else {
    const tls = o.tls;
    listener = new MtlsListener({ http: o.http, mode: o.serverMode, tls: () => tls.serverOptions(), ...deadlines });
    o.sds.debug(`workload certificate handed to the inbound listener: serial ${tls.current.serialNumber}, expires ${tls.current.expiresAt.toISOString()}`);
    const previous = tls.options.onRotated;
    tls.options.onRotated = (c) => {
      previous?.(c);
      listener.refresh();
      o.sds.info(`workload certificate handed to the listeners: serial ${c.serialNumber}, expires ${c.expiresAt.toISOString()}`);
    };
  }
  o.guard.guardAccepts(listener.server);
  return listener;
}
