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

/** A version that changes exactly when the resources sent would change. */
export function contentVersion(resources: readonly Resource[]): string {
  const hash = createHash("sha256");
  for (const r of resources) {
    hash.update(r.name);
    hash.update("\0");
    hash.update(r.any.type_url);
    hash.update("\0");
    hash.update(r.any.value);
    hash.update("\0");
  }
  return hash.digest("hex").slice(0, 16);
}
