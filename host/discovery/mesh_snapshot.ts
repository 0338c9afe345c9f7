import type { Catalog } from "../config/catalog.ts";
import type { LoadedConfig } from "../config/config_dir.ts";
import { configResources } from "./config_distribution.ts";
import { buildRegistry, type MeshRegistry } from "../mesh/registry.ts";
import type { ProxyNode } from "./ads_server.ts";
import type { ExtensionProviders } from "../config/extension_providers.ts";
import { EncodedJson, VersionMemo } from "./encoded_json.ts";
import { DEFAULT_ENVOY_SERVING, type EnvoyMesh, type EnvoyServing, findWorkload, outboundListenerTemplates, workloadResources } from "./envoy_sidecar.ts";
import type { SplitListener } from "./envoy_outbound.ts";
import { PodListeners } from "./pod_listeners.ts";
import { LOCAL_MODULE, type ModuleSource } from "./envoy_wasm.ts";
import { xdsServices } from "./mesh_services.ts";
import { nodeIdentity, proxyKind } from "./proxy_kind.ts";
import { documentsInView } from "./push_scope.ts";
import { proxylessResources, type XdsService } from "./proxyless.ts";
import { carryUnchanged, type Resource, type ResourceSet, sameResources } from "./resource_set.ts";
import { CONFIG_DOCUMENT, ENDPOINT, LISTENER, SECRET } from "./type_urls.ts";
import { sdsSecrets, secretDocumentNamespace, secretNamespace } from "./secrets.ts";
import { DEFAULT_TRUST_DOMAIN } from "../security/workload.ts";

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
  /** The proxyless resources made in this version, by what they are made from (handed on to the next version). */
  readonly proxylessMemo: VersionMemo<Resource>;
  /** Proxyless resources plus the configuration documents our sidecars subscribe to (no Secret among them). */
  readonly all: ResourceSet;
  /** The Secret documents, by namespace: served only to proxies that proved an identity there (host/discovery/secrets.ts). */
  readonly secretDocuments: ReadonlyMap<string, ReadonlyMap<string, Resource>>;
  /** Envoy's SDS resources of the Secrets of a namespace, computed on first use. */
  readonly sdsViews: Map<string, Map<string, Resource>>;
  readonly envoy: EnvoyMesh;
  /** Envoy resource sets already computed, by workload view (namespace, labels, ports, scoped), without outbound listeners. */
  readonly envoyViews: Map<string, ResourceSet>;
  /** The same with the outbound listeners of one pod address (the one set of a view when DISCO_RESTRICT_POD_UP_TRAFFIC_LOOP is off). */
  readonly envoyPodViews: Map<string, ResourceSet>;
  /** The outbound listeners every Envoy gets, encoded once (on first use), each pod's loop guard spliced in. */
  readonly envoyOutbound: () => readonly SplitListener[];
  /**
   * One pod address's outbound listeners (the loop guard spliced in), by
   * name, encoded once per pod: kept from the version before when its
   * outbound listeners are the same (a change elsewhere, say one service's
   * endpoints, re-encodes and re-digests no pod's listeners).
   */
  readonly podOutbound: PodListeners;
  /** Whether an address is an endpoint of a headless service (computed once per version). */
  readonly headlessAddress: (ip: string) => boolean;
  /** Our sidecars' resource sets already computed, by namespace and scope (documents in its view). */
  readonly namespaceViews: Map<string, ResourceSet>;
  readonly rootNamespace: string;
  /** Each connected proxy's resource set in this version, by whether pushes are scoped. */
  readonly nodeSets: { readonly scoped: WeakMap<ProxyNode, ResourceSet>; readonly unscoped: WeakMap<ProxyNode, ResourceSet> };
  /** The views of the version before (not older ones): what a view shares with its namesake there is carried over (carryUnchanged). */
  readonly before?: Pick<MeshSnapshot, "envoyViews" | "sdsViews" | "namespaceViews">;
}

/** What shapes the served resources beyond the configuration (the daemon's variables). */
export interface SnapshotOptions {
  /** Where Envoy sidecars load the filter module from. */
  module?: ModuleSource;
  /** What spec 2's variables change in what Envoy is served; unset ones take the spec's defaults. */
  serving?: Partial<EnvoyServing>;
  /** meshConfig `extensionProviders` (CUSTOM AuthorizationPolicies' authorizers). */
  extensionProviders?: ExtensionProviders;
  /** The mesh's SPIFFE trust domain (default `cluster.local`): the identities outbound mutual TLS checks. */
  trustDomain?: string;
  /** meshConfig `enableAutoMtls` (default true). */
  enableAutoMtls?: boolean;
  /** The version served before this one: what did not change is taken from it instead of being encoded again. */
  previous?: MeshSnapshot;
}

export function meshSnapshot(
  version: number,
  loaded: Pick<LoadedConfig, "mesh" | "documents" | "plugin">,
  rootNamespace: string,
  options: SnapshotOptions = {},
): MeshSnapshot {
  const catalog = loaded.mesh;
  const registry = buildRegistry(catalog.byKind, { domain: catalog.domain });
  const services = xdsServices(registry, catalog, rootNamespace);
  const previous = options.previous;
  const proxylessMemo = new VersionMemo<Resource>(previous?.proxylessMemo);
  const proxyless = carryUnchanged(proxylessResources(services, proxylessMemo), previous?.proxyless);
  const documents = new Map<string, Resource>();
  const secretDocuments = new Map<string, Map<string, Resource>>();
  for (const [name, r] of configResources(loaded.documents)) {
    const ns = secretDocumentNamespace(name);
    if (ns === undefined) documents.set(name, r);
    else secretDocuments.set(ns, (secretDocuments.get(ns) ?? new Map()).set(name, r));
  }
  const all = carryUnchanged(new Map([...proxyless, [CONFIG_DOCUMENT, documents]]), previous?.all);
  const envoy: EnvoyMesh = {
    registry,
    encoded: new EncodedJson(options.previous?.envoy.encoded),
    catalog,
    services,
    pluginConfig: loaded.plugin,
    module: options.module ?? LOCAL_MODULE,
    endpoints: proxyless.get(ENDPOINT) ?? new Map<string, Resource>(),
    rootNamespace,
    trustDomain: options.trustDomain ?? DEFAULT_TRUST_DOMAIN,
    enableAutoMtls: options.enableAutoMtls ?? true,
    serving: { ...DEFAULT_ENVOY_SERVING, ...options.serving },
    ...(options.extensionProviders ? { extensionProviders: options.extensionProviders } : {}),
  };
  const podOutbound = new PodListeners(() => outboundListenerTemplates(envoy), envoy.serving, options.previous?.podOutbound);
  const envoyOutbound = () => podOutbound.templates();
  let headless: ReadonlySet<string> | undefined;
  const headlessAddress = (ip: string) =>
    ip !== "" && (headless ??= new Set(registry.services.flatMap((s) => (s.headless ? (s.instances ?? []).map((i) => i.address) : [])))).has(ip);
  return {
    version,
    catalog,
    registry,
    services,
    proxyless,
    proxylessMemo,
    all,
    secretDocuments,
    sdsViews: new Map(),
    envoy,
    envoyViews: new Map(),
    envoyPodViews: new Map(),
    envoyOutbound,
    podOutbound,
    headlessAddress,
    namespaceViews: new Map(),
    rootNamespace,
    nodeSets: { scoped: new WeakMap(), unscoped: new WeakMap() },
    ...(previous ? { before: { envoyViews: previous.envoyViews, sdsViews: previous.sdsViews, namespaceViews: previous.namespaceViews } } : {}),
  };
}

/**
 * The resources a proxy may subscribe to, by its kind (host/discovery/proxy_kind.ts):
 * proxyless clients and our sidecars get the API listeners and the
 * configuration documents; Envoy gets listeners, routes and clusters for its
 * workload and the filter's extension configuration (plus the documents,
 * which it never asks for). `scoped` (DISCO_SCOPE_PUSHES): a proxy whose
 * namespace is known is served the documents in its view only
 * (host/discovery/push_scope.ts), so a change outside it pushes nothing.
 * Secrets go only to a proxy that proved an identity of their namespace on
 * the secure port (host/discovery/secrets.ts): as documents to our sidecars,
 * as SDS resources to Envoy.
 */
export function resourcesFor(snapshot: MeshSnapshot, node: ProxyNode, scoped = true): ResourceSet {
  // A proxy asks once per subscription and is pushed to once per version: its set is worked out once per version.
  const memo = snapshot.nodeSets[scoped ? "scoped" : "unscoped"];
  let set = memo.get(node);
  if (!set) memo.set(node, (set = nodeResources(snapshot, node, scoped)));
  return set;
}

/** What a node is (its kind, the identity its id and metadata say) does not change while it is connected: parsed once. */
const parsedNodes = new WeakMap<ProxyNode, { kind: ReturnType<typeof proxyKind>; identity: ReturnType<typeof nodeIdentity> }>();

function nodeResources(snapshot: MeshSnapshot, node: ProxyNode, scoped: boolean): ResourceSet {
  let parsed = parsedNodes.get(node);
  if (!parsed) parsedNodes.set(node, (parsed = { kind: proxyKind(node), identity: nodeIdentity(node) }));
  const { kind, identity } = parsed;
  if (kind === "proxyless") return snapshot.all;
  const trusted = secretNamespace(node, identity?.namespace);
  const documents = (namespace: string) =>
    scoped ? documentsInView(snapshot.all.get(CONFIG_DOCUMENT)!, namespace, snapshot.rootNamespace) : snapshot.all.get(CONFIG_DOCUMENT)!;
  if (kind === "disco-agent") {
    if (!identity) return snapshot.all;
    const key = JSON.stringify([identity.namespace, scoped, trusted ?? null]);
    let set = snapshot.namespaceViews.get(key);
    if (!set) {
      const secrets = trusted === undefined ? [] : [...(snapshot.secretDocuments.get(trusted) ?? [])];
      set = carryUnchanged(
        new Map([
          ...snapshot.all,
          [CONFIG_DOCUMENT, secrets.length > 0 ? new Map([...documents(identity.namespace), ...secrets]) : documents(identity.namespace)],
        ]),
        snapshot.before?.namespaceViews.get(key),
      );
      snapshot.namespaceViews.set(key, set);
    }
    return set;
  }
  const who = identity ?? { type: "sidecar", ip: "", pod: node.id, namespace: "default" };
  const workload = findWorkload(snapshot.registry, who);
  // A gateway may be served fewer clusters; a pod of a headless service one pod listener fewer (its own).
  const ownPod = snapshot.envoy.serving.headlessPodListeners && snapshot.headlessAddress(who.ip) ? who.ip : null;
  const key = JSON.stringify([who.namespace, who.labels ?? workload?.labels ?? null, workload?.ports ?? null, scoped, who.type, ownPod]);
  let view = snapshot.envoyViews.get(key);
  if (!view) {
    view = carryUnchanged(
      new Map([...workloadResources(snapshot.envoy, who), [CONFIG_DOCUMENT, documents(who.namespace)]]),
      snapshot.before?.envoyViews.get(key),
    );
    snapshot.envoyViews.set(key, view);
  }
  // The outbound listeners depend on the pod's address only when they drop traffic to it.
  const podAddress = snapshot.envoy.serving.restrictPodTrafficLoop ? who.ip : "";
  const podKey = JSON.stringify([key, podAddress, trusted ?? null]);
  let set = snapshot.envoyPodViews.get(podKey);
  if (!set) {
    set = new Map([...view, [LISTENER, podListeners(view.get(LISTENER) ?? EMPTY, snapshot.podOutbound.of(podAddress))]]);
    if (trusted !== undefined) set.set(SECRET, sdsView(snapshot, trusted));
    snapshot.envoyPodViews.set(podKey, set);
  }
  return set;
}

const EMPTY: ReadonlyMap<string, Resource> = new Map();

/** A view's listeners and a pod's outbound ones, by the two maps: one map while both stay the same objects, from version to version. */
const podListenerMaps = new WeakMap<ReadonlyMap<string, Resource>, WeakMap<ReadonlyMap<string, Resource>, Map<string, Resource>>>();

function podListeners(view: ReadonlyMap<string, Resource>, pod: ReadonlyMap<string, Resource>): Map<string, Resource> {
  let byPod = podListenerMaps.get(view);
  if (!byPod) podListenerMaps.set(view, (byPod = new WeakMap()));
  let listeners = byPod.get(pod);
  if (!listeners) byPod.set(pod, (listeners = new Map([...view, ...pod])));
  return listeners;
}

/** Envoy's SDS resources of one namespace's Secrets (computed once per version, the version before's map when the same). */
function sdsView(snapshot: MeshSnapshot, namespace: string): Map<string, Resource> {
  let view = snapshot.sdsViews.get(namespace);
  if (!view) {
    view = sdsSecrets(snapshot.catalog.byKind.Secret, namespace);
    const before = snapshot.before?.sdsViews.get(namespace);
    if (before && sameResources(view, before)) view = before;
    snapshot.sdsViews.set(namespace, view);
  }
  return view;
}
