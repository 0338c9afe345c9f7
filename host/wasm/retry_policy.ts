/** gRPC metadata the filter puts on each hub call (assembly/proxy/plugin.ts RETRY_POLICY_METADATA). */
export const RETRY_POLICY_METADATA = "x-mesh-retry-policy";

/** NetworkFailPolicy's retry settings, as carried by a hub call. */
export interface RetryPolicy {
  maxRetry: number;
  baseRetryWaitMs: number;
  maxRetryWaitMs: number;
}

/** Upstream's defaults when no policy is configured: no retries, 80 ms base, 1 s cap. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({ maxRetry: 0, baseRetryWaitMs: 80, maxRetryWaitMs: 1000 });

/**
 * Reads `max-retry=N;base-retry-wait-ms=N;max-retry-wait-ms=N` from a call's
 * metadata; missing or malformed parts keep their defaults.
 */
export function retryPolicyFrom(metadata: ReadonlyArray<readonly [string, string]>): RetryPolicy {
  const text = metadata.find(([k]) => k === RETRY_POLICY_METADATA)?.[1];
  const policy = { ...DEFAULT_RETRY_POLICY };
  if (!text) return policy;
  for (const part of text.split(";")) {
    const [key, raw] = part.split("=");
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 0) continue;
    if (key === "max-retry") policy.maxRetry = value;
    else if (key === "base-retry-wait-ms") policy.baseRetryWaitMs = value;
    else if (key === "max-retry-wait-ms") policy.maxRetryWaitMs = value;
  }
  return policy;
}

/**
 * Wait before retry number `retriesMade + 1`: an integer drawn uniformly from
 * [base, min(max, base·2^retriesMade)] — exponential backoff whose jitter has
 * a floor of `base`, as the upstream client computed it. `random01` in [0, 1).
 */
export function retryDelayMs(policy: RetryPolicy, retriesMade: number, random01: number): number {
  const base = policy.baseRetryWaitMs;
  const ceiling = Math.min(policy.maxRetryWaitMs, base * 2 ** Math.min(retriesMade, 30));
  return base + Math.floor(random01 * (Math.max(ceiling, base) - base + 1));
}
