// The JWKS cache's defaults, apart from the cache (which loads jose): a
// program shows them in its flags' help without loading it.

/** The mesh caches fetched key sets for 5 min (security.md §4.4, proxy-fetch mode). */
export const DEFAULT_JWKS_MAX_AGE_MS = 5 * 60_000;
/**
 * Refetch on an unknown `kid` at most this often. Short, so that a rotated-in
 * key is refused for at most this long after the set was last fetched, yet a
 * flood of made-up `kid`s costs the key server one request per period
 * (`disco-agent proxy --jwksRefetchCooldown`; jose's remote key set uses 30 s).
 */
export const DEFAULT_JWKS_COOLDOWN_MS = 2_000;
/** Upstream `jwtRules[].timeout` default. */
export const DEFAULT_JWKS_TIMEOUT_MS = 5_000;
/** How long a set whose refreshes keep failing is still used (upstream: 7 days). */
export const DEFAULT_JWKS_MAX_STALE_MS = 7 * 24 * 3_600_000;
