import { GRPC_CODES } from "../wire/status_codes.ts";
import type { Allocation } from "./quota_store.ts";

/**
 * What an allocation answers when the shared store cannot (down, slow,
 * failing): `allow` grants what was asked (upstream: redisquota answered
 * UNAVAILABLE and proxies let the request through), `deny` grants nothing.
 */
export const QUOTA_STORE_FAILURE_MODES = ["allow", "deny"] as const;
export type QuotaStoreFailureMode = (typeof QUOTA_STORE_FAILURE_MODES)[number];

/** Defaults of `hubs server --quotaStoreTimeout` and `--quotaStoreFailureMode`. */
export const DEFAULT_QUOTA_STORE_TIMEOUT_MS = 500;
export const DEFAULT_QUOTA_STORE_FAILURE_MODE: QuotaStoreFailureMode = "allow";

/**
 * How long a grant made without the store may be used: short, so a client
 * asks again soon and the store decides once it is back.
 */
export const FAILURE_GRANT_VALIDITY_MS = 1000;

/**
 * The answer of the failure mode. A granted answer has no status (a status
 * would make some clients treat it as a failure of their own); a denial says
 * why in RESOURCE_EXHAUSTED, never UNAVAILABLE, which clients take as "pass".
 */
export function failureAllocation(mode: QuotaStoreFailureMode, amount: number, why: string): Allocation {
  if (mode === "allow") return { granted: Math.max(0, amount), validDurationMs: amount > 0 ? FAILURE_GRANT_VALIDITY_MS : 0 };
  return { granted: 0, validDurationMs: 0, status: { code: GRPC_CODES.RESOURCE_EXHAUSTED, message: `quota store unavailable (${why}): denied by --quotaStoreFailureMode deny` } };
}
