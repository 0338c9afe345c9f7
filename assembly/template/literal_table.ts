// A hash table from (owner id, literal text) to a value, looked up by a slice
// of another string so that matching a request path allocates nothing.
//
// The path matcher keeps all literal edges of its trie in one table keyed by
// (parent node id, segment text): finding a literal child costs one hash
// probe whatever the number of siblings or registered patterns. It also keeps
// its set of custom verbs in one (owner 0).
//
// Open addressing with linear probing, load factor at most 1/2. Entries are
// never removed: tables are built at configuration time and then only read.

const INITIAL_CAPACITY: i32 = 16;

// FNV-1a (32-bit) over UTF-16 code units: one multiply per code unit, and
// path segments are short.
export const FNV_OFFSET_BASIS: u32 = 0x811c9dc5;
export const FNV_PRIME: u32 = 0x01000193;
// Fibonacci hashing constant (2^32 / golden ratio), spreads owner ids.
const OWNER_MULTIPLIER: u32 = 0x9e3779b1;

/**
 * Hash of `text[start, end)`. Callers hash each request segment once and
 * reuse the value for every probe along the trie walk.
 */
export function hashCodeUnits(text: string, start: i32, end: i32): u32 {
  let hash = FNV_OFFSET_BASIS;
  let pointer = changetype<usize>(text) + (<usize>start << 1);
  const stop = changetype<usize>(text) + (<usize>end << 1);
  while (pointer < stop) {
    hash = (hash ^ <u32>load<u16>(pointer)) * FNV_PRIME;
    pointer += 2;
  }
  return hash;
}

class LiteralEntry<T> {
  constructor(
    public readonly owner: i32,
    public readonly text: string,
    public readonly hash: u32,
    public readonly value: T,
  ) {}
}

export class LiteralTable<T> {
  private slots: StaticArray<LiteralEntry<T> | null> = new StaticArray<LiteralEntry<T> | null>(INITIAL_CAPACITY);
  private count: i32 = 0;

  /**
   * Index of the entry for (owner, `source[start, end)`), or -1. `hash` must
   * be `hashCodeUnits(source, start, end)`.
   */
  find(owner: i32, source: string, start: i32, end: i32, hash: u32): i32 {
    const slots = this.slots;
    const mask = slots.length - 1;
    const length = end - start;
    let index = slotOf(owner, hash) & mask;
    let entry = unchecked(slots[index]);
    while (entry !== null) {
      if (
        entry.hash == hash &&
        entry.owner == owner &&
        entry.text.length == length &&
        sameCodeUnits(changetype<usize>(entry.text), changetype<usize>(source) + (<usize>start << 1), length)
      ) {
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
    const hash = hashCodeUnits(text, 0, text.length);
    const found = this.find(owner, text, 0, text.length, hash);
    if (found >= 0) return this.valueAt(found);
    if ((this.count + 1) * 2 > this.slots.length) this.grow();
    this.place(new LiteralEntry<T>(owner, text, hash, value));
    this.count++;
    return value;
  }

  /** True if (owner, `source[start, end)`) is present. */
  has(owner: i32, source: string, start: i32, end: i32): bool {
    return this.find(owner, source, start, end, hashCodeUnits(source, start, end)) >= 0;
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

// True if the `length` code units at `a` and `b` are equal. Segments are
// short and rarely aligned alike, so a plain loop beats memory.compare.
// @ts-ignore: decorator
@inline
function sameCodeUnits(a: usize, b: usize, length: i32): bool {
  const stop = a + (<usize>length << 1);
  while (a < stop) {
    if (load<u16>(a) != load<u16>(b)) return false;
    a += 2;
    b += 2;
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
