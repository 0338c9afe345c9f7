// A virtual clock for the hub transport: backoff waits are recorded and pass
// at once (advancing virtual time); deadline timers fire only when a test
// advances the clock past them.
import type { CancelTimer, RandomSource, TransportClock } from "../../../host/hub/clock.ts";

interface Timer {
  at: number;
  fn: () => void;
  live: boolean;
}

export class FakeClock implements TransportClock {
  private time = 0;
  private timers: Timer[] = [];
  /** Every backoff wait asked for, ms, in order. */
  readonly sleeps: number[] = [];
  /** Every deadline timer set, ms. */
  readonly deadlines: number[] = [];

  now(): number {
    return this.time;
  }

  sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    this.advance(ms);
    return Promise.resolve();
  }

  setTimer(ms: number, fn: () => void): CancelTimer {
    this.deadlines.push(ms);
    const timer: Timer = { at: this.time + ms, fn, live: true };
    this.timers.push(timer);
    return () => {
      timer.live = false;
    };
  }

  /** Timers set and neither fired nor cancelled. */
  pending(): number {
    return this.timers.filter((t) => t.live).length;
  }

  /** Moves virtual time forward, firing the timers that come due. */
  advance(ms: number): void {
    this.time += ms;
    const due = this.timers.filter((t) => t.live && t.at <= this.time);
    this.timers = this.timers.filter((t) => t.live && t.at > this.time);
    for (const t of due) {
      t.live = false;
      t.fn();
    }
  }
}

/** A random source returning `values` in turn (the last one repeated). */
export function sequence(...values: number[]): RandomSource {
  let i = 0;
  return () => values[Math.min(i++, values.length - 1)];
}

/** The largest double below 1: the top of every jitter range. */
export const ALMOST_ONE = 1 - Number.EPSILON / 2;
