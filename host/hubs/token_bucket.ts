/**
 * A token bucket as golang.org/x/time/rate's Limiter: tokens refill at
 * `ratePerSecond` up to `capacity`, the bucket starts full, and `take`
 * spends one token when there is one. An infinite rate always allows; a
 * capacity of 0 with a finite rate never does (as upstream's limiters).
 */
export class TokenBucket {
  private tokens: number;
  private lastMs: number;

  /** @param now the clock in milliseconds (injected for tests) */
  constructor(
    readonly ratePerSecond: number,
    readonly capacity: number,
    private readonly now: () => number,
  ) {
    this.tokens = capacity;
    this.lastMs = now();
  }

  take(): boolean {
    if (this.ratePerSecond === Number.POSITIVE_INFINITY) return true;
    const now = this.now();
    this.tokens = Math.min(this.capacity, this.tokens + ((now - this.lastMs) * this.ratePerSecond) / 1000);
    this.lastMs = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
