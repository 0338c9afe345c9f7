/**
 * Push debouncing as upstream's control plane does it (`DISCO_DEBOUNCE_AFTER`,
 * `DISCO_DEBOUNCE_MAX`): a change is pushed once no other change has come for
 * `afterMs`, but never later than `maxMs` after the first change of a burst,
 * so a steady stream of edits still reaches the proxies. Timers are injected.
 */

export interface Timers {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const REAL_TIMERS: Timers = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

export class Debouncer<T> {
  private pending: T[] = [];
  private firstAt = 0;
  private timer: unknown;

  /** `flush` receives every change of the burst, in order. `afterMs` 0 pushes each change at once. */
  constructor(
    private readonly afterMs: number,
    private readonly maxMs: number,
    private readonly flush: (changes: T[]) => void,
    private readonly timers: Timers = REAL_TIMERS,
  ) {}

  add(change: T): void {
    const now = this.timers.now();
    if (this.pending.length === 0) this.firstAt = now;
    this.pending.push(change);
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    const untilMax = this.firstAt + this.maxMs - now;
    const wait = Math.max(0, Math.min(this.afterMs, untilMax));
    this.timer = this.timers.setTimeout(() => this.fire(), wait);
  }

  /** Pushes what is pending now (at shutdown, or when a caller cannot wait). */
  fire(): void {
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    const changes = this.pending;
    this.pending = [];
    if (changes.length > 0) this.flush(changes);
  }
}
