import { fnv64TextOfString } from "../text";
import { AttributeValue } from "./value";

/**
 * Key equality for the linear scans of maps and bags. Keys are mostly the
 * same shared strings (literals, known names), caught by the pointer
 * compare; of the rest, names of one length mostly share a prefix
 * (`request.path`, `request.host`), so the last code unit settles most
 * mismatches before a full compare.
 */
// @ts-ignore: decorator
@inline
export function sameKey(candidate: string, key: string): bool {
  const a = changetype<usize>(candidate);
  const b = changetype<usize>(key);
  if (a == b) return true;
  const length = <usize>key.length;
  if (<usize>candidate.length != length) return false;
  if (length == 0) return true;
  const last = (length - 1) << 1;
  return load<u16>(a + last) == load<u16>(b + last) && candidate == key;
}

/**
 * An ordered string map for headers, query parameters and string-map
 * attributes. Small maps dominate (a request has tens of headers), so a
 * linear scan beats hashing and keeps insertion order for stable output.
 *
 * A request's own maps (its headers, its query parameters) keep their
 * entries as UTF-8 bytes in place (view_map.ts): the methods below are the
 * ones such a map overrides, so readers that go through them, rather than
 * through `keys` and `values`, never make a string of an entry.
 */
export class StringMap {
  protected keyList: Array<string>;
  protected valueList: Array<string>;

  constructor(capacity: i32 = 8) {
    const keys = new Array<string>(capacity);
    const values = new Array<string>(capacity);
    keys.length = 0;
    values.length = 0;
    this.keyList = keys;
    this.valueList = values;
  }

  /** The keys in order (read-only: change the map through its methods). */
  get keys(): Array<string> {
    return this.keyList;
  }

  /** The values in order, `values[i]` that of `keys[i]` (read-only). */
  get values(): Array<string> {
    return this.valueList;
  }

  get size(): i32 {
    return this.keyList.length;
  }

  indexOf(key: string): i32 {
    const keys = this.keyList;
    for (let i = 0, n = keys.length; i < n; i++) {
      if (sameKey(unchecked(keys[i]), key)) return i;
    }
    return -1;
  }

  has(key: string): bool {
    return this.indexOf(key) >= 0;
  }

  /** The value, or null when absent. */
  get(key: string): string | null {
    const i = this.indexOf(key);
    return i < 0 ? null : this.valueAt(i);
  }

  /** The key of entry `i` (0 <= i < size). */
  keyAt(i: i32): string {
    return this.keyList[i];
  }

  /** The value of entry `i` (0 <= i < size). */
  valueAt(i: i32): string {
    return this.valueList[i];
  }

  /** Makes `into` a string value with the text of entry `i`'s value, without copying it. */
  valueInto(i: i32, into: AttributeValue): void {
    into.str = this.valueList[i];
  }

  /**
   * Hash of the entries whatever their order (the check cache's signature of
   * a whole map): each entry's key and value text hashes are added.
   */
  unorderedHash(): u64 {
    let sum: u64 = 0;
    const keys = this.keyList;
    const values = this.valueList;
    for (let i = 0, n = keys.length; i < n; i++) {
      sum += fnv64TextOfString(fnv64TextOfString(ENTRY_HASH_BASIS, unchecked(keys[i])), unchecked(values[i]));
    }
    return sum;
  }

  /** Sets the value; a repeated key replaces the earlier value in place. */
  set(key: string, value: string): void {
    const i = this.indexOf(key);
    if (i < 0) {
      this.keyList.push(key);
      this.valueList.push(value);
    } else {
      this.valueList[i] = value;
    }
  }

  /** Adds only if absent: first occurrence wins. */
  setIfAbsent(key: string, value: string): void {
    if (this.indexOf(key) < 0) {
      this.keyList.push(key);
      this.valueList.push(value);
    }
  }

  /** Empties the map, keeping its storage for reuse. */
  clear(): void {
    this.keyList.length = 0;
    this.valueList.length = 0;
  }

  remove(key: string): void {
    const i = this.indexOf(key);
    if (i < 0) return;
    this.keyList.splice(i, 1);
    this.valueList.splice(i, 1);
  }

  /** A plain copy that owns its strings (a request's own maps are copied out this way). */
  clone(): StringMap {
    const m = new StringMap(0);
    m.keyList = this.keys.slice(0);
    m.valueList = this.values.slice(0);
    return m;
  }
}

/** FNV-1a 64 offset basis, the start of each entry's hash in `unorderedHash`. */
export const ENTRY_HASH_BASIS: u64 = 0xcbf29ce484222325;
