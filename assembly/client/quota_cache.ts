// The quota cache (hub-client §6.2; upstream src/istio/mixerclient/quota_cache.cc):
// per quota name and referenced shape/signature, a prefetch pool
// (quota_prefetch.ts) decides quota checks locally. Pure: the caller passes
// the clock, sends the prefetches and feeds their answers back.
//
// How the caller (the request flow) uses it — upstream's rules:
// - ONLY WHEN THE POLICY CHECK WAS A CHECK-CACHE HIT. On a policy miss, or
//   when this cache is disabled (`enabled` false), every quota goes into the
//   blocking check request exactly (amount = charge, bestEffort false) and is
//   accepted iff the transport failed, the answer has no result for that
//   quota, its status is UNAVAILABLE, or grantedAmount > 0. Consuming cached
//   tokens for a check that may then be denied would lose them, which is why
//   upstream keeps the two apart.
// - On a hit, `check` decides now. A returned `prefetch` is sent in the
//   background as a quota request with `amount` and bestEffort true; its answer
//   goes to `onPrefetchResponse` (a failed call, or an answer without a result
//   for the quota, as `transportFailed`: fail open for quota).
// - Until an answer has filed a pool under its referenced attributes, one
//   shared "pending" pool per quota name is used; the first answer (with its
//   shape) files it, later answers for the same signature do not replace it.
//   Without a bag, checks always use the pending pool: one pool per name.
// - Capacity 10 000 pools, idle expiry 600 s; `disableQuotaCache` = capacity 0.
import { AttributeBag, AttributeSource } from "../attributes/bag";
import { AttributeValue } from "../attributes/value";
import { Lru, lruKey } from "./lru";
import { QuotaPrefetch } from "./quota_prefetch";
import { ReferencedShape } from "./referenced";
import { ShapeSet, ShapeSlot } from "./shape_set";

/** hub-client §8: `include/istio/mixerclient/options.h`. */
export const DEFAULT_QUOTA_CACHE_ENTRIES: i32 = 10000;
export const DEFAULT_QUOTA_IDLE_EXPIRY_NANOS: i64 = 600_000_000_000;
/** Validity of a grant whose answer has no valid duration (quota_cache.cc). */
export const DEFAULT_GRANT_VALIDITY_NANOS: i64 = 60_000_000_000;

/** A prefetch to send as a best-effort quota request. */
export class PrefetchRequest {
  constructor(
    public readonly quotaName: string,
    /** The `amount` of the quota request. */
    public readonly amount: i64,
    /** The bag of the check that triggered it (to file the answer's shape). */
    public readonly bag: AttributeBag | null,
    /** Internal: the pool asking, its optimistic slot, and whether it was pending. */
    readonly pool: QuotaPrefetch,
    readonly slotId: u64,
    readonly pending: bool,
  ) {}
}

/**
 * The answer of `QuotaCache.check`. One object per cache, overwritten by the
 * next `check`: read it before checking again.
 */
export class QuotaDecision {
  /** False when the cache is disabled: send the quota exactly instead. */
  cacheUsed: bool = false;
  allowed: bool = false;
  /** A prefetch to send now (best effort), or null. */
  prefetch: PrefetchRequest | null = null;
}

class PerQuota {
  readonly shapes: ShapeSet = new ShapeSet();
  pending: QuotaPrefetch | null = null;
  constructor(public readonly name: string) {}
}

class QuotaEntry {
  lruKey: u64 = 0;
  lruOlder: QuotaEntry | null = null;
  lruNewer: QuotaEntry | null = null;

  constructor(
    public owner: PerQuota,
    public slot: ShapeSlot,
    public signature: u64,
    public captured: Array<AttributeValue>,
    public pool: QuotaPrefetch,
    public lastUsedAt: i64,
  ) {}
}

export class QuotaCache {
  private readonly lru: Lru<QuotaEntry>;
  private readonly quotas: Map<string, PerQuota> = new Map();
  // A request's quota names are the configuration's strings, the same from
  // one request to the next: the last one found answers without a hash.
  private lastPer: PerQuota | null = null;
  private readonly decision: QuotaDecision = new QuotaDecision();

  constructor(
    public readonly capacity: i32 = DEFAULT_QUOTA_CACHE_ENTRIES,
    public readonly idleExpiryNanos: i64 = DEFAULT_QUOTA_IDLE_EXPIRY_NANOS,
  ) {
    this.lru = new Lru<QuotaEntry>(capacity > 0 ? capacity : 0);
  }

  get enabled(): bool {
    return this.capacity > 0;
  }

  /** Pools filed under a signature (pending pools not included). */
  get size(): i32 {
    return this.lru.size;
  }

  /**
   * Decides `amount` of `quotaName` locally (call only after a check-cache
   * hit). Allocates only a prefetch request, and the first time a name is seen.
   */
  // @ts-ignore: decorator
  @inline check(quotaName: string, bag: AttributeSource | null, amount: i64, nowNanos: i64): QuotaDecision {
    const decision = this.decision;
    decision.prefetch = null;
    decision.allowed = false;
    decision.cacheUsed = false;
    if (!this.enabled) return decision;

    const per = this.perQuota(quotaName);
    let pool: QuotaPrefetch | null = null;
    if (bag !== null) {
      const entry = this.find(per, bag, nowNanos);
      if (entry !== null) {
        entry.lastUsedAt = nowNanos;
        this.lru.touch(entry);
        pool = entry.pool;
      }
    }
    let pending = false;
    if (pool === null) {
      let p = per.pending;
      if (p === null) {
        p = new QuotaPrefetch(nowNanos);
        per.pending = p;
      }
      pool = p;
      pending = true;
    }

    decision.cacheUsed = true;
    decision.allowed = pool.check(amount, nowNanos);
    if (pool.prefetchAmount > 0) {
      // The prefetch keeps its own copy of the bag: the caller's may be
      // refilled by another request before the answer comes (StreamPool).
      decision.prefetch = new PrefetchRequest(quotaName, pool.prefetchAmount, bag !== null ? bag.asBag().clone() : null, pool, pool.prefetchSlotId, pending);
    }
    return decision;
  }

  /**
   * The answer to `request`: `grantedAmount` valid for `validDurationNanos`
   * (-1 when absent: 1 min), or `transportFailed` (full grant, 60 s). With
   * `referenced` (the quota result's referenced attributes) a pending pool is
   * filed under the request's signature, unless one is already filed there.
   */
  onPrefetchResponse(
    request: PrefetchRequest,
    grantedAmount: i64,
    validDurationNanos: i64,
    transportFailed: bool,
    nowNanos: i64,
    referenced: ReferencedShape | null = null,
  ): void {
    const pool = request.pool;
    const validity = validDurationNanos < 0 ? DEFAULT_GRANT_VALIDITY_NANOS : validDurationNanos;
    pool.onResponse(request.slotId, request.amount, transportFailed ? -1 : grantedAmount, validity, nowNanos);

    const bag = request.bag;
    if (transportFailed || !request.pending || referenced === null || bag === null || !this.enabled) return;
    if (!this.quotas.has(request.quotaName)) return; // cleared meanwhile
    const per = this.quotas.get(request.quotaName);
    if (per.pending !== pool) return; // already filed by an earlier answer
    if (!referenced.cacheableFor(bag)) return;

    const name = per.name;
    const signature = referenced.signature(bag, name);
    const known = per.shapes.find(referenced);
    if (known !== null) {
      const existing = this.lru.find(lruKey(signature, known.id));
      if (existing !== null && this.matches(existing, per, known, signature, bag)) return; // first one wins
    }
    const slot = per.shapes.intern(referenced);
    const entry = new QuotaEntry(per, slot, signature, referenced.capture(bag), pool, nowNanos);
    entry.lruKey = lruKey(signature, slot.id);
    per.shapes.retain(slot);
    const dropped = this.lru.add(entry);
    if (dropped !== null) dropped.owner.shapes.release(dropped.slot);
    per.pending = null;
  }

  /** Removes pools idle for `idleExpiryNanos` or more (call from a tick). */
  removeIdle(nowNanos: i64): void {
    let oldest = this.lru.leastRecent;
    while (oldest !== null && nowNanos - oldest.lastUsedAt >= this.idleExpiryNanos) {
      this.drop(oldest);
      oldest = this.lru.leastRecent;
    }
  }

  clear(): void {
    this.lru.clear();
    this.quotas.clear();
    this.lastPer = null;
  }

  private perQuota(name: string): PerQuota {
    const quotas = this.quotas;
    const last = this.lastPer;
    if (last !== null && changetype<usize>(last.name) == changetype<usize>(name)) return last;
    let per: PerQuota;
    if (quotas.has(name)) {
      per = quotas.get(name);
      this.lastPer = per;
      return per;
    }
    per = new PerQuota(name);
    this.lastPer = per;
    quotas.set(name, per);
    return per;
  }

  // @ts-ignore: decorator
  @inline private find(per: PerQuota, bag: AttributeSource, nowNanos: i64): QuotaEntry | null {
    const slots = per.shapes.slots;
    for (let i = 0, n = slots.length; i < n; i++) {
      const slot = unchecked(slots[i]);
      const shape = slot.shape;
      if (!shape.applies(bag)) continue;
      const signature = shape.signature(bag, per.name);
      const entry = this.lru.find(lruKey(signature, slot.id));
      if (entry === null || !this.matches(entry, per, slot, signature, bag)) continue;
      if (nowNanos - entry.lastUsedAt >= this.idleExpiryNanos) {
        this.drop(entry); // idle too long: as if never filed
        return null;
      }
      return entry;
    }
    return null;
  }

  // @ts-ignore: decorator
  @inline private matches(entry: QuotaEntry, per: PerQuota, slot: ShapeSlot, signature: u64, bag: AttributeSource): bool {
    return (
      entry.owner === per &&
      entry.slot === slot &&
      entry.signature == signature &&
      slot.shape.sameValues(bag, entry.captured)
    );
  }

  private drop(entry: QuotaEntry): void {
    this.lru.remove(entry);
    entry.owner.shapes.release(entry.slot);
  }
}
