import { createHash } from "node:crypto";

/** One named xDS resource, encoded (google.protobuf.Any). */
export interface Resource {
  readonly name: string;
  readonly any: { readonly type_url: string; readonly value: Uint8Array };
}

/** What a proxy may be served: type URL → resource name → resource. */
export type ResourceSet = Map<string, Map<string, Resource>>;

/**
 * The resources of `type` a subscription asks for: all of them for a
 * wildcard subscription, else the named ones that exist (state of the world:
 * a name the server does not know is simply absent).
 */
export function selectResources(set: ResourceSet, type: string, names: ReadonlySet<string> | "*"): Resource[] {
  const all = set.get(type) ?? new Map<string, Resource>();
  const picked = names === "*" ? [...all.values()] : [...names].flatMap((n) => (all.has(n) ? [all.get(n)!] : []));
  return picked.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

const digests = new WeakMap<Resource, string>();

/** A resource's digest (its name, type and encoding), computed once per resource object: a version of it. */
export function resourceVersion(r: Resource): string {
  let v = digests.get(r);
  if (v === undefined) {
    v = createHash("sha256").update(r.name).update("\0").update(r.any.type_url).update("\0").update(r.any.value).digest("hex").slice(0, 16);
    digests.set(r, v);
  }
  return v;
}

/**
 * A version that changes exactly when the resources sent would change: a
 * digest of their names and digests. Every proxy of one workload view is
 * sent the same resource objects, so each resource is hashed once per
 * configuration version, not once per proxy.
 */
export function contentVersion(resources: readonly Resource[]): string {
  const hash = createHash("sha256");
  for (const r of resources) hash.update(`${r.name}\0${resourceVersion(r)}\0`);
  return hash.digest("hex").slice(0, 16);
}
