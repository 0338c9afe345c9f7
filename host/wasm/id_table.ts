/**
 * Values by context id (a positive integer), for the streams a VM has open:
 * a few dozen at a time, one added and one removed per request.
 *
 * Why not a Map: a V8 Map re-makes its hash table every few dozen
 * insert-and-delete pairs, and the table it leaves keeps pointers to the
 * entries it held and to its successor (for iterators). Once one such table
 * has been promoted to the old generation, it keeps every later table and
 * their entries (each request's stream, headers and properties) alive
 * through young-generation collections, so they are all promoted too and
 * wait for the next full collection. Here the two arrays are made once and
 * only grow (rarely); a removed entry's slot is cleared, so nothing
 * outlives its stream. Open addressing by `id & mask` (consecutive ids take
 * consecutive slots), linear probing, removal by backward shift (no
 * tombstones).
 */
export class IdTable<T> {
  private ids: number[];
  private values: Array<T | undefined>;
  private mask: number;
  private count = 0;

  constructor(capacity = 64) {
    let c = 8;
    while (c < capacity) c *= 2;
    this.ids = new Array<number>(c).fill(EMPTY);
    this.values = new Array<T | undefined>(c).fill(undefined);
    this.mask = c - 1;
  }

  get size(): number {
    return this.count;
  }

  get(id: number): T | undefined {
    const i = this.slotOf(id);
    return i < 0 ? undefined : this.values[i];
  }

  has(id: number): boolean {
    return this.slotOf(id) >= 0;
  }

  set(id: number, value: T): this {
    const found = this.slotOf(id);
    if (found >= 0) {
      this.values[found] = value;
      return this;
    }
    // At most half full: probes stay short.
    if ((this.count + 1) * 2 > this.ids.length) this.grow();
    const ids = this.ids;
    let i = id & this.mask;
    while (ids[i] !== EMPTY) i = (i + 1) & this.mask;
    ids[i] = id;
    this.values[i] = value;
    this.count++;
    return this;
  }

  delete(id: number): boolean {
    let i = this.slotOf(id);
    if (i < 0) return false;
    const ids = this.ids;
    const mask = this.mask;
    // Backward shift: an entry further along the probe run moves into the gap when its home slot does not lie between the gap and itself.
    for (let j = (i + 1) & mask; ids[j] !== EMPTY; j = (j + 1) & mask) {
      const home = ids[j] & mask;
      if (i <= j ? home > i && home <= j : home > i || home <= j) continue;
      ids[i] = ids[j];
      this.values[i] = this.values[j];
      i = j;
    }
    ids[i] = EMPTY;
    this.values[i] = undefined;
    this.count--;
    return true;
  }

  /** The entries, in no particular order, as a list made now: the table may change while it is walked. */
  entries(): Array<[number, T]> {
    const out: Array<[number, T]> = [];
    for (let i = 0; i < this.ids.length; i++) if (this.ids[i] !== EMPTY) out.push([this.ids[i], this.values[i] as T]);
    return out;
  }

  [Symbol.iterator](): IterableIterator<[number, T]> {
    return this.entries()[Symbol.iterator]();
  }

  clear(): void {
    this.ids.fill(EMPTY);
    this.values.fill(undefined);
    this.count = 0;
  }

  private slotOf(id: number): number {
    const ids = this.ids;
    for (let i = id & this.mask; ; i = (i + 1) & this.mask) {
      const at = ids[i];
      if (at === id) return i;
      if (at === EMPTY) return -1;
    }
  }

  private grow(): void {
    const old = this.entries();
    const c = this.ids.length * 2;
    this.ids = new Array<number>(c).fill(EMPTY);
    this.values = new Array<T | undefined>(c).fill(undefined);
    this.mask = c - 1;
    this.count = 0;
    for (const [id, value] of old) this.set(id, value);
  }
}

const EMPTY = -1;
