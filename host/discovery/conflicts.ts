import type { Catalog } from "../config/catalog.ts";
import { resolveResourceHost } from "../mesh/hosts.ts";
import type { MeshRegistry } from "../mesh/registry.ts";
import { boundGateways, virtualServiceHosts } from "../mesh/routing.ts";

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
}

export function meshConflicts(catalog: Catalog, registry: MeshRegistry): MeshConflicts {
  return {
    duplicateClusters: extraClaims(registry.services.flatMap((s) => s.ports.map((p) => `${s.fqdn}:${p.port}`))),
    duplicateSubsets: extraClaims(catalog.byKind.DestinationRule.flatMap((r) => r.spec.subsets.map((s) => `${r.namespace}\0${resolveResourceHost(r.spec.host, r.namespace)}\0${s.name}`))),
    duplicateVirtualServiceDomains: extraClaims(catalog.byKind.VirtualService.flatMap((vs) => boundGateways(vs).flatMap((g) => virtualServiceHosts(vs).map((h) => `${vs.namespace}\0${g}\0${h}`)))),
  };
}

/** How many claims come after the first claim of the same key. */
function extraClaims(keys: readonly string[]): number {
  return keys.length - new Set(keys).size;
}
