import { formatGoDuration } from "../daemon/duration.ts";
import { AnchorError } from "./errors.ts";

/**
 * The lifetime of a workload certificate, as upstream's CA decides it:
 * 0 (or absent) = the default TTL; negative = refused; above the maximum =
 * refused (upstream fails the issuance rather than clamping, so a client that
 * asks for more than it may have learns it at once instead of rotating
 * earlier than it planned). Returns milliseconds.
 */
export function resolveWorkloadTtl(requestedSeconds: number, defaultTtlMs: number, maxTtlMs: number): number {
  if (!Number.isFinite(requestedSeconds) || requestedSeconds < 0) {
    throw new AnchorError(
      "TTL_INVALID",
      `validity_duration ${requestedSeconds} must be a non-negative number of seconds (0 = the default ${formatGoDuration(defaultTtlMs)})`,
    );
  }
  const ttlMs = requestedSeconds === 0 ? defaultTtlMs : requestedSeconds * 1000;
  if (ttlMs > maxTtlMs) {
    throw new AnchorError("TTL_INVALID", `requested TTL ${formatGoDuration(ttlMs)} is greater than the max allowed TTL ${formatGoDuration(maxTtlMs)}`);
  }
  return ttlMs;
}

/**
 * When a certificate valid from notBefore to notAfter should be renewed:
 * `notAfter - grace`, where grace is `ratio × lifetime`, raised to
 * minGraceMs when that is shorter than the lifetime (a 10-minute minimum
 * would otherwise renew a 5-minute certificate at once; then the ratio alone
 * applies). Upstream: the agent's secret rotation (grace period ratio) and
 * ANCHOR_WORKLOAD_CERT_MIN_GRACE_PERIOD.
 */
export function rotationTime(notBeforeMs: number, notAfterMs: number, ratio: number, minGraceMs = 0): number {
  const lifetime = Math.max(0, notAfterMs - notBeforeMs);
  let grace = ratio * lifetime;
  if (grace < minGraceMs && minGraceMs < lifetime) grace = minGraceMs;
  return Math.round(notAfterMs - grace);
}
