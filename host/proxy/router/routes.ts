import type { Catalog, Resource } from "../../config/catalog.ts";
import type { HeaderOperations, HttpRetry, HttpRoute } from "../../config/resources/networking.ts";
import { MESH_GATEWAY } from "../../config/resources/networking.ts";

import { clusterName } from "../../mesh/cluster_names.ts";
import { type GatewayTlsServer, gatewayTlsServers } from "../../mesh/gateway_tls.ts";
import { splitAuthority } from "../../mesh/hosts.ts";
import { containerPortForServicePort, resolveAuthority } from "../../mesh/registry.ts";
import { type RequestFacts, fires, gatewayServersFor, routeRequest, serverAdmits } from "../../mesh/routing.ts";
import type { ClientTls } from "../../security/mtls/destination_rule.ts";
import type { Workload } from "../../security/workload.ts";
import type { LocalReply } from "../../wasm/abi_types.ts";
import { type ClusterManager, type UpstreamCluster, type UpstreamEndpoint, entryTarget } from "../cluster/cluster_manager.ts";
import type { MeshSettings } from "../mesh_config.ts";
import type { RouteRequest } from "./route_decision.ts";

/**
 * The sidecar's route table for one configuration (issue 11; security.md
 * §2, §6): where an outbound or gateway request goes. The host, in any of
 * upstream's forms, is resolved by the mesh model; the VirtualServices bound
 * to `mesh` (or to a Gateway of this gateway) route it (match, weighted
 * split, rewrite, redirect, directResponse, headers, timeout, retries,
 * fault, mirror); the destination's endpoint and client TLS come from the
 * cluster manager.
 */

export interface RouteIdentity {
  /** The workload this sidecar runs for (labels, namespace: VirtualService sourceLabels and short hosts). */
  readonly workload: Workload;
  /** The container port the listener stands for (a gateway's servers are matched on it). */
  readonly containerPort: number;
  readonly gateway: boolean;
}

export type { RouteRequest };

/** Which VirtualService, route index and destination served a request (simulate's `route`, /config_dump). */
export interface ServedRoute {
  readonly virtualService: string;
  readonly routeIndex: number;
  readonly destination: string;
}

/** What a VirtualService route does to a forwarded request. */
export interface RouteActions {
  readonly path?: string;
  readonly authority?: string;
  readonly setHeaders: ReadonlyArray<readonly [string, string]>;
  readonly addHeaders: ReadonlyArray<readonly [string, string]>;
  readonly removeHeaders: readonly string[];
  readonly responseHeaders: readonly HeaderOperations[];
  readonly timeoutMs?: number;
  readonly retries?: HttpRetry;
  readonly delayMs?: number;
  readonly mirror?: { readonly host: string; readonly port: number };
}

export type RouteResult =
  | {
      kind: "forward";
      host: string;
      port: number;
      mtls: ClientTls | null;
      endpoint: UpstreamEndpoint | null;
      route: string;
      served?: ServedRoute;
      actions?: RouteActions;
      upstream?: UpstreamCluster;
    }
  | { kind: "reply"; reply: LocalReply; route: string; served?: ServedRoute; delayMs?: number };

const empty = (status: number, details: string): LocalReply => ({ status, details, body: "", headers: [], grpcStatus: -1 });

export class RouteTable {
  constructor(
    readonly catalog: Catalog,
    readonly mesh: MeshSettings,
    readonly identity: RouteIdentity,
    readonly clusters: ClusterManager,
    private readonly random: () => number = Math.random,
  ) {}

  /**
   * Where a sidecar's outbound request goes (security.md §2, §6): the host
   * in any of upstream's forms is resolved by the mesh model; a
   * VirtualService bound to `mesh` for it routes the request (match, weighted
   * split, rewrite, redirect, directResponse, headers, timeout, retries,
   * fault, mirror); the destination is an endpoint of the service port in the
   * registry (the documents' Services, Pods, Endpoints and ServiceEntries,
   * plus `--endpoint`), round robin, with the client TLS the DestinationRule
   * or auto mutual TLS decides; a pod's own address is that endpoint; else a
   * `--cluster` named by the host (plain); else ALLOW_ANY passes through to
   * the original destination (captured) or the host itself, REGISTRY_ONLY
   * answers 502 from the fallthrough route (404 with it disabled) unless a
   * ServiceEntry registers the host.
   */
  outbound(request: RouteRequest | string, clusters: ReadonlyMap<string, { host: string; port: number }>): RouteResult {
    const req = typeof request === "string" ? { authority: request, method: "GET", path: "/", headers: [] } : request;
    const resolved = this.resolve(req);
    const routed = this.routeByVirtualService(req, resolved.host, resolved.port, MESH_GATEWAY);
    if (routed) return routed;
    const ep = this.clusters.pick(resolved.host, resolved.port);
    if (ep) return this.toEndpoint(ep, clusterName(resolved.host, resolved.port));
    if (this.clusters.endpointsOf(resolved.host, resolved.port).length > 0) {
      // Every endpoint is ejected by outlier detection (no panic mode, upstream's minHealthPercent 0).
      return {
        kind: "reply",
        reply: { status: 503, details: "no_healthy_upstream", body: "no healthy upstream", headers: [], grpcStatus: -1 },
        route: clusterName(resolved.host, resolved.port),
      };
    }
    const host = splitAuthority(req.authority).host;
    // A pod's own address: that endpoint, with the client TLS its service port's cluster decides.
    const direct = resolved.service ? undefined : this.clusters.endpointAt(host, resolved.port);
    if (direct) return this.toEndpoint(direct, clusterName(direct.host, direct.servicePort));
    const cluster = clusters.get(host) ?? clusters.get(req.authority);
    if (cluster) return { kind: "forward", host: cluster.host, port: cluster.port, mtls: null, endpoint: null, route: `cluster|${host}` };
    if (this.mesh.outboundTrafficPolicy === "REGISTRY_ONLY" && !resolved.service) {
      return this.mesh.enableFallthroughRoute
        ? { kind: "reply", reply: empty(502, "registry_only_fallthrough"), route: "BlackHoleCluster" }
        : { kind: "reply", reply: empty(404, "route_not_found"), route: "none" };
    }
    // ALLOW_ANY: a captured connection goes on to where it was going (Envoy's PassthroughCluster is ORIGINAL_DST).
    const original = resolved.service ? undefined : req.destination;
    if (original) return { kind: "forward", host: original.address, port: original.port, mtls: null, endpoint: null, route: "PassthroughCluster" };
    if (!host) return { kind: "reply", reply: empty(404, "route_not_found"), route: "none" };
    const port = splitAuthority(req.authority).port ?? resolved.service?.ports[0]?.port ?? 80;
    const target = resolved.service?.source === "ServiceEntry" ? entryTarget(resolved.service.resource as Resource<"ServiceEntry">, port) : undefined;
    return {
      kind: "forward",
      host: target?.host ?? host,
      port: target?.port ?? port,
      mtls: null,
      endpoint: null,
      route: resolved.service ? clusterName(resolved.host, port) : "PassthroughCluster",
    };
  }

  /**
   * The service and port a request names. Without a port in the Host, the
   * port the connection was sent to (captured), else the service's only
   * port: upstream's sidecar listener is per port and ignores the Host's port.
   */
  private resolve(req: RouteRequest): ReturnType<typeof resolveAuthority> {
    const ns = this.identity.workload.namespace;
    const resolved = resolveAuthority(this.clusters.registry, req.authority, ns, req.destination?.port);
    const ports = resolved.service?.ports;
    if (splitAuthority(req.authority).port !== undefined || !ports || ports.some((p) => p.port === resolved.port) || ports.length !== 1) return resolved;
    return { ...resolved, port: ports[0].port };
  }

  private toEndpoint(ep: UpstreamEndpoint, route: string, subset?: string): RouteResult {
    const c = this.clusters.connect(ep, subset);
    if (c.kind === "reply") return { kind: "reply", reply: c.reply, route };
    return { kind: "forward", host: c.host, port: c.port, mtls: c.mtls, endpoint: c.endpoint, route, upstream: c.upstream };
  }

  /**
   * Gateway routing (issue 6 item 5, issue 11; security.md §6): Gateways in
   * any namespace selecting this workload with a server whose port — a port
   * of the gateway's Service, translated to the container port this
   * listener stands for — is ours and whose hosts cover the Host; then the
   * VirtualServices bound to one of them, routed as a sidecar routes. No
   * match → 404 with an empty body; a destination not in the registry → 503.
   */
  /** The HTTPS (tls.mode SIMPLE) Gateway servers this gateway terminates on its port, with their credentials; empty: plain HTTP. */
  gatewayTls(): GatewayTlsServer[] {
    if (!this.identity.gateway) return [];
    const w = this.identity.workload;
    return gatewayTlsServers(this.catalog.byKind.Gateway, this.catalog.byKind.Secret, w, this.identity.containerPort, (servicePort) =>
      containerPortForServicePort(this.clusters.registry, w, servicePort),
    );
  }

  gatewayRoute(request: RouteRequest | string): RouteResult {
    const req = typeof request === "string" ? { authority: request, method: "GET", path: "/", headers: [] } : request;
    const { host } = splitAuthority(req.authority);
    const w = this.identity.workload;
    const servers = gatewayServersFor(this.catalog.byKind.Gateway, w.labels, this.identity.containerPort, host, (servicePort) =>
      containerPortForServicePort(this.clusters.registry, w, servicePort),
    );
    for (const { gateway, server } of servers) {
      const key = `${gateway.namespace}/${gateway.name}`;
      const admitted = this.catalog.byKind.VirtualService.filter((vs) => serverAdmits(server, gateway.namespace, vs));
      const routed = this.routeByVirtualService(req, host, server.port.number, key, admitted, `${key}|`);
      if (routed) return routed;
    }
    return { kind: "reply", reply: empty(404, "route_not_found"), route: "none" };
  }

  /** Routes by the VirtualServices for a host on a gateway (`mesh` for the sidecar); undefined when none applies. */
  private routeByVirtualService(
    req: RouteRequest,
    host: string,
    port: number,
    gateway: string,
    candidates = this.catalog.byKind.VirtualService,
    prefix = "",
  ): RouteResult | undefined {
    const facts: RequestFacts = {
      method: req.method,
      path: req.path,
      authority: req.authority,
      host,
      port,
      headers: req.headers,
      sourceLabels: this.identity.workload.labels,
      sourceNamespace: this.identity.workload.namespace,
      gateway,
    };
    const { choice, hasVirtualService } = routeRequest(candidates, facts, this.random);
    if (!choice) {
      // A VirtualService covers the host but no route matches: upstream answers 404.
      return hasVirtualService ? { kind: "reply", reply: empty(404, "route_not_found"), route: `${prefix}none` } : undefined;
    }
    const r = choice.route;
    const d = choice.destination?.destination;
    const served = {
      virtualService: choice.virtualService,
      routeIndex: choice.routeIndex,
      destination: d ? `${d.fqdn}${d.port ? `:${d.port}` : ""}${d.subset ? `|${d.subset}` : ""}` : r.redirect ? "redirect" : "directResponse",
    };
    const routeName = `${prefix}${choice.virtualService}|${choice.routeIndex}`;
    const delayMs = r.fault?.delay && fires(r.fault.delay.percentage, this.random) ? r.fault.delay.fixedDelayMs : undefined;
    if (r.fault?.abort && fires(r.fault.abort.percentage, this.random)) {
      return {
        kind: "reply",
        reply: { status: r.fault.abort.httpStatus, details: "fault_filter_abort", body: "fault filter abort", headers: [], grpcStatus: -1 },
        route: routeName,
        served,
        delayMs,
      };
    }
    if (r.directResponse) {
      return {
        kind: "reply",
        reply: { status: r.directResponse.status, details: "direct_response", body: r.directResponse.body ?? "", headers: [], grpcStatus: -1 },
        route: routeName,
        served,
        delayMs,
      };
    }
    if (r.redirect) {
      const rd = r.redirect;
      const { host: h, port: p } = splitAuthority(req.authority);
      const authority = rd.authority ?? (rd.port ? `${h}:${rd.port}` : p ? `${h}:${p}` : h);
      const location = `${rd.scheme ?? "http"}://${authority}${rd.uri ?? req.path}`;
      return {
        kind: "reply",
        reply: { status: rd.redirectCode, details: "redirect", body: "", headers: [["location", location]], grpcStatus: -1 },
        route: routeName,
        served,
        delayMs,
      };
    }
    if (!d) return { kind: "reply", reply: empty(404, "route_not_found"), route: routeName, served };
    const destPort = d.port ?? this.clusters.servicePort(d.fqdn, port);
    const ep = this.clusters.pick(d.fqdn, destPort, d.subset);
    if (d.subset && !ep && this.clusters.pick(d.fqdn, destPort)) {
      // The subset is undefined or selects no endpoint: upstream's 503 (no healthy upstream).
      return {
        kind: "reply",
        reply: { status: 503, details: "no_healthy_upstream", body: "no healthy upstream", headers: [], grpcStatus: -1 },
        route: `${routeName}|${d.fqdn}:${destPort}|${d.subset}`,
        served,
        delayMs,
      };
    }
    const destRoute = `${routeName}|${d.fqdn}:${destPort}${d.subset ? `|${d.subset}` : ""}`;
    let result: RouteResult;
    if (ep) result = this.toEndpoint(ep, destRoute, d.subset);
    else if (this.clusters.registry.services.some((s) => s.source === "ServiceEntry" && s.fqdn === d.fqdn)) {
      const entry = this.clusters.registry.services.find((s) => s.fqdn === d.fqdn)!.resource as Resource<"ServiceEntry">;
      const t = entryTarget(entry, destPort);
      result = { kind: "forward", host: t.host, port: t.port, mtls: null, endpoint: null, route: destRoute };
    } else
      return {
        kind: "reply",
        reply: { status: 503, details: "no_healthy_upstream", body: "no healthy upstream", headers: [], grpcStatus: -1 },
        route: destRoute,
        served,
        delayMs,
      };
    if (result.kind === "reply") return { ...result, served };
    const ops = [r.headers.request, choice.destination!.headers.request];
    const mirror =
      r.mirror && fires(r.mirrorPercentage, this.random)
        ? this.clusters.pick(r.mirror.fqdn, r.mirror.port ?? this.clusters.servicePort(r.mirror.fqdn, port), r.mirror.subset)
        : undefined;
    return {
      ...result,
      served,
      actions: {
        path: r.rewrite?.uri !== undefined ? rewritePath(req.path, r.rewrite.uri, matchedPrefix(r, facts)) : undefined,
        authority: r.rewrite?.authority,
        setHeaders: ops.flatMap((o) => Object.entries(o.set)),
        addHeaders: ops.flatMap((o) => Object.entries(o.add)),
        removeHeaders: ops.flatMap((o) => o.remove),
        responseHeaders: [r.headers.response, choice.destination!.headers.response],
        timeoutMs: r.timeoutMs,
        retries: r.retries,
        delayMs,
        mirror: mirror ? { host: mirror.address.host, port: mirror.address.port } : undefined,
      },
    };
  }
}

/** The prefix a route's uri match matched, for a prefix rewrite (upstream replaces only that part). */
function matchedPrefix(r: HttpRoute, facts: RequestFacts): string | undefined {
  const path = facts.path.split("?")[0];
  for (const m of r.match) if (m.uri && "prefix" in m.uri && path.startsWith(m.uri.prefix)) return m.uri.prefix;
  return undefined;
}

/** A `rewrite.uri`: replaces the matched prefix (or the whole path when the match was not a prefix); the query string stays. */
export function rewritePath(path: string, uri: string, prefix: string | undefined): string {
  const q = path.indexOf("?");
  const p = q < 0 ? path : path.slice(0, q);
  const query = q < 0 ? "" : path.slice(q);
  const rewritten = prefix !== undefined ? uri + p.slice(prefix.length) : uri;
  return (rewritten === "" ? "/" : rewritten) + query;
}
