// Retry delay of the hub calls (hub-client §6.4; upstream check_context.h):
// before retry n + 1 (n = retries already made) wait an integer drawn
// uniformly from [base, min(max, base * 2^n)]. The jitter floor is `base`,
// not 0: with the defaults (80 ms, 1000 ms) that is 80 ms exactly, then
// 80-160, 80-320, 80-640, then 80-1000 ms. The host executes the retries;
// the random number is passed in so the policy stays pure and testable.
// Configurations with base > max are rejected at load; here the range then
// collapses to `base`.

/** `random01` in [0, 1). Example: retryDelayNanos(1, 80 ms, 1 s, 0.5) = 120 ms. */
export function retryDelayNanos(retriesMade: u32, baseNanos: i64, maxNanos: i64, random01: f64): i64 {
  if (baseNanos <= 0) return 0;
  let ceiling = maxNanos;
  // base * 2^n without overflow: stop doubling once the cap is reached.
  if (retriesMade < 63 && baseNanos <= (i64.MAX_VALUE >> <i64>retriesMade)) {
    const doubled = baseNanos << <i64>retriesMade;
    if (doubled < ceiling) ceiling = doubled;
  }
  if (ceiling <= baseNanos) return baseNanos;
  const r = random01 > 0 ? random01 : 0.0; // also NaN → 0; >= 1 is clamped below
  // Inclusive range: span + 1 integers.
  const span = ceiling - baseNanos;
  let offset = <i64>Math.floor(r * (<f64>span + 1));
  if (offset > span) offset = span;
  return baseNanos + offset;
}

/**
 * gRPC codes of a failed hub call that say nothing final about the request
 * and are worth another attempt: CANCELLED (not by us), UNKNOWN,
 * DEADLINE_EXCEEDED, ABORTED, INTERNAL, UNAVAILABLE — the same set the Node
 * host's transport retries (host/hub/attempt_status.ts). Anything else is
 * the hub's verdict on these exact bytes; re-sending them gets the same one.
 */
export function isRetryableStatus(code: i32): bool {
  return code == 1 || code == 2 || code == 4 || code == 10 || code == 13 || code == 14;
}
