// Time and chance for the hub transport, injected so retries and deadlines
// are deterministic under test (aesthetics §1.7 "Avoid": grpc-js's backoff
// calls Math.random and new Date directly and cannot be tested that way).

import { SharedTimer } from "./shared_timer.ts";

/** Cancels a timer set with `TransportClock.setTimer`; calling it twice is harmless. */
export type CancelTimer = () => void;

/** The transport's view of time: a monotonic clock, backoff waits and per-attempt deadline timers. */
export interface TransportClock {
  /** Monotonic milliseconds (only differences are meaningful). */
  now(): number;
  /** Resolves after `ms` milliseconds: the wait before a retry. */
  sleep(ms: number): Promise<void>;
  /** Calls `fn` once after `ms` milliseconds unless cancelled first: an attempt's deadline. */
  setTimer(ms: number, fn: () => void): CancelTimer;
}

/** A number drawn uniformly from [0, 1): the backoff jitter. */
export type RandomSource = () => number;

/** The deadlines of every transport on the real clock, on one Node timer (shared_timer.ts says why). */
const deadlines = new SharedTimer({
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
});

/** Node's timers and `performance.now()`. */
export const realClock: TransportClock = Object.freeze({
  now: () => performance.now(),
  sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
  setTimer: (ms: number, fn: () => void): CancelTimer => deadlines.set(ms, fn),
});

/** `Math.random`: jitter needs no cryptographic quality. */
export const realRandom: RandomSource = () => Math.random();
