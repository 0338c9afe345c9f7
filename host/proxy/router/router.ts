import { INBOUND_PASSTHROUGH_SOURCE } from "../../capture/iptables_rules.ts";
import type { UpstreamEndpoint } from "../cluster/cluster_manager.ts";
import type { UpstreamLimits } from "../cluster/upstream_limits.ts";
import type { TlsOrigin } from "../../wire/h1/tls_connector.ts";
import type { Counters } from "../counters.ts";
import type { RouteDecision, RouteRequest } from "./route_decision.ts";
import type { RouteResult, RouteTable, ServedRoute } from "./routes.ts";

/**
 * The routers of the sidecar's listeners (Envoy's router filter, deciding
 * half; router/upstream_request.ts sends): each turns a request into a
 * RouteDecision, a host and port with client TLS and cluster limits, or a
 * local reply. The mesh router reads the applied configuration's route
 * table, which the sidecar hands it on every change (`configure`).
 */

/**
 * Where the inbound listener's app is: a captured connection's original
 * destination (the pod's address and the port the peer called), dialled
 * from 127.0.0.6 as upstream's inbound passthrough does (the capture rules
 * leave that source alone); any other request to --appHost:--appPort.
 */
export class AppRouter {
  private readonly decision: RouteDecision;

  constructor(app: { host: string; port: number }) {
    this.decision = Object.freeze({ kind: "forward", host: app.host, port: app.port });
  }

  route(request: RouteRequest): RouteDecision {
    const d = request.destination;
    return d ? { kind: "forward", host: d.address, port: d.port, localAddress: INBOUND_PASSTHROUGH_SOURCE } : this.decision;
  }
}

/** Named upstreams (`--cluster NAME=HOST:PORT`): the outbound listener sends a request whose host is a name there to its first address. */
export type NamedClusters = ReadonlyMap<string, { host: string; port: number }>;

/**
 * The outbound listener without the security path: the `--cluster` named by
 * the Host header, else the Host itself (port 80 when none), plain text.
 */
export class PlainOutboundRouter {
  constructor(private readonly clusters: NamedClusters) {}

  route(request: RouteRequest): RouteDecision | null {
    const authority = request.authority;
    const host = hostOf(authority);
    const cluster = this.clusters.get(host) ?? this.clusters.get(authority);
    if (cluster) return { kind: "forward", host: cluster.host, port: cluster.port };
    const port = Number(authority.slice(host.length + 1)) || 80;
    return host ? { kind: "forward", host, port } : null;
  }
}

/** The client side of mutual TLS toward an endpoint: how the workload certificate's connections reach one destination. */
export interface ClientTlsSource {
  upstreamTls(host: string, servicePort: number, expectedIdentity: string | undefined): TlsOrigin;
}

/** The last routes VirtualServices chose (newest last, at most 64), for /config_dump and simulate. */
export class ServedRoutes {
  readonly list: Array<ServedRoute & { count: number }> = [];

  record(s: ServedRoute): void {
    const key = (x: ServedRoute) => `${x.virtualService}|${x.routeIndex}|${x.destination}`;
    const i = this.list.findIndex((x) => key(x) === key(s));
    const count = i >= 0 ? this.list.splice(i, 1)[0].count + 1 : 1;
    this.list.push({ ...s, count });
    if (this.list.length > 64) this.list.shift();
  }
}

/**
 * The security path's router: outbound (or, for a gateway, inbound) by the
 * route table; mutual TLS with the workload certificate where the cluster
 * manager says so; connection-pool and outlier limits by the cluster's
 * DestinationRule. Counts `route.*`, `outbound.mtls`, `outbound.plaintext`.
 */
export class MeshRouter {
  private table: RouteTable | undefined;

  constructor(
    private readonly direction: "outbound" | "gateway",
    private readonly named: NamedClusters,
    private readonly tls: ClientTlsSource,
    private readonly limits: UpstreamLimits,
    private readonly counters: Counters,
    private readonly served: ServedRoutes,
  ) {}

  configure(table: RouteTable): void {
    this.table = table;
  }

  route(request: RouteRequest): RouteDecision {
    const table = this.table;
    if (!table) throw new Error("no route table applied");
    return this.decide(table, this.direction === "gateway" ? table.gatewayRoute(request) : table.outbound(request, this.named));
  }

  private decide(table: RouteTable, r: RouteResult): RouteDecision {
    this.counters.bump(`route.${r.kind === "reply" ? `local_reply_${r.reply.status}` : r.route.split("|")[0] || "forward"}`);
    if (r.served) this.served.record(r.served);
    if (r.kind === "reply") return { kind: "reply", reply: r.reply, delayMs: r.delayMs };
    const upstream = r.upstream && this.limits.control(r.upstream);
    if (!r.mtls) {
      if (r.endpoint) this.counters.bump("outbound.plaintext");
      return { kind: "forward", host: r.host, port: r.port, actions: r.actions, upstream };
    }
    this.counters.bump("outbound.mtls");
    const ep: UpstreamEndpoint = r.endpoint!;
    return {
      kind: "forward",
      host: r.host,
      port: r.port,
      tls: this.tls.upstreamTls(ep.host, ep.servicePort, table.clusters.expectedIdentity(ep)),
      actions: r.actions,
      upstream,
    };
  }
}

function hostOf(authority: string): string {
  if (authority.startsWith("[")) return authority.slice(0, authority.indexOf("]") + 1);
  const colon = authority.lastIndexOf(":");
  return colon >= 0 ? authority.slice(0, colon) : authority;
}
