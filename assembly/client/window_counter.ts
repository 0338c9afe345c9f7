// A sliding-window sum in fixed time slots (upstream
// src/istio/prefetch/time_based_counter.cc): the prefetch predicts demand by
// the amounts checked during the last predict window. Time is passed in.

export class WindowCounter {
  private readonly slots: StaticArray<i64>;
  private readonly slotNanos: i64;
  private tail: i32 = 0;
  private total: i64 = 0;
  private lastNanos: i64;

  /** `slotCount` slots of `windowNanos / slotCount` each, starting at `nowNanos`. */
  constructor(slotCount: i32, windowNanos: i64, nowNanos: i64) {
    const count = slotCount > 0 ? slotCount : 1;
    this.slots = new StaticArray<i64>(count);
    const slotNanos = windowNanos / count;
    this.slotNanos = slotNanos > 0 ? slotNanos : 1;
    this.lastNanos = nowNanos;
  }

  inc(amount: i64, nowNanos: i64): void {
    this.roll(nowNanos);
    const slots = this.slots;
    unchecked((slots[this.tail] += amount));
    this.total += amount;
  }

  count(nowNanos: i64): i64 {
    this.roll(nowNanos);
    return this.total;
  }

  // Inlined: within the current slot (nearly every call) it is one compare.
  // @ts-ignore: decorator
  @inline private roll(nowNanos: i64): void {
    const elapsed = nowNanos - this.lastNanos;
    // A clock that went back keeps the current slot (upstream's unsigned cast
    // would clear the window instead).
    if (elapsed >= this.slotNanos) this.advance(nowNanos, elapsed);
  }

  private advance(nowNanos: i64, elapsed: i64): void {
    const slots = this.slots;
    const length = slots.length;
    const steps = elapsed / this.slotNanos;
    if (steps >= <i64>length) {
      for (let i = 0; i < length; i++) unchecked((slots[i] = 0));
      this.tail = 0;
      this.total = 0;
      this.lastNanos = nowNanos;
      return;
    }
    for (let i: i64 = 0; i < steps; i++) {
      const tail = (this.tail + 1) % length;
      this.total -= unchecked(slots[tail]);
      unchecked((slots[tail] = 0));
      this.tail = tail;
      this.lastNanos += this.slotNanos;
    }
  }
}
