import type { Catalog } from "../config/catalog.ts";
import type { LoadedConfig } from "../proxy/config_dir.ts";
import { configResources } from "./config_distribution.ts";
import { buildRegistry, type MeshRegistry } from "../mesh/registry.ts";
import type { ProxyNode } from "./ads_server.ts";
import { xdsServices } from "./mesh_services.ts";
import { proxylessResources, type XdsService } from "./proxyless.ts";
import type { ResourceSet } from "./resource_set.ts";
import { CONFIG_DOCUMENT } from "./type_urls.ts";

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
  /** Proxyless resources plus the configuration documents our sidecars subscribe to. */
  readonly all: ResourceSet;
}

export function meshSnapshot(version: number, loaded: Pick<LoadedConfig, "mesh" | "documents">, rootNamespace: string): MeshSnapshot {
  const catalog = loaded.mesh;
  const registry = buildRegistry(catalog.byKind);
  const services = xdsServices(registry, catalog, rootNamespace);
  const proxyless = proxylessResources(services);
  const all: ResourceSet = new Map([...proxyless, [CONFIG_DOCUMENT, configResources(loaded.documents)]]);
  return { version, catalog, registry, services, proxyless, all };
}

/** The resources a proxy may subscribe to (each subscribes to the types it understands). */
export function resourcesFor(snapshot: MeshSnapshot, _node: ProxyNode): ResourceSet {
  return snapshot.all;
}
