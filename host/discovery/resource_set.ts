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

const sameBytes = (a: Uint8Array, b: Uint8Array) => a === b || (a.byteLength === b.byteLength && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b));

/** Whether two maps hold the same resources: the same names, each with the same type and bytes. */
export function sameResources(a: ReadonlyMap<string, Resource>, b: ReadonlyMap<string, Resource>): boolean {
  if (a === b) return true;
  if (a.size !== b.size) return false;
  for (const [name, r] of a) {
    const o = b.get(name);
    if (!o || (o !== r && (o.any.type_url !== r.any.type_url || !sameBytes(o.any.value, r.any.value)))) return false;
  }
  return true;
}

/**
 * `next`, each of its maps that holds what `before`'s map of the same type
 * holds replaced by `before`'s map (the whole set by `before` when every map
 * is): what a version shares with the one before stays the same objects, so
 * the selections, versions and encodings made of them (host/discovery/selection.ts)
 * are reused, and a proxy's subscription to them reads as unchanged at once
 * instead of being compared resource by resource. Same names and bytes:
 * what is served does not change.
 */
export function carryUnchanged(next: ResourceSet, before: ResourceSet | undefined): ResourceSet {
  if (!before) return next;
  let all = next.size === before.size;
  for (const [type, map] of next) {
    const old = before.get(type);
    if (old && sameResources(map, old)) next.set(type, old);
    else all = false;
  }
  return all ? before : next;
}
