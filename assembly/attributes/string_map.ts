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
 */
export class StringMap {
  keys: Array<string>;
  values: Array<string>;

  constructor(capacity: i32 = 8) {
    const keys = new Array<string>(capacity);
    const values = new Array<string>(capacity);
    keys.length = 0;
    values.length = 0;
    this.keys = keys;
    this.values = values;
  }

  get size(): i32 {
    return this.keys.length;
  }

  indexOf(key: string): i32 {
    const keys = this.keys;
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
    return i < 0 ? null : this.values[i];
  }

  /** Sets the value; a repeated key replaces the earlier value in place. */
  set(key: string, value: string): void {
    const i = this.indexOf(key);
    if (i < 0) {
      this.keys.push(key);
      this.values.push(value);
    } else {
      this.values[i] = value;
    }
  }

  /** Adds only if absent: first occurrence wins. */
  setIfAbsent(key: string, value: string): void {
    if (this.indexOf(key) < 0) {
      this.keys.push(key);
      this.values.push(value);
    }
  }

  /** Empties the map, keeping its storage for reuse. */
  clear(): void {
    this.keys.length = 0;
    this.values.length = 0;
  }

  remove(key: string): void {
    const i = this.indexOf(key);
    if (i < 0) return;
    this.keys.splice(i, 1);
    this.values.splice(i, 1);
  }

  clone(): StringMap {
    const m = new StringMap(0);
    m.keys = this.keys.slice(0);
    m.values = this.values.slice(0);
    return m;
  }
}
