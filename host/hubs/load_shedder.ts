/**
 * Load shedding as a token bucket: tokens refill at `ratePerSecond`, the
 * bucket holds `burst` tokens (at least 1) and starts full, so within any one
 * second at most rate + burst requests pass. Rate 0 turns shedding off.
 * (Upstream used golang.org/x/time/rate, where burst 0 would refuse every
 * request; here burst 0 means "no extra allowance", i.e. a bucket of 1.)
 */
export class LoadShedder {
  private tokens: number;
  private lastMs: number;
  private readonly capacity: number;

  /** @param now the clock in milliseconds (injected for tests) */
  constructor(
    readonly ratePerSecond: number,
    readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.capacity = Math.max(1, burst);
    this.tokens = this.capacity;
    this.lastMs = now();
  }

  get enabled(): boolean {
    return this.ratePerSecond > 0;
  }

  /** True when the request may proceed; false when it is to be answered UNAVAILABLE. */
  allow(): boolean {
    if (this.ratePerSecond <= 0) return true;
    const now = this.now();
    this.tokens = Math.min(this.capacity, this.tokens + ((now - this.lastMs) * this.ratePerSecond) / 1000);
    this.lastMs = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
