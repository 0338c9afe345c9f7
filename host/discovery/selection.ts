import { type Resource, type ResourceSet, contentVersion, resourceVersion, selectResources } from "./resource_set.ts";

/**
 * What one subscription is served of one type, computed once and shared by
 * every proxy that asks the same: the proxies of one workload view are
 * served the same resource maps (host/discovery/mesh_snapshot.ts), and
 * proxies that subscribe alike hold the same interned name set, so on a push
 * the selection, its version and its encoding are computed once per view,
 * not once per proxy; and an incremental push's changes from one selection
 * to the next are computed once for all the proxies that held the first.
 */
export interface Selection {
  /** The resources, sorted by name. */
  readonly resources: readonly Resource[];
  /** Name → version (resourceVersion) of each. */
  readonly versions: ReadonlyMap<string, string>;
  /** A version of the whole selection (contentVersion), computed on first use. */
  version(): string;
}

/** What changed from one selection to the next: the resources whose version differs or that are new, and the names gone. */
export interface SelectionChange {
  readonly changed: readonly Resource[];
  readonly removed: readonly string[];
}

const EMPTY: ReadonlyMap<string, Resource> = new Map();
const wildcard = new WeakMap<ReadonlyMap<string, Resource>, Selection>();
const named = new WeakMap<ReadonlyMap<string, Resource>, WeakMap<ReadonlySet<string>, Selection>>();
const changes = new WeakMap<Selection, WeakMap<Selection, SelectionChange>>();

function makeSelection(resources: readonly Resource[]): Selection {
  const versions = new Map(resources.map((r) => [r.name, resourceVersion(r)]));
  let version: string | undefined;
  return { resources, versions, version: () => (version ??= contentVersion(resources)) };
}

/**
 * The resources of `type` a subscription asks for (selectResources), shared
 * by every caller with the same resource map and the same name set object
 * (intern name sets with `NameSets`).
 */
export function selectionOf(set: ResourceSet, type: string, names: ReadonlySet<string> | "*"): Selection {
  const all = set.get(type) ?? EMPTY;
  if (names === "*") {
    let s = wildcard.get(all);
    if (!s) wildcard.set(all, (s = makeSelection(selectResources(set, type, names))));
    return s;
  }
  let byNames = named.get(all);
  if (!byNames) named.set(all, (byNames = new WeakMap()));
  let s = byNames.get(names);
  if (!s) byNames.set(names, (s = makeSelection(selectResources(set, type, names))));
  return s;
}

/** What a proxy holding exactly `before` must be sent to hold `after` (computed once per pair). */
export function selectionChange(before: Selection, after: Selection): SelectionChange {
  let byAfter = changes.get(before);
  if (!byAfter) changes.set(before, (byAfter = new WeakMap()));
  let c = byAfter.get(after);
  if (!c) {
    const changed = after.resources.filter((r) => before.versions.get(r.name) !== after.versions.get(r.name));
    const removed = [...before.versions.keys()].filter((n) => !after.versions.has(n));
    byAfter.set(after, (c = { changed, removed }));
  }
  return c;
}

/**
 * One set object per distinct list of names, while any subscription holds
 * it: proxies that subscribe alike share it (and the selections keyed by
 * it). Entries go when no subscription holds their set any more.
 */
export class NameSets {
  private readonly sets = new Map<string, WeakRef<ReadonlySet<string>>>();
  private readonly cleanup = new FinalizationRegistry<string>((key) => {
    if (this.sets.get(key)?.deref() === undefined) this.sets.delete(key);
  });

  intern(names: ReadonlySet<string>): ReadonlySet<string> {
    const key = [...names].sort().join("\0");
    const known = this.sets.get(key)?.deref();
    if (known) return known;
    this.sets.set(key, new WeakRef(names));
    this.cleanup.register(names, key);
    return names;
  }
}
