import type { Resource, selectResources } from "./resource_set.ts";
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
  /** When the last response was sent, and when the proxy last acknowledged one (`meshctl proxy-status`). */
  sentAt?: Date;
  ackedAt?: Date;
  /** What the proxy holds as far as it acknowledged, by name (`meshctl proxy-status <pod>`'s diff), and what the unanswered response carries. */
  acked?: Map<string, Resource>;
  pending?: { full: boolean; resources: readonly Resource[]; removed: readonly string[] };
  /** Incremental streams: the version of each resource the proxy holds, as far as it was sent and not refused ("": some version we do not know). */
  held?: Map<string, string>;
  /** Incremental streams: the names each recent response carried, by nonce, so that a refusal (even of a superseded response) is taken back. */
  carried?: Map<string, readonly string[]>;
  /** Incremental streams: the selection `held` is exactly equal to, if any (host/discovery/selection.ts): a push's changes from it are shared. */
  syncedWith?: Selection;
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
