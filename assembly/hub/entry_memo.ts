import { AttributeValue, StringMap, ValueKind } from "../attributes/value";
import { ViewMap } from "../attributes/view_map";
import { equalBytes } from "../text";

// One record per attribute id, RECORD bytes at `id * RECORD` of `records`:
// the fields a compare reads are one load each from the record's address.
const STAMP: usize = 0; // u32: the record counts while it is the memo's stamp
const KIND: usize = 4; // u8: the value's kind
const HELD: usize = 8; // u32: a shared value's address (`shared` keeps it), 0 for a request's own
const START: usize = 12; // i32: where the encoded map entry is in the message
const LENGTH: usize = 16; // i32: its length
const SMALL: usize = 20; // i32: a time's nanos, or how a map's kept bytes were read (ViewMap.sourceFormat)
const INT: usize = 24; // i64: a number, bool, double's bits or time's seconds; a map's pair count, or the reading its kept bytes came from (ViewMap.sourceId); a view's viewKey
const SAVED_LENGTH: usize = 32; // i32: bytes of a view's or map's copy in use
const REGION_AT: usize = 36; // i32: the id's region of `saved`
const REGION_ROOM: usize = 40; // i32: and its size
const REGION_STAMP: usize = 44; // u32: the region counts while it is the memo's stamp
const RECORD: usize = 48;
export const RECORD_BYTES: usize = RECORD;

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
  private records: ArrayBuffer = new ArrayBuffer(0);
  private base: usize = changetype<usize>(this.records);
  private capacity: i32 = 0;
  /**
   * Per id, the shared value recorded (held, so its address is never reused
   * for another value while it is remembered), null for a request's own
   * (then compared by contents).
   */
  private shared: StaticArray<AttributeValue | null> = new StaticArray<AttributeValue | null>(0);
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
    for (let i = 0, n = this.capacity; i < n; i++) {
      const rec = this.base + <usize>i * RECORD;
      store<u32>(rec, 0, STAMP);
      store<u32>(rec, 0, REGION_STAMP);
    }
    this.stamp = 1;
  }

  /** A report entry starts: what it records moves with it (`entryMoved`). */
  startEntry(): void {
    this.recordedCount = 0;
  }

  /**
   * The entry's contents moved `by` bytes (its length took fewer or more
   * bytes than ProtoWriter.beginWide keeps): so did the map entries it recorded.
   */
  entryMoved(by: i32): void {
    const recorded = this.recorded;
    const base = this.base;
    for (let i = 0, n = this.recordedCount; i < n; i++) {
      const rec = base + <usize>unchecked(recorded[i]) * RECORD;
      store<i32>(rec, load<i32>(rec, START) + by, START);
    }
  }

  /**
   * Where the records start: attribute `id`'s is `recordsStart + id *
   * RECORD_BYTES` while `id < recordCount`. A report entry's loop reads these
   * once and again only after a `record` (which may grow the table).
   */
  // @ts-ignore: decorator
  @inline get recordsStart(): usize {
    return this.base;
  }

  // @ts-ignore: decorator
  @inline get recordCount(): i32 {
    return this.capacity;
  }

  /** The stamp a record of this message carries (the same for a whole entry). */
  // @ts-ignore: decorator
  @inline get currentStamp(): u32 {
    return this.stamp;
  }

  /**
   * Where the map entry of the record at `rec` (an id below `recordCount`)
   * was encoded when `v` is its value already, else -1; `stamp` is
   * `currentStamp`. Inlined into its one caller (asked for every attribute of
   * every report).
   */
  // @ts-ignore: decorator
  @inline encodedAtRecord(rec: usize, stamp: u32, v: AttributeValue): i32 {
    if (load<u32>(rec, STAMP) != stamp || load<u8>(rec, KIND) != <u8>v.kind) return -1;
    const held = load<u32>(rec, HELD);
    if (held != 0) {
      if (held == <u32>changetype<usize>(v)) return load<i32>(rec, START);
      // Another shared value: a number or bytes the same as the one held
      // encode the same (the connections of one peer: its address's ip, each
      // its own value).
      return sameShared(changetype<AttributeValue>(<usize>held), v) ? load<i32>(rec, START) : -1;
    }
    if (!v.requestOwned) return -1;
    // Numbers and times are compared here (most of a report's own values): a call saved each.
    const kind = v.kind;
    let same: bool;
    if (kind == ValueKind.Int64) same = load<i64>(rec, INT) == v.int;
    else if (kind == ValueKind.Timestamp || kind == ValueKind.Duration) same = load<i64>(rec, INT) == v.int && load<i32>(rec, SMALL) == v.nanos;
    else if (kind == ValueKind.String && v.isView) {
      // A header value in place (host, path, API key): the map reading and
      // address last seen here (a header map filled again from the same
      // block keeps both), else its bytes against the copy kept; bytes found
      // the same make this view's reading and address the ones seen.
      const len = <i32>v.textLen();
      same = len == load<i32>(rec, SAVED_LENGTH);
      if (same) {
        const key = v.viewKey;
        if (key == 0 || key != load<u64>(rec, INT)) {
          same = equalBytes(this.saved.dataStart + <usize>load<i32>(rec, REGION_AT), v.textPtr(), <usize>len);
          if (same) store<u64>(rec, key, INT);
        }
      }
    } else if (kind == ValueKind.StringMap && v.map instanceof ViewMap && (v.map as ViewMap).sourceFormat != 0) {
      // A map read from bytes it still is (headers, a query): the reading
      // last seen here (a header map filled again from the same block keeps
      // its id), else those bytes against the copy kept; bytes found the same
      // make this reading the one seen.
      const map = v.map as ViewMap;
      const len = <i32>map.sourceLength;
      same = <i32>map.sourceFormat == load<i32>(rec, SMALL);
      if (same && map.sourceId != load<u32>(rec, INT)) {
        same = len == load<i32>(rec, SAVED_LENGTH) && equalBytes(this.saved.dataStart + <usize>load<i32>(rec, REGION_AT), map.sourceBytes, <usize>len);
        if (same) store<u32>(rec, map.sourceId, INT);
      }
    } else same = this.sameContents(rec, v);
    return same ? load<i32>(rec, START) : -1;
  }

  /** The length of the encoded map entry of the record at `rec` (after a successful `encodedAtRecord`). */
  // @ts-ignore: decorator
  @inline static encodedLengthAt(rec: usize): i32 {
    return load<i32>(rec, LENGTH);
  }

  /**
   * `v` is attribute `id`'s value now, encoded at `start` for `length` bytes
   * of the message. Inlined into its one caller: a report's times change
   * from one request to the next, and are kept here without a call.
   */
  // @ts-ignore: decorator
  @inline record(id: i32, v: AttributeValue, start: i32, length: i32): void {
    if (<u32>id >= <u32>this.capacity) this.grow(id);
    const rec = this.base + <usize>id * RECORD;
    const kind = v.kind;
    let held: AttributeValue | null = null;
    if (!v.requestOwned) held = v;
    else if (kind == ValueKind.Timestamp || kind == ValueKind.Duration) {
      store<i64>(rec, v.int, INT);
      store<i32>(rec, v.nanos, SMALL);
    } else if (kind == ValueKind.Int64) {
      store<i64>(rec, v.int, INT);
    } else if (!this.saveContents(id, rec, v)) {
      // Not comparable by contents: never taken as the same.
      store<u32>(rec, 0, STAMP);
      return;
    }
    store<u32>(rec, this.stamp, STAMP);
    store<u8>(rec, <u8>kind, KIND);
    store<u32>(rec, <u32>changetype<usize>(held), HELD);
    unchecked((this.shared[id] = held));
    store<i32>(rec, start, START);
    store<i32>(rec, length, LENGTH);
    const n = this.recordedCount;
    if (n == this.recorded.length) this.recorded = grown<i32>(this.recorded, n << 1);
    unchecked((this.recorded[n] = id));
    this.recordedCount = n + 1;
  }

  // The contents of a request's own value `v` (attribute `id`, record `rec`), kept to compare the next one's with. False when they are not kept.
  private saveContents(id: i32, rec: usize, v: AttributeValue): bool {
    switch (v.kind) {
      case ValueKind.Int64:
      case ValueKind.Bool:
        store<i64>(rec, v.kind == ValueKind.Bool ? <i64>v.bool : v.int, INT);
        return true;
      case ValueKind.Timestamp:
      case ValueKind.Duration:
        store<i64>(rec, v.int, INT);
        store<i32>(rec, v.nanos, SMALL);
        return true;
      case ValueKind.Double:
        store<i64>(rec, reinterpret<i64>(v.double), INT);
        return true;
      case ValueKind.String: {
        if (!v.isView) return false;
        const len = <i32>v.textLen();
        const at = this.room(rec, len);
        memory.copy(this.saved.dataStart + <usize>at, v.textPtr(), <usize>len);
        store<i32>(rec, len, SAVED_LENGTH);
        // The view's reading and address (AttributeValue.viewKey; INT holds it for a view).
        store<u64>(rec, v.viewKey, INT);
        return true;
      }
      case ValueKind.StringMap: {
        const m = v.map;
        if (!(m instanceof ViewMap) || !(m as ViewMap).isViewing) return false;
        const map = m as ViewMap;
        // A map read from bytes it still is (a request's or response's
        // headers, a path's query): those bytes, kept whole.
        const format = map.sourceFormat;
        store<i32>(rec, format, SMALL);
        if (format != 0) {
          const len = <i32>map.sourceLength;
          const at = this.room(rec, len);
          memory.copy(this.saved.dataStart + <usize>at, map.sourceBytes, <usize>len);
          store<i32>(rec, len, SAVED_LENGTH);
          // The reading these bytes came from (INT holds it for such a map).
          store<i64>(rec, <i64>map.sourceId, INT);
          return true;
        }
        // Per pair: key length, key bytes, value length, value bytes.
        const n = map.size;
        let total = 0;
        for (let i = 0; i < n; i++) total += 8 + <i32>map.keyLength(i) + <i32>map.valueLength(i);
        const start = this.room(rec, total);
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
        store<i32>(rec, total, SAVED_LENGTH);
        store<i64>(rec, n, INT);
        return true;
      }
    }
    return false;
  }

  private sameContents(rec: usize, v: AttributeValue): bool {
    switch (v.kind) {
      case ValueKind.Int64:
        return load<i64>(rec, INT) == v.int;
      case ValueKind.Bool:
        return load<i64>(rec, INT) == <i64>v.bool;
      case ValueKind.Timestamp:
      case ValueKind.Duration:
        return load<i64>(rec, INT) == v.int && load<i32>(rec, SMALL) == v.nanos;
      case ValueKind.Double:
        return load<i64>(rec, INT) == reinterpret<i64>(v.double);
      case ValueKind.String: {
        if (!v.isView) return false;
        const len = <i32>v.textLen();
        return len == load<i32>(rec, SAVED_LENGTH) && equalBytes(this.saved.dataStart + <usize>load<i32>(rec, REGION_AT), v.textPtr(), <usize>len);
      }
      case ValueKind.StringMap: {
        const m = v.map;
        if (!(m instanceof ViewMap) || !(m as ViewMap).isViewing) return false;
        const map = m as ViewMap;
        const format = map.sourceFormat;
        if (<i32>format != load<i32>(rec, SMALL)) return false;
        if (format != 0) {
          const len = <i32>map.sourceLength;
          return len == load<i32>(rec, SAVED_LENGTH) && equalBytes(this.saved.dataStart + <usize>load<i32>(rec, REGION_AT), map.sourceBytes, <usize>len);
        }
        const n = map.size;
        if (<i64>n != load<i64>(rec, INT)) return false;
        let p = this.saved.dataStart + <usize>load<i32>(rec, REGION_AT);
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

  // Where record `rec`'s `n` saved bytes go: its region when they fit, else a new one.
  private room(rec: usize, n: i32): i32 {
    if (load<u32>(rec, REGION_STAMP) == this.stamp && load<i32>(rec, REGION_ROOM) >= n) return load<i32>(rec, REGION_AT);
    const at = this.savedUsed;
    if (at + n > this.saved.length) {
      let size = this.saved.length * 2;
      while (size < at + n) size *= 2;
      const grown = new Uint8Array(size);
      memory.copy(grown.dataStart, this.saved.dataStart, <usize>at);
      this.saved = grown;
    }
    this.savedUsed = at + n;
    store<i32>(rec, at, REGION_AT);
    store<i32>(rec, n, REGION_ROOM);
    store<u32>(rec, this.stamp, REGION_STAMP);
    return at;
  }

  private grow(id: i32): void {
    const size = max(max(id + 1, this.capacity * 2), 64);
    const records = new ArrayBuffer(size * <i32>RECORD);
    memory.copy(changetype<usize>(records), this.base, <usize>this.capacity * RECORD);
    this.records = records;
    this.base = changetype<usize>(records);
    this.shared = grown<AttributeValue | null>(this.shared, size);
    this.capacity = size;
  }
}

// Two values of one kind that encode the same: numbers and bytes by their
// contents, any other kind only when it is the same value.
function sameShared(held: AttributeValue, v: AttributeValue): bool {
  const kind = v.kind;
  if (kind == ValueKind.Int64) return held.int == v.int;
  if (kind != ValueKind.Bytes) return false;
  const a = held.bytes;
  const b = v.bytes;
  if (a === null || b === null) return a === b;
  const len = <usize>a.length;
  return len == <usize>b.length && equalBytes(a.dataStart, b.dataStart, len);
}

function grown<T>(old: StaticArray<T>, size: i32): StaticArray<T> {
  const next = new StaticArray<T>(size);
  for (let i = 0, n = old.length; i < n; i++) unchecked((next[i] = unchecked(old[i])));
  return next;
}
