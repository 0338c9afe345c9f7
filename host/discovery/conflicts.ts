import type { Catalog } from "../config/catalog.ts";
import { type MeshRegistry, servicesOfWorkload, targetContainerPort } from "../mesh/registry.ts";
import { boundGateways, virtualServiceHosts } from "../mesh/routing.ts";
import { HTTPS_PORT, isHttp } from "./envoy_sidecar.ts";
import { type OutboundServing, outboundKind } from "./envoy_outbound.ts";
import type { XdsService } from "./proxyless.ts";

/**
 * The configuration conflicts the control plane counts (spec 2 gauges;
 * docs/metrics.md): what upstream's push context finds when two resources
 * claim the same thing and one of them wins. Pure; computed once per
 * configuration version.
 */
export interface MeshConflicts {
  /** `disco_duplicate_proxy_clusters`: service ports declared again (same host and port) by another ServiceEntry or Service: the later is dropped. */
  duplicateClusters: number;
  /** `disco_destrule_subsets`: subset names a DestinationRule defines that another rule for the same host, in the same namespace, defines too. */
  duplicateSubsets: number;
  /** `disco_vservice_dup_domain`: hosts claimed by more than one VirtualService on the same gateway and namespace (the extra claims). */
  duplicateVirtualServiceDomains: number;
  /**
   * `disco_conflict_outbound_listener_tcp_over_current_http`: non-HTTP
   * service ports on a port whose outbound listener is HTTP (an Envoy
   * sidecar's `0.0.0.0_<port>`): that listener takes their traffic.
   */
  outboundTcpOverHttp: number;
  /**
   * `disco_conflict_outbound_listener_tcp_over_current_tcp`: services
   * without an address served by the TCP chains of one outbound port
   * (unnamed ports, Redis or Thrift with their filters on), beyond the
   * first: the port's wildcard chain cannot tell them apart and passes their
   * TCP traffic through (envoy_outbound.ts).
   */
  outboundTcpOverTcp: number;
  /**
   * `disco_conflict_outbound_listener_http_over_https`: HTTP service ports
   * on 443, whose outbound listener takes every connection to port 443,
   * TLS to external hosts included.
   */
  outboundHttpOverHttps: number;
  /**
   * `disco_conflict_inbound_listener`: container ports of a workload that an
   * HTTP and a non-HTTP service port both target (its `virtualInbound` HTTP
   * chain takes the port).
   */
  inbound: number;
}

/**
 * What the orchestrator `Endpoints` documents of the configuration say
 * about their addresses (upstream's registry gauges). Pure.
 */
export interface EndpointCounts {
  /** `disco_endpoint_not_ready`: `notReadyAddresses`, and with the registry every not-ready address it knows (EndpointSlices, Pods): left out of the load assignments. */
  notReady: number;
  /** `endpoint_no_pod`: ready addresses whose `targetRef` names no Pod of the configuration (or that have none). */
  noPod: number;
}

export function endpointCounts(catalog: Catalog, registry?: MeshRegistry): EndpointCounts {
  const pods = new Set(catalog.byKind.Pod.map((p) => `${p.namespace}/${p.name}`));
  let notReady = 0;
  let noPod = 0;
  for (const doc of catalog.byKind.Endpoints) {
    for (const subset of doc.spec.subsets) {
      notReady += subset.notReadyAddresses.length;
      for (const a of subset.addresses) if (a.targetRef?.kind !== "Pod" || !pods.has(`${a.targetRef.namespace ?? doc.namespace}/${a.targetRef.name}`)) noPod++;
    }
  }
  if (registry) notReady = registry.services.reduce((n, s) => n + (s.notReadyInstances?.length ?? 0), 0);
  return { notReady, noPod };
}

export function meshConflicts(catalog: Catalog, registry: MeshRegistry, services: readonly XdsService[], serving: OutboundServing): MeshConflicts {
  const httpPorts = new Set(services.filter((s) => isHttp(s.protocol)).map((s) => s.port));
  return {
    outboundTcpOverTcp: tcpOverTcp(registry, services, serving),
    duplicateClusters: extraClaims(registry.services.flatMap((s) => s.ports.map((p) => `${s.fqdn}:${p.port}`))),
    duplicateSubsets: extraClaims(catalog.byKind.DestinationRule.flatMap((r) => r.spec.subsets.map((s) => `${r.namespace}\0${r.spec.fqdn}\0${s.name}`))),
    duplicateVirtualServiceDomains: extraClaims(
      catalog.byKind.VirtualService.flatMap((vs) => boundGateways(vs).flatMap((g) => virtualServiceHosts(vs).map((h) => `${vs.namespace}\0${g}\0${h}`))),
    ),
    outboundTcpOverHttp: services.filter((s) => !isHttp(s.protocol) && httpPorts.has(s.port)).length,
    outboundHttpOverHttps: services.filter((s) => isHttp(s.protocol) && s.port === HTTPS_PORT).length,
    inbound: inboundConflicts(registry),
  };
}

function tcpOverTcp(registry: MeshRegistry, services: readonly XdsService[], serving: OutboundServing): number {
  const addressless = new Map<number, number>();
  const named = new Set(services.filter((s) => outboundKind(s.protocol, serving) === "http").map((s) => s.port));
  for (const s of services) {
    const kind = outboundKind(s.protocol, serving);
    if (kind === undefined || kind === "http" || named.has(s.port)) continue;
    if ((registry.services.find((m) => m.fqdn === s.host)?.addresses ?? []).length === 0) addressless.set(s.port, (addressless.get(s.port) ?? 0) + 1);
  }
  return [...addressless.values()].reduce((sum, n) => sum + n - 1, 0);
}

function inboundConflicts(registry: MeshRegistry): number {
  let conflicts = 0;
  for (const w of registry.workloads) {
    const http = new Set<number>();
    const other = new Set<number>();
    for (const s of servicesOfWorkload(registry, w)) {
      for (const p of s.ports) {
        const n = targetContainerPort(p, w);
        if (n !== undefined) (isHttp(p.protocol) ? http : other).add(n);
      }
    }
    for (const n of other) if (http.has(n)) conflicts++;
  }
  return conflicts;
}

/** How many claims come after the first claim of the same key. */
function extraClaims(keys: readonly string[]): number {
  return keys.length - new Set(keys).size;
}
