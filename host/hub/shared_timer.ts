// The real clock's deadline timers (clock.ts `realClock.setTimer`): one Node
// timer shared by all of them, instead of a `setTimeout` and a
// `clearTimeout` per hub call attempt.
//
// Every attempt sets a deadline (5 s) and nearly every one is cancelled
// long before it, by its answer. A Node timer of a duration no other live
// timer has makes and drops a timer list and its place in the timers'
// priority queue each time (about 39 000 instructions per call in the
// agent, where this path runs rarely enough to stay in baseline code). Here
// a deadline is an entry in a list kept in due order; the one Node timer is
// armed for the earliest entry and is only re-armed when a new deadline is
// earlier than the one it waits for, or when it fires. A cancelled entry
// stays in the list (its callback dropped, so it holds nothing) until the
// timer passes it.
//
// Process lifetime is unchanged: the Node timer keeps the process alive
// exactly while some deadline is pending (ref'd on the first, unref'd when
// the last is cancelled or has fired), as the per-attempt timers did.

/** What the shared timer needs from Node's timers: injectable for tests. */
export interface TimerHost {
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** The part of Node's `Timeout` used here. */
export interface TimerHandle {
  ref(): unknown;
  unref(): unknown;
}

interface Deadline {
  due: number;
  fn: (() => void) | undefined;
}

/** Past this many entries, cancelled ones are dropped from the list at once rather than when the timer passes them. */
const COMPACT_AT = 1024;

export class SharedTimer {
  /** Deadlines in due order (equal ones in the order set); cancelled ones have no `fn`. */
  private deadlines: Deadline[] = [];
  private live = 0;
  private handle: TimerHandle | undefined;
  /** When the Node timer, if armed, fires. */
  private armedFor = Number.POSITIVE_INFINITY;
  private held = false;

  constructor(private readonly host: TimerHost) {}

  /** Calls `fn` once, `ms` milliseconds from now, unless the returned function is called first (calling it again is harmless). */
  set(ms: number, fn: () => void): () => void {
    // At least 1 ms, as Node's setTimeout.
    const entry: Deadline = { due: this.host.now() + Math.max(1, ms), fn };
    const list = this.deadlines;
    let i = list.length;
    while (i > 0 && list[i - 1].due > entry.due) i--;
    if (i === list.length) list.push(entry);
    else list.splice(i, 0, entry);
    this.live++;
    if (entry.due < this.armedFor) this.arm(entry.due);
    this.hold(true);
    return () => this.cancel(entry);
  }

  /** Deadlines set and neither fired nor cancelled. */
  pending(): number {
    return this.live;
  }

  private cancel(entry: Deadline): void {
    if (entry.fn === undefined) return;
    entry.fn = undefined;
    this.live--;
    if (this.live === 0) this.hold(false);
    if (this.deadlines.length >= COMPACT_AT && this.live * 2 < this.deadlines.length) this.deadlines = this.deadlines.filter((d) => d.fn !== undefined);
  }

  /** The Node timer keeps the process alive while a deadline is pending, and only then. */
  private hold(on: boolean): void {
    if (on === this.held || this.handle === undefined) return;
    this.held = on;
    if (on) this.handle.ref();
    else this.handle.unref();
  }

  private arm(due: number): void {
    if (this.handle !== undefined) this.host.clearTimeout(this.handle);
    this.armedFor = due;
    this.handle = this.host.setTimeout(() => this.fire(), Math.max(1, Math.ceil(due - this.host.now())));
    this.held = true;
    if (this.live === 0) this.hold(false);
  }

  private fire(): void {
    this.handle = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    this.held = false;
    // Deadlines set by the callbacks below are due at least 1 ms after `now`: they wait for the next firing.
    const now = this.host.now();
    const list = this.deadlines;
    let n = 0;
    while (n < list.length && (list[n].fn === undefined || list[n].due <= now)) n++;
    const due = list.splice(0, n);
    let i = 0;
    try {
      while (i < due.length) {
        const entry = due[i++];
        const fn = entry.fn;
        if (fn === undefined) continue;
        entry.fn = undefined;
        this.live--;
        fn();
      }
    } finally {
      // A callback that threw leaves the rest for the timer armed here (a callback's cancel may have compacted the list into a new array).
      if (i < due.length) this.deadlines.unshift(...due.slice(i));
      const next = this.deadlines.find((d) => d.fn !== undefined);
      if (next === undefined) this.hold(false);
      else if (next.due < this.armedFor) this.arm(next.due);
    }
  }
}
