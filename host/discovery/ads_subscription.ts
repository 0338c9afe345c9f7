import { type Resource, resourceVersion, type selectResources } from "./resource_set.ts";
import type { Selection } from "./selection.ts";

export interface Subscription {
  names: ReadonlySet<string> | "*";
  sentVersion?: string;
  sentNonce?: string;
  ackedVersion?: string;
  nacked?: { version: string; message: string };
  /** The proxy ACKed or NACKed the last response. */
  answered?: boolean;
  /** Configuration version of what was last sent, and of what the proxy acknowledged (distribution tracking). */
  sentConfig?: number;
  ackedConfig?: number;
  /** The resources last sent (DISCO_DEBUG_ADSZ_CONFIG only). */
  sentResources?: ReturnType<typeof selectResources>;
  /** When the last response was sent, and when the proxy last acknowledged one (`meshctl proxy-status`), in ms since the epoch (a number: a Date is ten times its size). */
  sentAt?: number;
  ackedAt?: number;
  /**
   * What the proxy holds as far as it acknowledged (`meshctl proxy-status
   * <pod>`'s diff): a shared selection while that is exactly what it holds
   * (incremental streams), else its own map by name (read with
   * `ackedResources`). And what the unanswered responses carry: `to`, on
   * incremental streams, the selection they lead the proxy to when each was
   * sent from the one before, starting from what it acknowledged.
   */
  acked?: Map<string, Resource>;
  ackedSelection?: Selection;
  pending?: { full: boolean; resources: readonly Resource[]; removed: readonly string[]; to?: Selection };
  /**
   * `syncedWith`: the selection last sent in whole or in part and not
   * refused (host/discovery/selection.ts). `held`, incremental streams only:
   * the version of each resource the proxy holds, as far as it was sent and
   * not refused ("": some version we do not know). While that is exactly
   * `syncedWith` there is no map of its own: a push's changes from it are
   * shared, and thousands of proxies hold no copy of it. Read with
   * `heldVersion`, `heldNames`; changed with `ownHeld` and `syncTo`.
   */
  held?: Map<string, string>;
  syncedWith?: Selection;
  /** Incremental streams: the names each recent response carried, by nonce, so that a refusal (even of a superseded response) is taken back. */
  carried?: Map<string, readonly string[]>;
}

/** The version of `name` an incremental subscription's proxy holds (undefined: none). */
export function heldVersion(sub: Subscription, name: string): string | undefined {
  return sub.syncedWith ? sub.syncedWith.versions.get(name) : sub.held?.get(name);
}

/** The names an incremental subscription's proxy holds. */
export function heldNames(sub: Subscription): IterableIterator<string> | readonly string[] {
  return sub.syncedWith ? sub.syncedWith.versions.keys() : (sub.held?.keys() ?? []);
}

export const heldCount = (sub: Subscription): number => (sub.syncedWith ? sub.syncedWith.versions.size : (sub.held?.size ?? 0));

/** What the proxy holds, as a map of the subscription's own (made from the selection it held exactly), to change. */
export function ownHeld(sub: Subscription): Map<string, string> {
  sub.held ??= new Map(sub.syncedWith?.versions);
  sub.syncedWith = undefined;
  return sub.held;
}

/**
 * The proxy holds exactly `selection` now (as far as sent): no map of its
 * own. Also when nothing was sent for it (its versions are those of the
 * selection before): what it acknowledged, or will, is then this one too.
 */
export function syncTo(sub: Subscription, selection: Selection): void {
  if (sub.syncedWith !== undefined && sub.syncedWith !== selection) {
    if (sub.pending?.to === sub.syncedWith) sub.pending.to = selection;
    else if (!sub.pending && sub.ackedSelection === sub.syncedWith) sub.ackedSelection = selection;
  }
  sub.syncedWith = selection;
  sub.held = undefined;
}

/** Whether what the proxy acknowledged is exactly what it holds (both shared, or both nothing). */
function ackedIsHeld(sub: Subscription): boolean {
  if (sub.ackedSelection) return sub.syncedWith === sub.ackedSelection;
  return (sub.acked?.size ?? 0) === 0 && heldCount(sub) === 0;
}

/** An incremental response was sent, carrying `resources` and `removed`: the proxy holds `selection` now, and what it acknowledged waits for its answer. */
export function sentDelta(sub: Subscription, selection: Selection, resources: readonly Resource[], removed: readonly string[]): void {
  const chained = sub.pending ? sub.pending.to !== undefined && sub.pending.to === sub.syncedWith : ackedIsHeld(sub);
  const pending = pendingAfter(sub.pending, resources, removed);
  sub.pending = chained ? { ...pending, to: selection } : pending;
  sub.syncedWith = selection;
  sub.held = undefined;
}

/** The resources the proxy holds as far as it acknowledged. */
export function ackedResources(sub: Subscription): Iterable<Resource> {
  return sub.ackedSelection?.resources ?? sub.acked?.values() ?? [];
}

/**
 * The proxy acknowledged the newest response and holds `map` as far as it
 * acknowledged: shared as the selection it holds when that is the same
 * (back to sharing after a refusal, say), else kept as its own.
 */
export function acknowledgedAs(sub: Subscription, map: Map<string, Resource>): void {
  const s = sub.syncedWith;
  if (s && s.versions.size === map.size && s.resources.every((r) => map.has(r.name) && resourceVersion(map.get(r.name)!) === s.versions.get(r.name))) {
    sub.ackedSelection = s;
    sub.acked = undefined;
  } else sub.acked = map;
}

/** What the proxy acknowledged, as a map of the subscription's own (made from a shared selection), to change. */
export function ackedMap(sub: Subscription): Map<string, Resource> | undefined {
  const selection = sub.ackedSelection;
  sub.ackedSelection = undefined;
  return selection ? new Map(selection.resources.map((r) => [r.name, r])) : sub.acked;
}

/** How many recent incremental responses are remembered for their refusal. */
export const CARRIED_KEPT = 16;

/** An incremental response's changes on top of an earlier one not yet acknowledged (its ACK, superseded, will never count). */
export function pendingAfter(
  earlier: Subscription["pending"],
  resources: readonly Resource[],
  removed: readonly string[],
): NonNullable<Subscription["pending"]> {
  if (!earlier) return { full: false, resources, removed };
  const byName = new Map(earlier.resources.map((r) => [r.name, r]));
  for (const n of removed) byName.delete(n);
  for (const r of resources) byName.set(r.name, r);
  const added = new Set(resources.map((r) => r.name));
  return { full: earlier.full, resources: [...byName.values()], removed: [...new Set([...earlier.removed, ...removed])].filter((n) => !added.has(n)) };
}

export function sameNames(a: ReadonlySet<string> | "*", b: ReadonlySet<string> | "*"): boolean {
  if (a === "*" || b === "*") return a === b;
  return a.size === b.size && [...a].every((n) => b.has(n));
}
