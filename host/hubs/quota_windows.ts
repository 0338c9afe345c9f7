// The two windows of upstream's redisquota adapter, as pure functions on a
// counter's state, for the memory store. quota_lua.ts runs the same steps
// inside Redis; test/hubs/quota_stores.test.ts holds the two equal.
import type { RateLimitAlgorithm } from "../config/resources/hub_rules.ts";

/** What one allocation asks of a counter. Times in integer milliseconds. */
export interface WindowRequest {
  readonly algorithm: RateLimitAlgorithm;
  readonly maxAmount: number;
  readonly windowMs: number;
  /** ROLLING_WINDOW only. */
  readonly bucketMs: number;
  readonly amount: number;
  /** true: grant what is left (possibly less than asked); false: all or nothing. */
  readonly bestEffort: boolean;
}

/** The answer: what was granted, and for how long the client may use it (0 when nothing was granted). */
export interface Grant {
  readonly granted: number;
  readonly validDurationMs: number;
}

/** FIXED_WINDOW: the window starts at the first allocation after the previous one expired (not aligned to the clock). */
export interface FixedWindowState {
  kind: "fixed";
  used: number;
  expiresAtMs: number;
}

/**
 * ROLLING_WINDOW: the tokens of the open bucket, and closed buckets by their
 * start; a bucket's tokens leave the window `windowMs` after it opened, so
 * an allocation is forgotten between windowMs − bucketMs and windowMs after it was made.
 */
export interface RollingWindowState {
  kind: "rolling";
  /** Tokens in the window: closed buckets plus the open one. */
  used: number;
  bucketUsed: number;
  bucketStartMs: number;
  closed: Array<{ startMs: number; tokens: number }>;
}

export type WindowState = FixedWindowState | RollingWindowState;

/** How much `want` gets out of `left`: all or nothing, or what is left. */
function share(want: number, left: number, bestEffort: boolean): number {
  if (want <= left) return Math.max(0, want);
  return bestEffort && left > 0 ? left : 0;
}

/** Allocates from a fixed window; returns the new state (`state` is not changed). */
export function allocateFixed(state: FixedWindowState | undefined, req: WindowRequest, nowMs: number): { state: FixedWindowState; grant: Grant } {
  const next: FixedWindowState =
    state === undefined || nowMs >= state.expiresAtMs ? { kind: "fixed", used: 0, expiresAtMs: nowMs + req.windowMs } : { ...state };
  const granted = share(req.amount, req.maxAmount - next.used, req.bestEffort);
  next.used += granted;
  return { state: next, grant: { granted, validDurationMs: granted > 0 ? next.expiresAtMs - nowMs : 0 } };
}

/** Allocates from a rolling window; returns the new state (`state` is not changed). */
export function allocateRolling(state: RollingWindowState | undefined, req: WindowRequest, nowMs: number): { state: RollingWindowState; grant: Grant } {
  const next: RollingWindowState = state === undefined ? { kind: "rolling", used: 0, bucketUsed: 0, bucketStartMs: nowMs, closed: [] } : { ...state, closed: [...state.closed] };
  if (nowMs - next.bucketStartMs >= req.bucketMs) {
    if (next.bucketUsed > 0) next.closed.push({ startMs: next.bucketStartMs, tokens: next.bucketUsed });
    next.bucketUsed = 0;
    next.bucketStartMs = nowMs;
  }
  while (next.closed.length > 0 && next.closed[0].startMs <= nowMs - req.windowMs) next.used -= next.closed.shift()!.tokens;
  if (next.used < 0) next.used = 0;
  const granted = share(req.amount, req.maxAmount - next.used, req.bestEffort);
  next.used += granted;
  next.bucketUsed += granted;
  return { state: next, grant: { granted, validDurationMs: granted > 0 ? req.windowMs : 0 } };
}

/** One allocation with the request's algorithm; a state of the other kind (the algorithm changed) starts afresh. */
export function allocateWindow(state: WindowState | undefined, req: WindowRequest, nowMs: number): { state: WindowState; grant: Grant } {
  if (req.algorithm === "ROLLING_WINDOW") return allocateRolling(state?.kind === "rolling" ? state : undefined, req, nowMs);
  return allocateFixed(state?.kind === "fixed" ? state : undefined, req, nowMs);
}

/** Tokens a counter holds at `nowMs` (introspection only: nothing is reclaimed). */
export function usedAt(state: WindowState, windowMs: number, nowMs: number): number {
  if (state.kind === "fixed") return nowMs >= state.expiresAtMs ? 0 : state.used;
  const expired = state.closed.filter((b) => b.startMs <= nowMs - windowMs).reduce((n, b) => n + b.tokens, 0);
  const openExpired = state.bucketStartMs <= nowMs - windowMs ? state.bucketUsed : 0;
  return Math.max(0, state.used - expired - openExpired);
}
