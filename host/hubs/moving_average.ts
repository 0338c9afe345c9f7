/**
 * An exponential moving average of irregularly spaced samples, the signal
 * held constant between samples: a sample's weight halves every
 * `halfLifeMs`. EMA(t) = a·(EMA(s) − X(s)) + X(s) with a = 2^(−(t−s)/h),
 * so only the deviation at the last sample is stored (upstream hub's
 * loadshedding average, the same formula).
 */
export class MovingAverage {
  private lastMs: number;
  private lastValue: number;
  private lastDeviation = 0;
  private readonly decayPerMs: number;

  constructor(halfLifeMs: number, initialValue: number, nowMs: number) {
    this.decayPerMs = -Math.LN2 / halfLifeMs;
    this.lastMs = nowMs;
    this.lastValue = initialValue;
  }

  valueAt(nowMs: number): number {
    const alpha = nowMs > this.lastMs ? Math.exp(this.decayPerMs * (nowMs - this.lastMs)) : 1;
    return alpha * this.lastDeviation + this.lastValue;
  }

  add(sample: number, nowMs: number): void {
    const smoothed = this.valueAt(nowMs);
    this.lastDeviation = smoothed - sample;
    this.lastValue = sample;
    this.lastMs = nowMs;
  }
}
