import { AttributeValue, StringMap, ValueKind } from "../attributes/value";
import { ViewMap } from "../attributes/view_map";

/**
 * The attributes of the report entries already in one ReportRequest, by
 * attribute id: each one's last value (its identity, or a copy of what it
 * holds) and where that value's encoded map entry is in the message. Requests
 * of one service repeat most of their attributes from one report to the next
 * (the static and API attributes, the host, path, method, headers, sizes,
 * code), and within one message the same value encodes to the same bytes (a
 * word keeps its index for the whole message), so an attribute whose value
 * is the one already encoded is copied from there instead of encoded again:
 * no dictionary lookup, no hashing, and the message stays what it would have
 * been byte for byte (still INDEPENDENT_ENCODING).
 *
 * A value is the one already encoded when it is the same shared value (shared
 * values are never changed), or when a request's own value (RequestValues
 * reuses those objects) holds the same kind and contents: numbers, times,
 * booleans, the bytes of a string view, the pairs of a header map viewed in
 * place. Anything else is encoded again and becomes the attribute's value.
 *
 * Valid for one message: `reset` when the message starts again (its bytes and
 * words are gone).
 */
export class EntryMemo {
  // Per attribute id; an id counts only while its stamp is the memo's.
  private stamps: StaticArray<u32> = new StaticArray<u32>(0);
  private kinds: StaticArray<u8> = new StaticArray<u8>(0);
  /**
   * The value itself when shared (held, so its address is never reused for
   * another value while it is remembered), null for a request's own (then
   * compared by contents).
   */
  private shared: StaticArray<AttributeValue | null> = new StaticArray<AttributeValue | null>(0);
  private ints: StaticArray<i64> = new StaticArray<i64>(0);
  /** nanos of a time. */
  private smalls: StaticArray<i32> = new StaticArray<i32>(0);
  /** How many bytes of a view's or map's copy are in use. */
  private savedLengths: StaticArray<i32> = new StaticArray<i32>(0);
  // Each id's region of `saved` (where, how large), valid while its stamp is the memo's.
  private regionAt: StaticArray<i32> = new StaticArray<i32>(0);
  private regionRoom: StaticArray<i32> = new StaticArray<i32>(0);
  private regionStamps: StaticArray<u32> = new StaticArray<u32>(0);
  /** Where the encoded map entry is in the message, and its length. */
  private starts: StaticArray<i32> = new StaticArray<i32>(0);
  private lengths: StaticArray<i32> = new StaticArray<i32>(0);
  private stamp: u32 = 1;
  // The ids recorded since `startEntry`, whose places move with their entry's
  // (a plain array and a count: a push would be calls).
  private recorded: StaticArray<i32> = new StaticArray<i32>(64);
  private recordedCount: i32 = 0;
  // Copies of the contents of a request's own views and maps, one region per
  // id for the message's life (a changed value is copied over its id's
  // previous one when it fits).
  private saved: Uint8Array = new Uint8Array(512);
  private savedUsed: i32 = 0;

  /** Forgets every attribute: the next message starts from nothing. */
  reset(): void {
    this.savedUsed = 0;
    if (++this.stamp != 0) return;
    // Wrapped around: old stamps could match again.
    const stamps = this.stamps;
    const regions = this.regionStamps;
    for (let i = 0; i < stamps.length; i++) {
      unchecked((stamps[i] = 0));
      unchecked((regions[i] = 0));
    }
    this.stamp = 1;
  }

  /** A report entry starts: what it records moves with it (`entryMoved`). */
  startEntry(): void {
    this.recordedCount = 0;
  }

  /**
   * The entry's contents moved `by` bytes up (its length took more than the
   * one byte ProtoWriter.begin keeps): so did the map entries it recorded.
   */
  entryMoved(by: i32): void {
    const recorded = this.recorded;
    const starts = this.starts;
    for (let i = 0, n = this.recordedCount; i < n; i++) {
      const id = unchecked(recorded[i]);
      unchecked((starts[id] = unchecked(starts[id]) + by));
    }
  }

  /** Where attribute `id`'s map entry was encoded when `v` is its value already, else -1. Inlined into its one caller (asked for every attribute of every report). */
  // @ts-ignore: decorator
  @inline encodedAt(id: i32, v: AttributeValue): i32 {
    if (<u32>id >= <u32>this.stamps.length || unchecked(this.stamps[id]) != this.stamp) return -1;
    if (unchecked(this.kinds[id]) != <u8>v.kind) return -1;
    const held = unchecked(this.shared[id]);
    if (held !== null) return changetype<usize>(held) == changetype<usize>(v) ? unchecked(this.starts[id]) : -1;
    if (!v.requestOwned) return -1;
    // Numbers and times are compared here (most of a report's own values): a call saved each.
    const kind = v.kind;
    let same: bool;
    if (kind == ValueKind.Int64) same = unchecked(this.ints[id]) == v.int;
    else if (kind == ValueKind.Timestamp || kind == ValueKind.Duration) same = unchecked(this.ints[id]) == v.int && unchecked(this.smalls[id]) == v.nanos;
    else if (kind == ValueKind.String && v.isView) {
      // A header value in place (host, path, API key): its bytes against the copy kept.
      const len = <i32>v.textLen();
      same = len == unchecked(this.savedLengths[id]) && equalBytes(this.saved.dataStart + <usize>unchecked(this.regionAt[id]), v.textPtr(), <usize>len);
    } else if (kind == ValueKind.StringMap && v.map instanceof ViewMap && (v.map as ViewMap).sourceFormat != 0) {
      // A map read from bytes it still is (headers, a query): those bytes against the copy kept.
      const map = v.map as ViewMap;
      const len = <i32>map.sourceLength;
      same =
        <i32>map.sourceFormat == unchecked(this.smalls[id]) &&
        len == unchecked(this.savedLengths[id]) &&
        equalBytes(this.saved.dataStart + <usize>unchecked(this.regionAt[id]), map.sourceBytes, <usize>len);
    } else same = this.sameContents(id, v);
    return same ? unchecked(this.starts[id]) : -1;
  }

  /** The length of attribute `id`'s encoded map entry (after a successful `encodedAt`). */
  // @ts-ignore: decorator
  @inline encodedLength(id: i32): i32 {
    return unchecked(this.lengths[id]);
  }

  /**
   * `v` is attribute `id`'s value now, encoded at `start` for `length` bytes
   * of the message. Inlined into its one caller: a report's times change
   * from one request to the next, and are kept here without a call.
   */
  // @ts-ignore: decorator
  @inline record(id: i32, v: AttributeValue, start: i32, length: i32): void {
    if (<u32>id >= <u32>this.stamps.length) this.grow(id);
    const kind = v.kind;
    let held: AttributeValue | null = null;
    if (!v.requestOwned) held = v;
    else if (kind == ValueKind.Timestamp || kind == ValueKind.Duration) {
      unchecked((this.ints[id] = v.int));
      unchecked((this.smalls[id] = v.nanos));
    } else if (kind == ValueKind.Int64) {
      unchecked((this.ints[id] = v.int));
    } else if (!this.saveContents(id, v)) {
      // Not comparable by contents: never taken as the same.
      unchecked((this.stamps[id] = 0));
      return;
    }
    unchecked((this.stamps[id] = this.stamp));
    unchecked((this.kinds[id] = <u8>kind));
    unchecked((this.shared[id] = held));
    unchecked((this.starts[id] = start));
    unchecked((this.lengths[id] = length));
    const n = this.recordedCount;
    if (n == this.recorded.length) this.recorded = grown<i32>(this.recorded, n << 1);
    unchecked((this.recorded[n] = id));
    this.recordedCount = n + 1;
  }

  // The contents of a request's own value `v`, kept to compare the next one's with. False when they are not kept.
  private saveContents(id: i32, v: AttributeValue): bool {
    switch (v.kind) {
      case ValueKind.Int64:
      case ValueKind.Bool:
        unchecked((this.ints[id] = v.kind == ValueKind.Bool ? <i64>v.bool : v.int));
        return true;
      case ValueKind.Timestamp:
      case ValueKind.Duration:
        unchecked((this.ints[id] = v.int));
        unchecked((this.smalls[id] = v.nanos));
        return true;
      case ValueKind.Double:
        unchecked((this.ints[id] = reinterpret<i64>(v.double)));
        return true;
      case ValueKind.String: {
        if (!v.isView) return false;
        const len = <i32>v.textLen();
        const at = this.room(id, len);
        memory.copy(this.saved.dataStart + <usize>at, v.textPtr(), <usize>len);
        unchecked((this.savedLengths[id] = len));
        return true;
      }
      case ValueKind.StringMap: {
        const m = v.map;
        if (!(m instanceof ViewMap) || !(m as ViewMap).isViewing) return false;
        const map = m as ViewMap;
        // A map read from bytes it still is (a request's or response's
        // headers, a path's query): those bytes, kept whole.
        const format = map.sourceFormat;
        unchecked((this.smalls[id] = format));
        if (format != 0) {
          const len = <i32>map.sourceLength;
          const at = this.room(id, len);
          memory.copy(this.saved.dataStart + <usize>at, map.sourceBytes, <usize>len);
          unchecked((this.savedLengths[id] = len));
          return true;
        }
        // Per pair: key length, key bytes, value length, value bytes.
        const n = map.size;
        let total = 0;
        for (let i = 0; i < n; i++) total += 8 + <i32>map.keyLength(i) + <i32>map.valueLength(i);
        const start = this.room(id, total);
        let p = this.saved.dataStart + <usize>start;
        for (let i = 0; i < n; i++) {
          const kl = map.keyLength(i);
          store<u32>(p, <u32>kl);
          memory.copy(p + 4, map.keyPtr(i), kl);
          p += 4 + kl;
          const vl = map.valueLength(i);
          store<u32>(p, <u32>vl);
          memory.copy(p + 4, map.valuePtr(i), vl);
          p += 4 + vl;
        }
        unchecked((this.savedLengths[id] = total));
        unchecked((this.ints[id] = n));
        return true;
      }
    }
    return false;
  }

  private sameContents(id: i32, v: AttributeValue): bool {
    switch (v.kind) {
      case ValueKind.Int64:
        return unchecked(this.ints[id]) == v.int;
      case ValueKind.Bool:
        return unchecked(this.ints[id]) == <i64>v.bool;
      case ValueKind.Timestamp:
      case ValueKind.Duration:
        return unchecked(this.ints[id]) == v.int && unchecked(this.smalls[id]) == v.nanos;
      case ValueKind.Double:
        return unchecked(this.ints[id]) == reinterpret<i64>(v.double);
      case ValueKind.String: {
        if (!v.isView) return false;
        const len = <i32>v.textLen();
        return len == unchecked(this.savedLengths[id]) && equalBytes(this.saved.dataStart + <usize>unchecked(this.regionAt[id]), v.textPtr(), <usize>len);
      }
      case ValueKind.StringMap: {
        const m = v.map;
        if (!(m instanceof ViewMap) || !(m as ViewMap).isViewing) return false;
        const map = m as ViewMap;
        const format = map.sourceFormat;
        if (<i32>format != unchecked(this.smalls[id])) return false;
        if (format != 0) {
          const len = <i32>map.sourceLength;
          return len == unchecked(this.savedLengths[id]) && equalBytes(this.saved.dataStart + <usize>unchecked(this.regionAt[id]), map.sourceBytes, <usize>len);
        }
        const n = map.size;
        if (<i64>n != unchecked(this.ints[id])) return false;
        let p = this.saved.dataStart + <usize>unchecked(this.regionAt[id]);
        for (let i = 0; i < n; i++) {
          const kl = map.keyLength(i);
          if (<usize>load<u32>(p) != kl || !equalBytes(p + 4, map.keyPtr(i), kl)) return false;
          p += 4 + kl;
          const vl = map.valueLength(i);
          if (<usize>load<u32>(p) != vl || !equalBytes(p + 4, map.valuePtr(i), vl)) return false;
          p += 4 + vl;
        }
        return true;
      }
    }
    return false;
  }

  // Where id's `n` saved bytes go: its region when they fit, else a new one.
  private room(id: i32, n: i32): i32 {
    if (unchecked(this.regionStamps[id]) == this.stamp && unchecked(this.regionRoom[id]) >= n) return unchecked(this.regionAt[id]);
    const at = this.savedUsed;
    if (at + n > this.saved.length) {
      let size = this.saved.length * 2;
      while (size < at + n) size *= 2;
      const grown = new Uint8Array(size);
      memory.copy(grown.dataStart, this.saved.dataStart, <usize>at);
      this.saved = grown;
    }
    this.savedUsed = at + n;
    unchecked((this.regionAt[id] = at));
    unchecked((this.regionRoom[id] = n));
    unchecked((this.regionStamps[id] = this.stamp));
    return at;
  }

  private grow(id: i32): void {
    const size = max(max(id + 1, this.stamps.length * 2), 64);
    this.stamps = grown<u32>(this.stamps, size);
    this.kinds = grown<u8>(this.kinds, size);
    this.shared = grown<AttributeValue | null>(this.shared, size);
    this.ints = grown<i64>(this.ints, size);
    this.smalls = grown<i32>(this.smalls, size);
    this.savedLengths = grown<i32>(this.savedLengths, size);
    this.regionAt = grown<i32>(this.regionAt, size);
    this.regionRoom = grown<i32>(this.regionRoom, size);
    this.regionStamps = grown<u32>(this.regionStamps, size);
    this.starts = grown<i32>(this.starts, size);
    this.lengths = grown<i32>(this.lengths, size);
  }
}

function grown<T>(old: StaticArray<T>, size: i32): StaticArray<T> {
  const next = new StaticArray<T>(size);
  for (let i = 0, n = old.length; i < n; i++) unchecked((next[i] = unchecked(old[i])));
  return next;
}

// The `len` bytes at `a` and `b` are the same, compared eight at a time,
// then the rest in at most three steps (names and values are short).
// @ts-ignore: decorator
@inline
function equalBytes(a: usize, b: usize, len: usize): bool {
  let i: usize = 0;
  for (; i + 8 <= len; i += 8) if (load<u64>(a + i) != load<u64>(b + i)) return false;
  if (i + 4 <= len) {
    if (load<u32>(a + i) != load<u32>(b + i)) return false;
    i += 4;
  }
  if (i + 2 <= len) {
    if (load<u16>(a + i) != load<u16>(b + i)) return false;
    i += 2;
  }
  return i == len || load<u8>(a + i) == load<u8>(b + i);
}
