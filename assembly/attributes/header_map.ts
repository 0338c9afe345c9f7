import { KNOWN_SLOTS, knownAt, knownSlot, knownSlotInline, knownSlotOfString } from "../known_strings";
import { equalBytes } from "../text";
import { decodeUtf8, isCleanUtf8, writeValidUtf8 } from "../utf8";
import { StringMap } from "./value";
import { newSourceId, ViewMap } from "./view_map";

/** ViewMap.sourceFormat of a map filled from a proxy-wasm serialized map. */
export const SOURCE_PAIRS: u8 = 1;
/** The tag of a header whose name is not a known string. */
const UNKNOWN: i32 = -1;
const INITIAL_BYTES: i32 = 1024;

/**
 * A request's header map: its names and values are UTF-8 bytes in the map's
 * own buffer (copied in once per request, unless it is the block read last),
 * found without a string per header.
 * A name that is a known string (known_strings.ts) is resolved to its
 * perfect-hash slot while the map is filled, once: the dozen lookups a
 * request makes (`:path`, `:authority`, `x-request-id`…) are then an indexed
 * load each (`indexOfSlot`), with no name hashed again. Other names are
 * found by a scan of the entries that have no slot, usually none.
 *
 * The buffer and the entry table are kept for the next request (a stream's
 * map goes back to the pool with its request: stream_pool.ts); the slot
 * table is invalidated by a stamp, so clearing costs nothing per slot.
 */
export class HeaderMap extends ViewMap {
  private bytes: ArrayBuffer = new ArrayBuffer(INITIAL_BYTES);
  private used: i32 = 0;
  // Per known slot: the entry's index plus one, valid while stamps[slot] == stamp.
  private positions: StaticArray<i32> = new StaticArray<i32>(KNOWN_SLOTS);
  private stamps: StaticArray<u32> = new StaticArray<u32>(KNOWN_SLOTS);
  private stamp: u32 = 1;
  /** Entries whose name is not a known string. */
  private unknown: i32 = 0;

  constructor(capacity: i32 = 32) {
    super(capacity);
    this.base = changetype<usize>(this.bytes);
  }

  /** The entry of the header in known-string slot `slot`, or -1. */
  // @ts-ignore: decorator
  @inline indexOfSlot(slot: i32): i32 {
    if (!this.viewing) return super.indexOf(knownAt(slot));
    return unchecked(this.stamps[slot]) == this.stamp ? unchecked(this.positions[slot]) - 1 : -1;
  }

  // The lookup by name itself (rather than ViewMap's, which calls scanFor):
  // one call for a reader that asks a request's map for a header by name.
  indexOf(key: string): i32 {
    if (!this.viewing) return super.indexOf(key);
    const slot = knownSlotOfString(key);
    if (slot >= 0) return unchecked(this.stamps[slot]) == this.stamp ? unchecked(this.positions[slot]) - 1 : -1;
    return this.unknown == 0 ? -1 : super.scanFor(key);
  }

  protected scanFor(key: string): i32 {
    const slot = knownSlotOfString(key);
    if (slot >= 0) return unchecked(this.stamps[slot]) == this.stamp ? unchecked(this.positions[slot]) - 1 : -1;
    return this.unknown == 0 ? -1 : super.scanFor(key);
  }

  keyAt(i: i32): string {
    if (this.viewing) {
      const slot = this.tagAt(i);
      if (slot != UNKNOWN) return knownAt(slot);
    }
    return super.keyAt(i);
  }

  keyStringAt(i: i32): string | null {
    const slot = this.tagAt(i);
    return slot != UNKNOWN ? knownAt(slot) : super.keyStringAt(i);
  }

  clear(): void {
    this.empty();
  }

  /** clear, inlined (in fill, and where a response's maps are emptied). */
  // @ts-ignore: decorator
  @inline empty(): void {
    this.clearView();
    this.used = 0;
    this.unknown = 0;
    this.nextStamp();
  }

  /**
   * Fills the map from a proxy-wasm serialized map (pairs.ts) at `ptr`: the
   * block is copied in whole and its names and values are viewed where they
   * landed. A repeated name keeps its first place and takes the last value,
   * as the upstream client's header map did. False when the block is not
   * well-formed (the map is then left empty).
   *
   * Bytes are not checked here: a value read as a view is checked when it
   * becomes one (AttributeValue.setView: text that is not valid UTF-8 is
   * decoded with U+FFFD), and a string made of an entry is decoded the same
   * way.
   */
  fill(ptr: usize, len: usize): bool {
    // The very block the entries were read from last (a client's requests
    // repeat theirs, as do an app's responses; nothing changed the map
    // since, or its source would be forgotten): they stand as they are. The
    // block starts with every name's and value's length, and its last eight
    // bytes are tried first: a proxy's per-request id (Envoy adds
    // x-request-id last) or other lengths fail the compare at once.
    if (
      this.sourceKind == SOURCE_PAIRS &&
      len == this.sourceLen &&
      this.sourcePtr == this.base &&
      len >= 8 &&
      load<u64>(this.base + len - 8) == load<u64>(ptr + len - 8) &&
      equalBytes(this.base, ptr, len)
    ) {
      return true;
    }
    this.empty();
    if (len == 0) return true;
    if (len < 4) return false;
    if (<i32>len > this.bytes.byteLength) this.growBytes(<i32>len);
    memory.copy(this.base, ptr, len);
    this.used = <i32>len;
    // The proxy-wasm serialized map (pairs.ts), walked here rather than
    // through forEachPair's visitor: this is every request's first step.
    const count = <usize>load<u32>(ptr);
    let sizes = ptr + 4;
    let data = sizes + count * 8;
    const end = ptr + len;
    if (count > len || data > end) return this.refuse();
    this.reserve(<i32>count);
    const stamps = this.stamps;
    const positions = this.positions;
    const stamp = this.stamp;
    for (let i: usize = 0; i < count; i++) {
      const keyLen = <usize>load<u32>(sizes);
      const valueLen = <usize>load<u32>(sizes, 4);
      sizes += 8;
      // Compare against the room left, never a sum that could wrap around.
      if (data > end || keyLen > end - data || valueLen > end - data - keyLen || end - data - keyLen - valueLen < 2) return this.refuse();
      const keyAt = <i32>(data - ptr);
      const valueAt = keyAt + <i32>keyLen + 1;
      const slot = knownSlotInline(data, keyLen);
      if (slot != UNKNOWN) {
        if (unchecked(stamps[slot]) == stamp) {
          this.replaceValue(unchecked(positions[slot]) - 1, valueAt, <i32>valueLen);
        } else {
          unchecked((stamps[slot] = stamp));
          unchecked((positions[slot] = this.appendReserved(slot, keyAt, <i32>keyLen, valueAt, <i32>valueLen) + 1));
        }
      } else {
        this.placeUnknown(keyAt, <i32>keyLen, valueAt, <i32>valueLen);
      }
      data += keyLen + valueLen + 2;
    }
    // The entries are what reading the block gives, until something changes them.
    this.sourcePtr = this.base;
    this.sourceLen = len;
    this.sourceKind = SOURCE_PAIRS;
    this.sourceNumber = newSourceId();
    return true;
  }

  private refuse(): bool {
    this.clear();
    return false;
  }

  // A name that is not a known string: found by a scan of the others like it.
  private placeUnknown(keyAt: i32, keyLength: i32, valueAt: i32, valueLength: i32): void {
    const i = this.unknown == 0 ? -1 : this.scanForBytes(this.base + <usize>keyAt, <usize>keyLength, UNKNOWN);
    if (i >= 0) {
      this.replaceValue(i, valueAt, valueLength);
      return;
    }
    this.append(UNKNOWN, keyAt, keyLength, valueAt, valueLength);
    this.unknown++;
  }

  /** Adds a header given as UTF-8 bytes, copied in (made valid UTF-8); a repeated name as in `fill`. */
  add(keyPtr: usize, keyLen: usize, valuePtr: usize, valueLen: usize): void {
    this.sourceKind = 0;
    this.sourceNumber = 0;
    if (!this.viewing) {
      this.set(decodeUtf8(keyPtr, keyLen), decodeUtf8(valuePtr, valueLen));
      return;
    }
    const keyAt = this.used;
    const keyLength = this.copyIn(keyPtr, keyLen);
    const valueAt = this.used;
    const valueLength = this.copyIn(valuePtr, valueLen);
    const slot = knownSlot(keyPtr, keyLen);
    if (slot == UNKNOWN) {
      this.placeUnknown(keyAt, keyLength, valueAt, valueLength);
    } else if (unchecked(this.stamps[slot]) == this.stamp) {
      this.replaceValue(unchecked(this.positions[slot]) - 1, valueAt, valueLength);
    } else {
      this.index(slot, this.append(slot, keyAt, keyLength, valueAt, valueLength));
    }
  }

  /** Fills the map with the entries of `other` (a map of strings), the way `add` would. */
  fillFrom(other: StringMap): void {
    this.clear();
    const n = other.size;
    for (let i = 0; i < n; i++) {
      const key = String.UTF8.encode(other.keyAt(i));
      const value = String.UTF8.encode(other.valueAt(i));
      this.add(changetype<usize>(key), <usize>key.byteLength, changetype<usize>(value), <usize>value.byteLength);
    }
  }

  protected entriesMoved(): void {
    this.nextStamp();
    this.unknown = 0;
    for (let i = 0, n = this.count; i < n; i++) this.index(this.tagAt(i), i);
  }

  // Copies `len` bytes in after what is there, as valid UTF-8; returns how many were written.
  private copyIn(ptr: usize, len: usize): i32 {
    const clean = isCleanUtf8(ptr, len);
    const room = clean ? <i32>len : <i32>len * 3;
    if (this.used + room > this.bytes.byteLength) this.growBytes(this.used + room);
    const at = this.base + <usize>this.used;
    let written = len;
    if (clean) memory.copy(at, ptr, len);
    else written = writeValidUtf8(ptr, len, at);
    this.used += <i32>written;
    return <i32>written;
  }

  private growBytes(needed: i32): void {
    const grown = new ArrayBuffer(max(needed, this.bytes.byteLength << 1));
    memory.copy(changetype<usize>(grown), this.base, <usize>this.used);
    this.bytes = grown;
    this.base = changetype<usize>(grown);
  }

  private index(slot: i32, i: i32): void {
    if (slot == UNKNOWN) {
      this.unknown++;
      return;
    }
    unchecked((this.stamps[slot] = this.stamp));
    unchecked((this.positions[slot] = i + 1));
  }

  // @ts-ignore: decorator
  @inline private nextStamp(): void {
    if (++this.stamp != 0) return;
    this.restamp();
  }

  private restamp(): void {
    // Wrapped around: old stamps could match again, so forget them all.
    const stamps = this.stamps;
    for (let s = 0; s < stamps.length; s++) unchecked((stamps[s] = 0));
    this.stamp = 1;
  }
}
