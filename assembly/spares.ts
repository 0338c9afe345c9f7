/**
 * A bounded stack of spare objects (finished streams, evaluations, request
 * views) for the next request to reuse: a fixed array and a count, so taking
 * and giving back are a load and a store each, where an Array's pop and push
 * are calls (push a second one to check its capacity), and calls cost an
 * interpreter such as WAMR more than the work. Objects given back beyond
 * its capacity are left to the collector.
 */
export class Spares<T> {
  private readonly slots: StaticArray<T>;
  private count: i32 = 0;

  constructor(capacity: i32) {
    this.slots = new StaticArray<T>(capacity);
  }

  get size(): i32 {
    return this.count;
  }

  /** A spare, or null when there is none. */
  // @ts-ignore: decorator
  @inline take(): T | null {
    const n = this.count;
    if (n == 0) return null;
    this.count = n - 1;
    const spare = unchecked(this.slots[n - 1]);
    // Not held twice: the slot lets go of it.
    unchecked((this.slots[n - 1] = changetype<T>(0)));
    return spare;
  }

  /** Keeps `spare` for a later `take`, unless full. */
  // @ts-ignore: decorator
  @inline give(spare: T): void {
    const n = this.count;
    if (n < this.slots.length) {
      unchecked((this.slots[n] = spare));
      this.count = n + 1;
    }
  }
}
