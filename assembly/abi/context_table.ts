/**
 * Objects by the context id the host gave them. A proxy creates and deletes
 * a stream context per request; AssemblyScript's `Map` leaves a deleted
 * entry in place and reallocates its storage to compact it every few
 * inserts, so a table of streams would allocate on every few requests. This
 * one is open addressing with linear probing and deletion by backward
 * shift: it allocates only to grow, when more contexts are alive at once
 * than ever before.
 */
export class ContextTable<T> {
  // Keys are id + 1, so 0 marks an empty slot (any u32 id can be held).
  private keys: StaticArray<u64>;
  private values: StaticArray<T>;
  private count: i32 = 0;
  private mask: u32;

  constructor(capacity: i32 = 16) {
    this.keys = new StaticArray<u64>(capacity);
    this.values = new StaticArray<T>(capacity);
    this.mask = <u32>capacity - 1;
    assert((capacity & (capacity - 1)) == 0, "ContextTable: the capacity must be a power of two");
  }

  get size(): i32 {
    return this.count;
  }

  has(id: u32): bool {
    return this.slotOf(id) >= 0;
  }

  /** The object filed under `id`, or null. */
  find(id: u32): T | null {
    const slot = this.slotOf(id);
    return slot < 0 ? null : unchecked(this.values[slot]);
  }

  /** Files `value` under `id`, replacing what was there. */
  // @ts-ignore: decorator
  @inline set(id: u32, value: T): void {
    const slot = this.slotOf(id);
    if (slot >= 0) {
      unchecked((this.values[slot] = value));
      return;
    }
    if ((this.count + 1) << 1 > this.keys.length) this.grow();
    this.insert(<u64>id + 1, value);
    this.count++;
  }

  /** Takes `id` out; false when it was not there. */
  // @ts-ignore: decorator
  @inline delete(id: u32): bool {
    let slot = this.slotOf(id);
    if (slot < 0) return false;
    const keys = this.keys;
    const values = this.values;
    const mask = this.mask;
    // Backward shift: move later members of the probe run into the hole, so
    // lookups never need tombstones.
    let hole = <u32>slot;
    let next = (hole + 1) & mask;
    while (unchecked(keys[next]) != 0) {
      const home = homeOf(unchecked(keys[next]), mask);
      // The member may move to the hole if its home is not in (hole, next].
      if (((next - home) & mask) >= ((next - hole) & mask)) {
        unchecked((keys[hole] = keys[next]));
        unchecked((values[hole] = values[next]));
        hole = next;
      }
      next = (next + 1) & mask;
    }
    unchecked((keys[hole] = 0));
    unchecked((values[hole] = changetype<T>(0)));
    this.count--;
    return true;
  }

  private slotOf(id: u32): i32 {
    const key = <u64>id + 1;
    const keys = this.keys;
    const mask = this.mask;
    for (let slot = homeOf(key, mask); ; slot = (slot + 1) & mask) {
      const k = unchecked(keys[slot]);
      if (k == key) return <i32>slot;
      if (k == 0) return -1;
    }
    return -1;
  }

  private insert(key: u64, value: T): void {
    const keys = this.keys;
    const mask = this.mask;
    let slot = homeOf(key, mask);
    while (unchecked(keys[slot]) != 0) slot = (slot + 1) & mask;
    unchecked((keys[slot] = key));
    unchecked((this.values[slot] = value));
  }

  private grow(): void {
    const oldKeys = this.keys;
    const oldValues = this.values;
    const capacity = oldKeys.length << 1;
    this.keys = new StaticArray<u64>(capacity);
    this.values = new StaticArray<T>(capacity);
    this.mask = <u32>capacity - 1;
    for (let i = 0; i < oldKeys.length; i++) {
      const k = unchecked(oldKeys[i]);
      if (k != 0) this.insert(k, unchecked(oldValues[i]));
    }
  }
}

// @ts-ignore: decorator
@inline
function homeOf(key: u64, mask: u32): u32 {
  return (<u32>key * 0x9e3779b1 >>> 16) & mask;
}
