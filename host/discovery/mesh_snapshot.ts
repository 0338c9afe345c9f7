import type { Catalog } from "../config/catalog.ts";
import { buildRegistry, type MeshRegistry } from "../mesh/registry.ts";
import type { ProxyNode } from "./ads_server.ts";
import { xdsServices } from "./mesh_services.ts";
import { proxylessResources, type XdsService } from "./proxyless.ts";
import type { ResourceSet } from "./resource_set.ts";

/**
 * One version of the mesh as the control plane serves it: the decoded
 * configuration, the registry the mesh model builds from it, and the xDS
 * resources computed once per version (every proxy of a kind gets the same
 * resources; per-proxy views select from them).
 */
export interface MeshSnapshot {
  readonly version: number;
  readonly catalog: Catalog;
  readonly registry: MeshRegistry;
  readonly services: readonly XdsService[];
  readonly proxyless: ResourceSet;
}

export function meshSnapshot(version: number, catalog: Catalog, rootNamespace: string): MeshSnapshot {
  const registry = buildRegistry(catalog.byKind);
  const services = xdsServices(registry, catalog, rootNamespace);
  return { version, catalog, registry, services, proxyless: proxylessResources(services) };
}

/** The resources a proxy is served (proxyless gRPC clients and, for now, every other node alike). */
export function resourcesFor(snapshot: MeshSnapshot, _node: ProxyNode): ResourceSet {
  return snapshot.proxyless;
}
