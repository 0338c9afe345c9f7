import { bytesEqualString, fnv64Text } from "../text";
import { decodeUtf8 } from "../utf8";
import { AttributeValue, ENTRY_HASH_BASIS, StringMap } from "./value";

// Per entry, five i32s: a tag (header_map.ts files its known-name slot
// there), the key's offset and length, the value's offset and length;
// offsets from `base`. Read and written at their byte offsets in the entry
// (a load's or store's immediate), not as array indexes.
const STRIDE: i32 = 5;
const ENTRY_BYTES: usize = 20;
const TAG: usize = 0;
const KEY_AT: usize = 4;
const KEY_LENGTH: usize = 8;
const VALUE_AT: usize = 12;
const VALUE_LENGTH: usize = 16;

// The last id a reading of bytes into a map was given (ViewMap.sourceId).
let lastSourceId: u32 = 0;

/**
 * An id for a new reading of bytes into a map. Ids wrap around after 2^32
 * readings; a report's memo compares them only within one message, which
 * lives for a fraction of that.
 */
// @ts-ignore: decorator
@inline
export function newSourceId(): u32 {
  let id = lastSourceId + 1;
  if (id == 0) id = 1;
  lastSourceId = id;
  return id;
}

/**
 * A StringMap whose entries are UTF-8 bytes in place: a request's headers
 * (header_map.ts) or its query parameters (query.ts), read where the request
 * put them, with no string per name or value. Readers that match, hash or
 * compare use the byte accessors (`valueInto` gives a view value); a string
 * is made only when one is asked for: `get`, `keyAt` and `valueAt` decode
 * the one entry, `keys` and `values` decode every entry once (a mirror kept
 * until the map is refilled).
 *
 * Changing the map with `set` or `setIfAbsent` turns it into a plain
 * StringMap of strings until it is cleared: the request's own maps are only
 * filled, read and (for the forwarded header) have an entry removed.
 */
export class ViewMap extends StringMap {
  /** Where the offsets count from; the bytes there must outlive the map's use. */
  protected base: usize = 0;
  protected entries: StaticArray<i32>;
  protected count: i32 = 0;
  /** False once `set` or `setIfAbsent` made the string lists the map. */
  protected viewing: bool = true;
  // The string lists hold every entry decoded (`keys`, `values`).
  private mirrored: bool = false;
  // The bytes the entries were read from, while the entries are what
  // reading them gives (none changed since): `sourceKind` says how they were
  // read (0: not so, or changed since).
  protected sourcePtr: usize = 0;
  protected sourceLen: usize = 0;
  protected sourceKind: u8 = 0;
  // Which reading of bytes the entries came from (`newSourceId`), 0 while
  // `sourceKind` is 0: the same id means the same bytes.
  protected sourceNumber: u32 = 0;

  constructor(capacity: i32 = 8) {
    super(0);
    this.entries = new StaticArray<i32>(max(capacity, 1) * STRIDE);
  }

  get size(): i32 {
    return this.viewing ? this.count : this.keyList.length;
  }

  get keys(): Array<string> {
    if (this.viewing) this.mirror();
    return this.keyList;
  }

  get values(): Array<string> {
    if (this.viewing) this.mirror();
    return this.valueList;
  }

  /** The entries are bytes in place (keyPtr, valuePtr), not strings set since the map was filled. */
  get isViewing(): bool {
    return this.viewing;
  }

  /**
   * How the entries were read from bytes (`sourceBytes`, `sourceLength`):
   * 0 when they were not, or changed since. Two maps read the same way from
   * the same bytes have the same entries (the report's memo compares them so).
   */
  // @ts-ignore: decorator
  @inline get sourceFormat(): u8 {
    return this.sourceKind;
  }

  /**
   * The reading the entries came from, while `sourceFormat` is not 0 (else
   * 0): no other reading (of any map) has the same id, and a map filled
   * again from the same bytes keeps it (HeaderMap.fill), so a report's memo
   * that saw this id saw these bytes.
   */
  // @ts-ignore: decorator
  @inline get sourceId(): u32 {
    return this.sourceNumber;
  }

  // @ts-ignore: decorator
  @inline get sourceBytes(): usize {
    return this.sourcePtr;
  }

  // @ts-ignore: decorator
  @inline get sourceLength(): usize {
    return this.sourceLen;
  }

  /** Entry `i`'s key when it is a string already (decoded or known), else null: read its bytes (a viewing map only). */
  keyStringAt(i: i32): string | null {
    return this.mirrored ? unchecked(this.keyList[i]) : null;
  }

  /** Where entry `i`'s key bytes are (a viewing map only). */
  // @ts-ignore: decorator
  @inline keyPtr(i: i32): usize {
    return this.base + <usize>load<i32>(this.entryAt(i), KEY_AT);
  }

  // @ts-ignore: decorator
  @inline keyLength(i: i32): usize {
    return <usize>load<i32>(this.entryAt(i), KEY_LENGTH);
  }

  /** Where entry `i`'s value bytes are (a viewing map only). */
  // @ts-ignore: decorator
  @inline valuePtr(i: i32): usize {
    return this.base + <usize>load<i32>(this.entryAt(i), VALUE_AT);
  }

  // @ts-ignore: decorator
  @inline valueLength(i: i32): usize {
    return <usize>load<i32>(this.entryAt(i), VALUE_LENGTH);
  }

  // Where entry `i`'s five fields start.
  // @ts-ignore: decorator
  @inline protected entryAt(i: i32): usize {
    return changetype<usize>(this.entries) + <usize>i * ENTRY_BYTES;
  }

  // @ts-ignore: decorator
  @inline protected tagAt(i: i32): i32 {
    return load<i32>(this.entryAt(i), TAG);
  }

  indexOf(key: string): i32 {
    return this.viewing ? this.scanFor(key) : super.indexOf(key);
  }

  /** The entry whose key bytes spell `key`, scanning the entries; -1 if none. */
  protected scanFor(key: string): i32 {
    for (let i = 0, n = this.count; i < n; i++) {
      if (bytesEqualString(this.keyPtr(i), this.keyLength(i), key)) return i;
    }
    return -1;
  }

  /** The entry whose key is the `len` bytes at `ptr`; -1 if none. */
  protected scanForBytes(ptr: usize, len: usize, tag: i32): i32 {
    for (let i = 0, n = this.count; i < n; i++) {
      if (this.tagAt(i) == tag && this.keyLength(i) == len && memory.compare(this.keyPtr(i), ptr, len) == 0) return i;
    }
    return -1;
  }

  keyAt(i: i32): string {
    return this.viewing ? (this.mirrored ? this.keyList[i] : decodeUtf8(this.keyPtr(i), this.keyLength(i))) : super.keyAt(i);
  }

  valueAt(i: i32): string {
    return this.viewing ? (this.mirrored ? this.valueList[i] : decodeUtf8(this.valuePtr(i), this.valueLength(i))) : super.valueAt(i);
  }

  valueInto(i: i32, into: AttributeValue): void {
    if (this.viewing) into.setView(this.valuePtr(i), this.valueLength(i));
    else super.valueInto(i, into);
  }

  unorderedHash(): u64 {
    if (!this.viewing) return super.unorderedHash();
    let sum: u64 = 0;
    for (let i = 0, n = this.count; i < n; i++) {
      sum += fnv64Text(fnv64Text(ENTRY_HASH_BASIS, this.keyPtr(i), this.keyLength(i)), this.valuePtr(i), this.valueLength(i));
    }
    return sum;
  }

  set(key: string, value: string): void {
    this.becomeStrings();
    super.set(key, value);
  }

  setIfAbsent(key: string, value: string): void {
    this.becomeStrings();
    super.setIfAbsent(key, value);
  }

  remove(key: string): void {
    if (!this.viewing) {
      super.remove(key);
      return;
    }
    const i = this.indexOf(key);
    if (i < 0) return;
    const entries = this.entries;
    const from = (i + 1) * STRIDE;
    memory.copy(changetype<usize>(entries) + (<usize>(i * STRIDE) << 2), changetype<usize>(entries) + (<usize>from << 2), <usize>((this.count * STRIDE - from) << 2));
    this.count--;
    this.mirrored = false;
    this.sourceKind = 0;
    this.sourceNumber = 0;
    this.entriesMoved();
  }

  clear(): void {
    this.clearView();
  }

  /** clear, inlined where a map is refilled (a call costs more than the clearing on an interpreter). */
  // @ts-ignore: decorator
  @inline protected clearView(): void {
    this.count = 0;
    this.sourceKind = 0;
    this.sourceNumber = 0;
    this.viewing = true;
    this.mirrored = false;
    // Array's length setter always calls into the runtime: only when there is something to drop.
    if (this.keyList.length != 0) this.keyList.length = 0;
    if (this.valueList.length != 0) this.valueList.length = 0;
  }

  /** Adds an entry (offsets from `base`); returns its index. */
  // @ts-ignore: decorator
  @inline protected append(tag: i32, keyAt: i32, keyLength: i32, valueAt: i32, valueLength: i32): i32 {
    if (this.count * STRIDE == this.entries.length) this.growEntries();
    return this.appendReserved(tag, keyAt, keyLength, valueAt, valueLength);
  }

  /** `append` where `reserve` made room for it already. */
  // @ts-ignore: decorator
  @inline protected appendReserved(tag: i32, keyAt: i32, keyLength: i32, valueAt: i32, valueLength: i32): i32 {
    const i = this.count;
    const p = this.entryAt(i);
    store<i32>(p, tag, TAG);
    store<i32>(p, keyAt, KEY_AT);
    store<i32>(p, keyLength, KEY_LENGTH);
    store<i32>(p, valueAt, VALUE_AT);
    store<i32>(p, valueLength, VALUE_LENGTH);
    this.count = i + 1;
    return i;
  }

  /** Points entry `i`'s value at other bytes (a repeated name whose last value wins). */
  protected replaceValue(i: i32, valueAt: i32, valueLength: i32): void {
    const p = this.entryAt(i);
    store<i32>(p, valueAt, VALUE_AT);
    store<i32>(p, valueLength, VALUE_LENGTH);
  }

  /** Called when entries changed places (a removal): indexes kept on them are stale. */
  protected entriesMoved(): void {}

  /** Room for `n` entries in all, so that the next appends need not check (appendReserved). */
  // @ts-ignore: decorator
  @inline protected reserve(n: i32): void {
    if (n * STRIDE > this.entries.length) this.growEntriesTo(n * STRIDE);
  }

  private growEntries(): void {
    this.growEntriesTo(this.entries.length << 1);
  }

  private growEntriesTo(length: i32): void {
    const old = this.entries;
    const grown = new StaticArray<i32>(max(length, old.length << 1));
    memory.copy(changetype<usize>(grown), changetype<usize>(old), <usize>old.length << 2);
    this.entries = grown;
  }

  private mirror(): void {
    if (this.mirrored) return;
    const keys = this.keyList;
    const values = this.valueList;
    keys.length = 0;
    values.length = 0;
    for (let i = 0, n = this.count; i < n; i++) {
      keys.push(this.keyAt(i));
      values.push(this.valueAt(i));
    }
    this.mirrored = true;
  }

  private becomeStrings(): void {
    if (!this.viewing) return;
    this.mirror();
    this.viewing = false;
    this.sourceKind = 0;
    this.sourceNumber = 0;
  }
}
