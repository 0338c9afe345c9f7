// The check (policy) cache (hub-client §6.1; upstream
// src/istio/mixerclient/check_cache.cc): answers of earlier checks, filed
// under the referenced-attributes shape of each answer and the signature of
// the request's values for that shape. Pure: the caller passes the clock.
//
// Rules, as upstream unless noted:
// - Capacity 10 000 entries, LRU; capacity 0 disables the cache (every lookup
//   misses, nothing is stored): that is `disableCheckCache`.
// - A lookup tries every known shape, in no particular order; the first shape
//   that applies and whose signature finds an entry decides. That entry, if
//   expired, is removed and the lookup misses (upstream returns NOT_FOUND
//   there too, without trying the remaining shapes).
// - validDuration: -1 (absent) = no time expiry; else the entry expires when
//   `now >= insertedAt + duration` (upstream: `now > expiry`; a duration of 0
//   is then served at the same instant, here it is never served).
// - validUseCount: the number of hits allowed (3 = three hits, the fourth
//   goes remote); 0 = unusable (what the hub means by omitting it): nothing is
//   stored and an entry the answer would replace is dropped; negative =
//   unlimited. The entry is removed with its last use.
// - A later answer for the same shape and values replaces the entry.
// - Shapes with a REGEX condition, or that contradict the request that
//   produced them, are not cached (the answer itself still applies).
// - Denials are cached like accepts; the route directive is kept with the status.
// Not upstream: a hit is confirmed by comparing the request's values with the
// values captured at insert, so a 64-bit signature collision is a miss.
import { AttributeSource } from "../attributes/bag";
import { AttributeValue } from "../attributes/value";
import { Lru, lruKey } from "./lru";
import { ReferencedShape } from "./referenced";
import { ShapeSet, ShapeSlot } from "./shape_set";

/** hub-client §8: `include/istio/mixerclient/options.h`. */
export const DEFAULT_CHECK_CACHE_ENTRIES: i32 = 10000;

/** `validDurationNanos` value for "the answer has no valid duration". */
export const NO_TIME_EXPIRY: i64 = -1;

/**
 * What a cache hit answers: the precondition status (and, through a
 * subclass, the route directive).
 *
 * The cache stores the object the caller inserted and returns that same
 * object on every hit (no allocation per hit): treat it as immutable. To keep
 * the route directive with the status, the request flow extends this class
 * with its own decoded directive and narrows a hit back:
 *
 *     class RoutedCheck extends CachedCheck {
 *       constructor(code: i32, message: string, public directive: RouteDirective) { super(code, message); }
 *     }
 *     const hit = cache.lookup(bag, now);
 *     if (hit instanceof RoutedCheck) apply((hit as RoutedCheck).directive);
 *
 * (Chosen over an `Object | null` field, which as-pect's reflection and most
 * helpers cannot handle, and over an index into a caller-owned table, whose
 * slots would need freeing when entries are evicted.)
 */
export class CachedCheck {
  constructor(
    /** google.rpc.Code of the precondition (0 = OK). */
    public statusCode: i32,
    public statusMessage: string = "",
  ) {}
}

class CheckEntry {
  lruKey: u64 = 0;
  lruOlder: CheckEntry | null = null;
  lruNewer: CheckEntry | null = null;

  constructor(
    public slot: ShapeSlot,
    public signature: u64,
    public captured: Array<AttributeValue>,
    public result: CachedCheck,
    /** i64.MAX_VALUE when the answer had no valid duration. */
    public expiresAt: i64,
    /** Hits left; negative = unlimited. */
    public usesLeft: i64,
  ) {}
}

function expiryOf(validDurationNanos: i64, nowNanos: i64): i64 {
  if (validDurationNanos < 0) return i64.MAX_VALUE;
  const at = nowNanos + validDurationNanos;
  return at < nowNanos ? i64.MAX_VALUE : at; // saturate on overflow
}

/**
 *     const cache = new CheckCache();
 *     const hit = cache.lookup(bag, now);          // null: ask the hub
 *     ...
 *     cache.insert(bag, shape, new CachedCheck(0), 5_000_000_000, 10, now);
 */
export class CheckCache {
  private readonly lru: Lru<CheckEntry>;
  private readonly shapes: ShapeSet = new ShapeSet();

  constructor(public readonly capacity: i32 = DEFAULT_CHECK_CACHE_ENTRIES) {
    this.lru = new Lru<CheckEntry>(capacity > 0 ? capacity : 0);
  }

  get enabled(): bool {
    return this.capacity > 0;
  }

  /** Entries held. */
  get size(): i32 {
    return this.lru.size;
  }

  /** Distinct shapes a lookup tries. */
  get shapeCount(): i32 {
    return this.shapes.size;
  }

  /**
   * Files the answer to the check of `bag`. Returns true when it was stored;
   * false when the cache is disabled, the shape is not cacheable for `bag`, or
   * `validUseCount` is 0 (which also drops the entry it would replace).
   */
  insert(
    bag: AttributeSource,
    shape: ReferencedShape,
    result: CachedCheck,
    validDurationNanos: i64,
    validUseCount: i64,
    nowNanos: i64,
  ): bool {
    if (!this.enabled || !shape.cacheableFor(bag)) return false;
    const signature = shape.signature(bag);
    const known = this.shapes.find(shape);
    if (known !== null) {
      const entry = this.lru.find(lruKey(signature, known.id));
      if (entry !== null && entry.slot === known && entry.signature == signature && shape.sameValues(bag, entry.captured)) {
        if (validUseCount == 0) {
          this.drop(entry);
          return false;
        }
        entry.result = result;
        entry.expiresAt = expiryOf(validDurationNanos, nowNanos);
        entry.usesLeft = validUseCount;
        this.lru.touch(entry);
        return true;
      }
    }
    if (validUseCount == 0) return false;

    const slot = this.shapes.intern(shape);
    const entry = new CheckEntry(
      slot,
      signature,
      shape.capture(bag),
      result,
      expiryOf(validDurationNanos, nowNanos),
      validUseCount,
    );
    entry.lruKey = lruKey(signature, slot.id);
    this.shapes.retain(slot);
    const dropped = this.lru.add(entry);
    if (dropped !== null) this.shapes.release(dropped.slot);
    return true;
  }

  /**
   * The cached answer for `bag`, or null (ask the hub). A hit consumes one use.
   * Allocates nothing.
   */
  // @ts-ignore: decorator
  @inline lookup(bag: AttributeSource, nowNanos: i64): CachedCheck | null {
    if (!this.enabled) return null;
    const slots = this.shapes.slots;
    for (let i = 0, n = slots.length; i < n; i++) {
      const slot = unchecked(slots[i]);
      const shape = slot.shape;
      if (!shape.applies(bag)) continue;
      const signature = shape.signature(bag);
      const entry = this.lru.find(lruKey(signature, slot.id));
      if (entry === null || entry.slot !== slot || entry.signature != signature) continue;
      if (!shape.sameValues(bag, entry.captured)) continue;
      if (nowNanos >= entry.expiresAt) {
        this.drop(entry);
        return null;
      }
      const result = entry.result;
      if (entry.usesLeft > 0 && --entry.usesLeft == 0) this.drop(entry);
      else this.lru.touch(entry);
      return result;
    }
    return null;
  }

  /** Removes every entry and shape (configuration change, shutdown). */
  clear(): void {
    this.lru.clear();
    this.shapes.clear();
  }

  private drop(entry: CheckEntry): void {
    this.lru.remove(entry);
    this.shapes.release(entry.slot);
  }
}
