import type { Catalog } from "../config/catalog.ts";
import type { LoadedConfig } from "../proxy/config_dir.ts";
import { configResources } from "./config_distribution.ts";
import { buildRegistry, type MeshRegistry } from "../mesh/registry.ts";
import type { ProxyNode } from "./ads_server.ts";
import { envoyResources, findWorkload, type EnvoyMesh } from "./envoy_sidecar.ts";
import { LOCAL_MODULE, type ModuleSource } from "./envoy_wasm.ts";
import { xdsServices } from "./mesh_services.ts";
import { nodeIdentity, proxyKind } from "./proxy_kind.ts";
import { proxylessResources, type XdsService } from "./proxyless.ts";
import type { Resource, ResourceSet } from "./resource_set.ts";
import { CONFIG_DOCUMENT, ENDPOINT } from "./type_urls.ts";

/**
 * One version of the mesh as the control plane serves it: the decoded
 * configuration, the registry the mesh model builds from it, and the xDS
 * resources computed once per version and kind of proxy (proxyless clients
 * all get the same; Envoy sidecars one set per distinct workload view).
 */
export interface MeshSnapshot {
  readonly version: number;
  readonly catalog: Catalog;
  readonly registry: MeshRegistry;
  readonly services: readonly XdsService[];
  readonly proxyless: ResourceSet;
  /** Proxyless resources plus the configuration documents our sidecars subscribe to. */
  readonly all: ResourceSet;
  readonly envoy: EnvoyMesh;
  /** Envoy resource sets already computed, by workload view (namespace, labels, ports). */
  readonly envoyViews: Map<string, ResourceSet>;
}

export function meshSnapshot(version: number, loaded: Pick<LoadedConfig, "mesh" | "documents" | "plugin">, rootNamespace: string, module: ModuleSource = LOCAL_MODULE): MeshSnapshot {
  const catalog = loaded.mesh;
  const registry = buildRegistry(catalog.byKind);
  const services = xdsServices(registry, catalog, rootNamespace);
  const proxyless = proxylessResources(services);
  const documents = configResources(loaded.documents);
  const all: ResourceSet = new Map([...proxyless, [CONFIG_DOCUMENT, documents]]);
  const envoy: EnvoyMesh = { registry, catalog, services, pluginConfig: loaded.plugin, module, endpoints: proxyless.get(ENDPOINT) ?? new Map<string, Resource>(), rootNamespace };
  return { version, catalog, registry, services, proxyless, all, envoy, envoyViews: new Map() };
}

/**
 * The resources a proxy may subscribe to, by its kind (host/discovery/proxy_kind.ts):
 * proxyless clients and our sidecars get the API listeners and the
 * configuration documents; Envoy gets listeners, routes and clusters for its
 * workload and the filter's extension configuration (plus the documents,
 * which it never asks for).
 */
export function resourcesFor(snapshot: MeshSnapshot, node: ProxyNode): ResourceSet {
  if (proxyKind(node) !== "envoy") return snapshot.all;
  const who = nodeIdentity(node) ?? { type: "sidecar", ip: "", pod: node.id, namespace: "default" };
  const workload = findWorkload(snapshot.registry, who);
  const key = JSON.stringify([who.namespace, who.labels ?? workload?.labels ?? null, workload?.ports ?? null]);
  let set = snapshot.envoyViews.get(key);
  if (!set) {
    set = new Map([...envoyResources(snapshot.envoy, who), [CONFIG_DOCUMENT, snapshot.all.get(CONFIG_DOCUMENT)!]]);
    snapshot.envoyViews.set(key, set);
  }
  return set;
}
