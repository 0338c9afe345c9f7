import { type JSONWebKeySet, type JWSHeaderParameters, createLocalJWKSet } from "jose";
import type { JwtRule } from "../../config/resources/security.ts";
import { DEFAULT_JWKS_COOLDOWN_MS, DEFAULT_JWKS_MAX_AGE_MS, DEFAULT_JWKS_MAX_STALE_MS, DEFAULT_JWKS_TIMEOUT_MS } from "./jwks_defaults.ts";

/**
 * JSON Web Key Sets for the JWT rules: inline (`jwks`) or fetched
 * (`jwksUri`). Key selection (kid, alg, kty, use, key_ops) and key import
 * are jose's createLocalJWKSet; this file owns when to fetch:
 * - the first token that needs the set fetches it; concurrent callers share one fetch;
 * - the set is refreshed after `maxAgeMs`; when a refresh fails the last
 *   good set is kept (up to `maxStaleMs`), as the mesh's control plane does;
 * - a token whose `kid` is not in the set triggers a refetch, at most once per
 *   `cooldownMs` (per URI, so per issuer); a token that arrives while a fetch
 *   is under way waits for it, so a key published before the refetch is
 *   accepted by every request from then on; the refetched set replaces the
 *   old one whole, so a removed key stops verifying at once;
 * - failed fetches are retried at most once per `cooldownMs`.
 * jose's createRemoteJWKSet does most of this but reads `Date.now()` itself
 * and discards a good set when a refresh fails, so the clock could not be
 * injected and a key server outage would reject every token.
 */

export { DEFAULT_JWKS_COOLDOWN_MS, DEFAULT_JWKS_MAX_AGE_MS, DEFAULT_JWKS_MAX_STALE_MS, DEFAULT_JWKS_TIMEOUT_MS };

export type JwksErrorCode = "JWKS_FETCH_FAILED" | "JWKS_INVALID" | "JWKS_MISSING";

export class JwksError extends Error {
  constructor(
    readonly code: JwksErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "JwksError";
  }
}

/** The subset of WHATWG fetch the key sets use (inject one in tests). */
export type FetchLike = (
  url: string,
  init: { signal: AbortSignal; headers: Record<string, string>; redirect: "manual" },
) => Promise<{ status: number; json(): Promise<unknown> }>;

export interface JwksOptions {
  fetch?: FetchLike;
  /** Milliseconds since the epoch. */
  now?: () => number;
  maxAgeMs?: number;
  cooldownMs?: number;
  timeoutMs?: number;
  maxStaleMs?: number;
}

export interface KeySnapshot {
  readonly jwks: JSONWebKeySet;
  /** jose's key resolver over `jwks`. */
  readonly getKey: ReturnType<typeof createLocalJWKSet>;
  readonly fetchedAt: number;
}

export interface KeySet {
  /** The URI, or `inline`. */
  readonly source: string;
  /** The keys to verify a token with this header against; throws JwksError when none can be had. */
  keysFor(header: Pick<JWSHeaderParameters, "kid">): Promise<KeySnapshot>;
}

export interface KeySetStats {
  fetches: number;
  fetchFailures: number;
  /** Fetches that yielded a key set (fetches in flight are in neither). */
  fetchSuccesses: number;
  /** Fetches triggered by a token whose `kid` was not in the set. */
  kidRefetches: number;
}

function snapshot(jwks: unknown, fetchedAt: number, source: string): KeySnapshot {
  let getKey: ReturnType<typeof createLocalJWKSet>;
  try {
    getKey = createLocalJWKSet(jwks as JSONWebKeySet);
  } catch (cause) {
    throw new JwksError("JWKS_INVALID", `${source}: not a JSON Web Key Set`, { cause });
  }
  return Object.freeze({ jwks: getKey.jwks() as JSONWebKeySet, getKey, fetchedAt });
}

export class InlineKeySet implements KeySet {
  readonly source = "inline";
  private readonly keys: KeySnapshot;
  constructor(jwks: JSONWebKeySet) {
    this.keys = snapshot(jwks, 0, this.source);
  }
  async keysFor(): Promise<KeySnapshot> {
    return this.keys;
  }
}

export class RemoteKeySet implements KeySet {
  readonly stats: KeySetStats = { fetches: 0, fetchFailures: 0, fetchSuccesses: 0, kidRefetches: 0 };
  private current: KeySnapshot | undefined;
  private pending: Promise<KeySnapshot> | undefined;
  private lastAttemptAt = -Infinity;
  private lastError: JwksError | undefined;
  private readonly fetchImpl: FetchLike;
  private readonly now: () => number;
  private readonly maxAgeMs: number;
  private readonly cooldownMs: number;
  private readonly timeoutMs: number;
  private readonly maxStaleMs: number;

  constructor(
    readonly source: string,
    options: JwksOptions = {},
  ) {
    this.fetchImpl = options.fetch ?? (globalThis.fetch as unknown as FetchLike);
    this.now = options.now ?? Date.now;
    this.maxAgeMs = options.maxAgeMs ?? DEFAULT_JWKS_MAX_AGE_MS;
    this.cooldownMs = options.cooldownMs ?? DEFAULT_JWKS_COOLDOWN_MS;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_JWKS_TIMEOUT_MS;
    this.maxStaleMs = options.maxStaleMs ?? DEFAULT_JWKS_MAX_STALE_MS;
  }

  async keysFor(header: Pick<JWSHeaderParameters, "kid">): Promise<KeySnapshot> {
    const now = this.now();
    const cooling = now < this.lastAttemptAt + this.cooldownMs;
    let keys = this.current;
    if (keys === undefined) {
      if (cooling && this.pending === undefined && this.lastError) throw this.lastError;
      return this.reload();
    }
    if (now >= keys.fetchedAt + this.maxAgeMs && (!cooling || this.pending)) {
      keys = await this.reload().catch(() => this.current!);
    }
    if (now >= keys.fetchedAt + this.maxAgeMs + this.maxStaleMs) throw this.lastError ?? new JwksError("JWKS_FETCH_FAILED", `${this.source}: key set expired`);
    const kid = header.kid;
    if (typeof kid === "string" && !keys.jwks.keys.some((k) => k.kid === kid)) {
      // A fetch under way may bring the key: wait for it rather than refuse.
      if (this.pending) keys = await this.pending.catch(() => this.current!);
      else if (now >= this.lastAttemptAt + this.cooldownMs) {
        this.stats.kidRefetches++;
        keys = await this.reload().catch(() => this.current!);
      }
    }
    return keys;
  }

  /** Fetches now (sharing a fetch already under way). */
  reload(): Promise<KeySnapshot> {
    this.pending ??= this.fetchOnce().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  private async fetchOnce(): Promise<KeySnapshot> {
    this.lastAttemptAt = this.now();
    this.stats.fetches++;
    try {
      let response: Awaited<ReturnType<FetchLike>>;
      try {
        response = await this.fetchImpl(this.source, {
          signal: AbortSignal.timeout(this.timeoutMs),
          headers: { accept: "application/json, application/jwk-set+json" },
          redirect: "manual",
        });
      } catch (cause) {
        throw new JwksError(
          "JWKS_FETCH_FAILED",
          `${this.source}: ${(cause as Error).name === "TimeoutError" ? `no answer within ${this.timeoutMs} ms` : (cause as Error).message}`,
          { cause },
        );
      }
      if (response.status !== 200) throw new JwksError("JWKS_FETCH_FAILED", `${this.source}: HTTP ${response.status}, expected 200`);
      let json: unknown;
      try {
        json = await response.json();
      } catch (cause) {
        throw new JwksError("JWKS_INVALID", `${this.source}: body is not JSON`, { cause });
      }
      const keys = snapshot(json, this.now(), this.source);
      this.current = keys;
      this.lastError = undefined;
      this.stats.fetchSuccesses++;
      return keys;
    } catch (e) {
      this.stats.fetchFailures++;
      this.lastError = e instanceof JwksError ? e : new JwksError("JWKS_FETCH_FAILED", String(e), { cause: e });
      throw this.lastError;
    }
  }
}

/** A rule with neither `jwks` nor `jwksUri`: every token fails (fail closed). */
class MissingKeySet implements KeySet {
  readonly source = "none";
  async keysFor(): Promise<KeySnapshot> {
    throw new JwksError("JWKS_MISSING", "the rule has neither jwks nor jwksUri");
  }
}

/**
 * The key sets of all rules of a sidecar, shared by URI (and by inline text),
 * so every workload and rule naming one URI shares one cache and one fetch.
 *
 * @example
 * const cache = new JwksCache({ now: () => clock.now });
 * const keys = await cache.keySetFor(rule).keysFor({ kid: "key-1" });
 */
export class JwksCache {
  private readonly sets = new Map<string, KeySet>();
  constructor(private readonly options: JwksOptions = {}) {}

  keySetFor(rule: Pick<JwtRule, "jwks" | "jwksKeys" | "jwksUri" | "timeoutMs">): KeySet {
    const key = rule.jwksKeys ? `inline:${rule.jwks}` : rule.jwksUri ? `uri:${rule.jwksUri}` : "none";
    let set = this.sets.get(key);
    if (!set) {
      if (rule.jwksKeys) set = new InlineKeySet(rule.jwksKeys as unknown as JSONWebKeySet);
      else if (rule.jwksUri) set = new RemoteKeySet(rule.jwksUri, { ...this.options, timeoutMs: rule.timeoutMs ?? this.options.timeoutMs });
      else set = new MissingKeySet();
      this.sets.set(key, set);
    }
    return set;
  }

  /** Network fetches of every jwksUri key set so far (the agent's disco_jwks_resolver_network_fetch_* counters). */
  fetchStats(): { successes: number; failures: number } {
    let successes = 0;
    let failures = 0;
    for (const set of this.sets.values()) {
      if (set instanceof RemoteKeySet) {
        successes += set.stats.fetchSuccesses;
        failures += set.stats.fetchFailures;
      }
    }
    return { successes, failures };
  }
}
