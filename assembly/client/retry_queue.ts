// Hub calls waiting for their backoff to pass before they are sent again.
// Pure: the caller owns the timer (the proxy's tick), asks `nextDue` to arm
// it and `takeDue(now)` when it fires. Entries keep their scheduling order
// among equal due times.

class Scheduled<T> {
  constructor(
    public dueNanos: i64,
    public item: T,
  ) {}
}

export class RetryQueue<T> {
  private entries: Array<Scheduled<T>> = [];

  get size(): i32 {
    return this.entries.length;
  }

  schedule(item: T, dueNanos: i64): void {
    this.entries.push(new Scheduled<T>(dueNanos, item));
  }

  /** The earliest due time, or -1 when nothing waits. */
  nextDue(): i64 {
    let next: i64 = -1;
    for (let i = 0; i < this.entries.length; i++) {
      const d = this.entries[i].dueNanos;
      if (next < 0 || d < next) next = d;
    }
    return next;
  }

  /** Removes and returns the items due at `nowNanos`, in scheduling order. */
  takeDue(nowNanos: i64): Array<T> {
    const due = new Array<T>();
    const keep = new Array<Scheduled<T>>();
    for (let i = 0; i < this.entries.length; i++) {
      const e = this.entries[i];
      if (e.dueNanos <= nowNanos) due.push(e.item);
      else keep.push(e);
    }
    this.entries = keep;
    return due;
  }

  /** Removes and returns everything, due or not (shutdown). */
  takeAll(): Array<T> {
    const all = new Array<T>();
    for (let i = 0; i < this.entries.length; i++) all.push(this.entries[i].item);
    this.entries = [];
    return all;
  }
}
