// A hash table from (owner id, literal text) to a value, looked up by a
// range of UTF-8 bytes so that matching a request path allocates nothing.
//
// The path matcher keeps all literal edges of its trie in one table keyed by
// (parent node id, segment text): finding a literal child costs one hash
// probe whatever the number of siblings or registered patterns. It also keeps
// its set of custom verbs in one (owner 0).
//
// Open addressing with linear probing, load factor at most 1/2. Entries are
// never removed: tables are built at configuration time and then only read.

const INITIAL_CAPACITY: i32 = 16;

// FNV-1a (32-bit) over UTF-8 bytes: one multiply per byte, and path
// segments are short. Literals and request paths are compared as UTF-8, the
// form a request's path arrives in (attributes/header_map.ts).
export const FNV_OFFSET_BASIS: u32 = 0x811c9dc5;
export const FNV_PRIME: u32 = 0x01000193;
// Fibonacci hashing constant (2^32 / golden ratio), spreads owner ids.
const OWNER_MULTIPLIER: u32 = 0x9e3779b1;

/**
 * Hash of the `len` bytes at `ptr`. Callers hash each request segment once
 * and reuse the value for every probe along the trie walk.
 */
export function hashBytes(ptr: usize, len: usize): u32 {
  let hash = FNV_OFFSET_BASIS;
  const stop = ptr + len;
  while (ptr < stop) {
    hash = (hash ^ <u32>load<u8>(ptr)) * FNV_PRIME;
    ptr++;
  }
  return hash;
}

class LiteralEntry<T> {
  constructor(
    public readonly owner: i32,
    /** The literal's UTF-8. */
    public readonly text: ArrayBuffer,
    public readonly hash: u32,
    public readonly value: T,
  ) {}
}

export class LiteralTable<T> {
  private slots: StaticArray<LiteralEntry<T> | null> = new StaticArray<LiteralEntry<T> | null>(INITIAL_CAPACITY);
  private count: i32 = 0;

  /**
   * Index of the entry for (owner, the `len` UTF-8 bytes at `ptr`), or -1.
   * `hash` must be `hashBytes(ptr, len)`.
   */
  find(owner: i32, ptr: usize, len: usize, hash: u32): i32 {
    const slots = this.slots;
    const mask = slots.length - 1;
    let index = slotOf(owner, hash) & mask;
    let entry = unchecked(slots[index]);
    while (entry !== null) {
      if (entry.hash == hash && entry.owner == owner && <usize>entry.text.byteLength == len && sameBytes(changetype<usize>(entry.text), ptr, len)) {
        return index;
      }
      index = (index + 1) & mask;
      entry = unchecked(slots[index]);
    }
    return -1;
  }

  /** The value of the entry at `index` (from find or insert). */
  // @ts-ignore: decorator
  @inline valueAt(index: i32): T {
    return changetype<LiteralEntry<T>>(unchecked(this.slots[index])).value;
  }

  /**
   * The value stored for (owner, text): the existing one if there is one,
   * otherwise `value`, which is stored.
   */
  getOrInsert(owner: i32, text: string, value: T): T {
    const bytes = String.UTF8.encode(text);
    const ptr = changetype<usize>(bytes);
    const len = <usize>bytes.byteLength;
    const hash = hashBytes(ptr, len);
    const found = this.find(owner, ptr, len, hash);
    if (found >= 0) return this.valueAt(found);
    if ((this.count + 1) * 2 > this.slots.length) this.grow();
    this.place(new LiteralEntry<T>(owner, bytes, hash, value));
    this.count++;
    return value;
  }

  /** Index of the entry for (owner, text), or -1. */
  findText(owner: i32, text: string): i32 {
    const bytes = String.UTF8.encode(text);
    return this.find(owner, changetype<usize>(bytes), <usize>bytes.byteLength, hashBytes(changetype<usize>(bytes), <usize>bytes.byteLength));
  }

  /** True if (owner, the `len` bytes at `ptr`) is present. */
  has(owner: i32, ptr: usize, len: usize): bool {
    return this.find(owner, ptr, len, hashBytes(ptr, len)) >= 0;
  }

  private place(entry: LiteralEntry<T>): void {
    const slots = this.slots;
    const mask = slots.length - 1;
    let index = slotOf(entry.owner, entry.hash) & mask;
    while (unchecked(slots[index]) !== null) index = (index + 1) & mask;
    unchecked((slots[index] = entry));
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new StaticArray<LiteralEntry<T> | null>(old.length << 1);
    for (let i = 0, n = old.length; i < n; i++) {
      const entry = unchecked(old[i]);
      if (entry !== null) this.place(entry);
    }
  }
}

// True if the `length` bytes at `a` and `b` are equal. Segments are short
// and rarely aligned alike, so a plain loop beats memory.compare.
// @ts-ignore: decorator
@inline
function sameBytes(a: usize, b: usize, length: usize): bool {
  const stop = a + length;
  while (a < stop) {
    if (load<u8>(a) != load<u8>(b)) return false;
    a++;
    b++;
  }
  return true;
}

// Mixes the owner into the text hash, then avalanches (murmur3 fmix32) so that
// the low bits used as the slot index depend on all input bits.
// @ts-ignore: decorator
@inline
function slotOf(owner: i32, hash: u32): i32 {
  let h = hash ^ (<u32>owner * OWNER_MULTIPLIER);
  h ^= h >> 16;
  h *= 0x85ebca6b;
  h ^= h >> 13;
  h *= 0xc2b2ae35;
  h ^= h >> 16;
  return <i32>(h & 0x7fffffff);
}
