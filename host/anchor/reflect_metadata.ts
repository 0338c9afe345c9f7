/**
 * The part of the Metadata Reflection API (the `reflect-metadata` proposal)
 * that @peculiar/x509's dependency injection (tsyringe) calls:
 * `Reflect.metadata`, `defineMetadata`, `getMetadata`, `getOwnMetadata`.
 * tsyringe refuses to load without them, and the project installs no
 * polyfill package, so this small one stands in. It is installed only where
 * absent, so a real polyfill loaded first wins.
 */
type MetadataKey = unknown;
type Target = object;
type PropertyKey = string | symbol | undefined;

const store = new WeakMap<Target, Map<PropertyKey, Map<MetadataKey, unknown>>>();

function table(target: Target, property: PropertyKey, create: boolean): Map<MetadataKey, unknown> | undefined {
  let byProperty = store.get(target);
  if (byProperty === undefined) {
    if (!create) return undefined;
    store.set(target, (byProperty = new Map()));
  }
  let entries = byProperty.get(property);
  if (entries === undefined && create) byProperty.set(property, (entries = new Map()));
  return entries;
}

function defineMetadata(key: MetadataKey, value: unknown, target: Target, property?: PropertyKey): void {
  table(target, property, true)!.set(key, value);
}

function getOwnMetadata(key: MetadataKey, target: Target, property?: PropertyKey): unknown {
  return table(target, property, false)?.get(key);
}

function getMetadata(key: MetadataKey, target: Target, property?: PropertyKey): unknown {
  // Walks the prototype chain, as the proposal's OrdinaryGetMetadata does.
  for (let t: Target | null = target; t !== null; t = Object.getPrototypeOf(t) as Target | null) {
    const entries = table(t, property, false);
    if (entries?.has(key)) return entries.get(key);
  }
  return undefined;
}

function metadata(key: MetadataKey, value: unknown) {
  return (target: Target, property?: PropertyKey) => defineMetadata(key, value, target, property);
}

/** Adds the four functions to the global `Reflect` unless a polyfill already did. */
export function installReflectMetadata(): void {
  const r = Reflect as unknown as Record<string, unknown>;
  if (typeof r.getMetadata === "function") return;
  Object.assign(r, { defineMetadata, getOwnMetadata, getMetadata, metadata });
}
