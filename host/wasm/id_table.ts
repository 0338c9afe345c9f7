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
    const mask = this.mask;
    // The step runs on every call, the first slot included (see slotOf).
    let i = (id - 1) & mask;
    do i = (i + 1) & mask;
    while (ids[i] !== EMPTY);
    ids[i] = id;
    this.values[i] = value;
    this.count++;
    return this;
  }

  delete(id: number): boolean {
    let i = this.slotOf(id);
    if (i < 0) return false;
    const ids = this.ids;
    const values = this.values;
    const mask = this.mask;
    // Backward shift: an entry further along the probe run moves into the gap when its home slot does not lie between the gap and itself.
    for (;;) {
      let moved = -1;
      for (let j = (i + 1) & mask; ids[j] !== EMPTY; j = (j + 1) & mask) {
        const home = ids[j] & mask;
        const after = home > i;
        const upTo = home <= j;
        if (i <= j ? after && upTo : after || upTo) continue;
        moved = j;
        break;
      }
      // One set of loads and stores for a move and for the final clear:
      // code run only on a move would deoptimize the first time (slotOf).
      const from = moved < 0 ? i : moved;
      const movedId = ids[from];
      const movedValue = values[from];
      ids[i] = moved < 0 ? EMPTY : movedId;
      values[i] = moved < 0 ? undefined : movedValue;
      if (moved < 0) break;
      i = moved;
    }
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

  // The probe's step runs on every call, the first slot included: a step
  // run only on a collision (rare: an id and one 64 or more later both open,
  // e.g. a request waiting for the hub) would meet optimized code without
  // type feedback for it minutes into a run, and deoptimize every
  // per-request function that inlined this one.
  private slotOf(id: number): number {
    const ids = this.ids;
    const mask = this.mask;
    let i = (id - 1) & mask;
    for (;;) {
      i = (i + 1) & mask;
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
