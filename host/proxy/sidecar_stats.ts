import type { SafetyNet } from "../daemon/safety_net.ts";
import type { EndpointFlag } from "../hub/clusters.ts";
import { clusterName } from "../mesh/cluster_names.ts";
import type { ClusterInfo, ListenerInfo } from "./admin_envoy.ts";
import type { Counters } from "./counters.ts";
import type { FilterHost } from "./filters/filter_host.ts";
import type { TcpProxy } from "./filters/tcp_proxy.ts";
import type { HttpConnectionManager } from "./http/connection_manager.ts";
import type { MtlsListener } from "./listener/mtls_listener.ts";
import type { CapturedInboundStats } from "./listener/captured_inbound.ts";
import type { CapturedOutboundStats } from "./listener/captured_outbound.ts";

/**
 * What the sidecar's admin port shows of its parts: /stats (every stage's
 * counters, under Envoy-like names), /clusters and /listeners.
 */

/** Stats that go up and down (exported as gauges; every other stat is a counter). */
export const GAUGE_STATS: ReadonlySet<string> = new Set(["listener.inbound.active", "listener.outbound.active", "listener.tcp.active"]);

export interface StatsSources {
  filter: Pick<FilterHost, "metrics" | "restarts">;
  inbound: Pick<HttpConnectionManager, "stats" | "guard">;
  outbound: Pick<HttpConnectionManager, "stats" | "guard">;
  tcp?: Pick<TcpProxy, "stats">;
  extraStats?: () => Map<string, number>;
  /** The security path's counters, inbound transport and certificate rotations (absent without the security path). */
  security?: { counters: Counters; mtls?: Pick<MtlsListener, "stats">; rotations: number };
  safetyNet?: Pick<SafetyNet, "caught">;
  /** The capture stages' counters (under traffic capture). */
  captured?: { outbound?: CapturedOutboundStats; inbound?: CapturedInboundStats };
  configApplied: number;
  configErrors: number;
}

export function sidecarStats(s: StatsSources): Map<string, number | bigint> {
  const out = new Map<string, number | bigint>();
  for (const [name, value] of s.filter.metrics()) out.set(name, value);
  for (const [name, proxy] of [
    ["inbound", s.inbound],
    ["outbound", s.outbound],
  ] as const) {
    out.set(`listener.${name}.requests`, proxy.stats.requests);
    out.set(`listener.${name}.local_replies`, proxy.stats.localReplies);
    out.set(`listener.${name}.upstream_errors`, proxy.stats.upstreamErrors);
    out.set(`listener.${name}.active`, proxy.stats.active);
    for (const [reason, n] of Object.entries(proxy.stats.rejectedTargets)) out.set(`listener.${name}.rejected_targets.${reason}`, n);
    for (const [details, n] of Object.entries(proxy.stats.rejectedFraming)) out.set(`listener.${name}.rejected_framing.${details}`, n);
    const g = proxy.guard;
    out.set(`listener.${name}.connections`, g.open.connections);
    out.set(`listener.${name}.connections_refused`, g.stats.connectionsRefused);
    out.set(`listener.${name}.connections_evicted`, g.stats.connectionsEvicted);
    out.set(`listener.${name}.header_timeouts`, g.stats.headerTimeouts);
    out.set(`listener.${name}.idle_timeouts`, g.stats.idleTimeouts);
    out.set(`listener.${name}.requests_refused`, g.stats.requestsRefused);
    out.set(`listener.${name}.malformed_requests`, g.stats.malformedRequests);
  }
  if (s.tcp) {
    out.set("listener.tcp.connections", s.tcp.stats.connections);
    out.set("listener.tcp.denied", s.tcp.stats.denied);
    out.set("listener.tcp.active", s.tcp.stats.active);
  }
  const c = s.captured?.outbound;
  if (c) {
    out.set("listener.outbound.captured_direct", c.direct);
    out.set("listener.outbound.captured_http", c.http);
    out.set("listener.outbound.captured_tcp", c.tcp);
    out.set("listener.outbound.captured_passthrough", c.passthrough);
    out.set("listener.outbound.captured_blackhole", c.blackhole);
    out.set("listener.outbound.captured_upstream_failures", c.upstreamFailures);
    out.set("listener.outbound.captured_tcp_mtls", c.mtls);
  }
  if (s.captured?.inbound) {
    out.set("listener.inbound.captured_tcp", s.captured.inbound.tcp);
    out.set("listener.inbound.captured_tcp_refused", s.captured.inbound.refused);
    out.set("listener.inbound.captured_tcp_mtls", s.captured.inbound.mtls);
  }
  for (const [name, value] of s.extraStats?.() ?? []) out.set(name, value);
  if (s.security) {
    for (const [name, value] of s.security.counters.entries()) out.set(name, value);
    if (s.security.mtls) {
      out.set("listener.inbound.tls_connections", s.security.mtls.stats.tls);
      out.set("listener.inbound.plaintext_connections", s.security.mtls.stats.plaintext);
      out.set("listener.inbound.tls_handshake_failures", s.security.mtls.stats.handshakeFailures);
    }
    out.set("workload_certificate.rotations", s.security.rotations);
  }
  out.set("filter.vm_restarts", s.filter.restarts);
  if (s.safetyNet) out.set("server.uncaught_request_errors", s.safetyNet.caught);
  out.set("config.applied", s.configApplied);
  out.set("config.errors", s.configErrors);
  return out;
}

/** What /clusters lists: the app's cluster(s), the `--cluster` names, one `outbound|<port>||<host>` per `--endpoint`. */
export interface ClusterSources {
  appHost: string;
  appPort: number;
  tcpAppPort?: number;
  clusters: ReadonlyMap<string, { host: string; port: number; hosts?: ReadonlyArray<{ host: string; port: number }> }>;
  endpoints: Iterable<EndpointFlag>;
}

export function clusterInfo(o: ClusterSources): ClusterInfo[] {
  return [
    { name: `inbound|${o.appPort}||`, hosts: [{ address: o.appHost, port: o.appPort }] },
    ...(o.tcpAppPort !== undefined ? [{ name: `inbound|${o.tcpAppPort}||tcp`, hosts: [{ address: o.appHost, port: o.tcpAppPort }] }] : []),
    ...[...o.clusters].map(([name, c]) => ({ name, hosts: (c.hosts ?? [c]).map((h) => ({ address: h.host, port: h.port })) })),
    ...[...o.endpoints].map((e) => ({
      name: clusterName(e.host, e.servicePort),
      hosts: [{ address: e.address.host, port: e.address.port }],
    })),
  ];
}

/** What /listeners lists: each bound listener with its address (outbound and admin have their own bind addresses). */
export function listenerInfo(
  o: { bindAddress: string; outboundBindAddress: string; adminBindAddress: string },
  bound: ReadonlyArray<readonly [string, number]>,
): ListenerInfo[] {
  const address: Record<string, string> = { outbound: o.outboundBindAddress, admin: o.adminBindAddress };
  return bound.map(([name, port]) => ({ name, address: address[name] ?? o.bindAddress, port }));
}
