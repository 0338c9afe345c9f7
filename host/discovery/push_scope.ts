import type { Resource } from "./resource_set.ts";

/**
 * Which proxies a change concerns (DISCO_SCOPE_PUSHES) and whether it is an
 * endpoint change (DISCO_ENABLE_EDS_DEBOUNCE), from the configuration
 * documents of two versions. Pure.
 *
 * RequestAuthentication and AuthorizationPolicy apply to workloads of their
 * own namespace and of the root namespace only (host/mesh/policies.ts
 * `policyApplies`): a sidecar is not served those of other namespaces, so a
 * change to them leaves its view, and its pushes, alone. Every other kind
 * stays in every view: PeerAuthentication of a destination decides a
 * client's auto mutual TLS, routing and registry kinds are mesh-wide.
 */

const WORKLOAD_ONLY_KINDS: ReadonlySet<string> = new Set(["RequestAuthentication", "AuthorizationPolicy"]);

/** `<Kind>/<namespace>/<name>` (host/discovery/config_distribution.ts) → kind and namespace. */
function kindAndNamespace(name: string): [string, string] {
  const [kind, namespace] = name.split("/", 2);
  return [kind, namespace ?? ""];
}

/** The documents a proxy of `namespace` is served: policies of other namespaces (not the root) left out. */
export function documentsInView(documents: ReadonlyMap<string, Resource>, namespace: string, rootNamespace: string): Map<string, Resource> {
  const out = new Map<string, Resource>();
  for (const [name, r] of documents) {
    const [kind, ns] = kindAndNamespace(name);
    if (WORKLOAD_ONLY_KINDS.has(kind) && ns !== "" && ns !== namespace && ns !== rootNamespace) continue;
    out.set(name, r);
  }
  return out;
}

/** The kinds of the documents added, removed or changed between two versions. */
export function changedKinds(before: ReadonlyMap<string, Resource>, after: ReadonlyMap<string, Resource>): Set<string> {
  const kinds = new Set<string>();
  for (const [name, r] of after) {
    const old = before.get(name);
    if (!old || !Buffer.from(old.any.value).equals(Buffer.from(r.any.value))) kinds.add(kindAndNamespace(name)[0]);
  }
  for (const name of before.keys()) if (!after.has(name)) kinds.add(kindAndNamespace(name)[0]);
  return kinds;
}

/** Kinds whose change is upstream's EDS update, not a config update. */
const ENDPOINT_KINDS: ReadonlySet<string> = new Set(["Endpoints", "EndpointSlice"]);

/** An endpoint-only change: every document changed is an orchestrator `Endpoints` or `EndpointSlice`. */
export function isEndpointChange(kinds: ReadonlySet<string>): boolean {
  return kinds.size > 0 && [...kinds].every((k) => ENDPOINT_KINDS.has(k));
}
