import type { RateLimitAlgorithm } from "../config/resources/hub_rules.ts";
import { allocateWindow, type Grant, usedAt, type WindowState } from "./quota_windows.ts";

/** Retries of one logical check (same deduplication id) within this time get the first answer again. */
export const DEDUPLICATION_WINDOW_MS = 10_000;

export interface AllocateRequest {
  /** The quota's name (CheckRequest.quotas key). */
  quotaName: string;
  /** Counter identity: the quota name, and the override's hash when one applies (quota.ts `planQuota`). */
  key: string;
  algorithm: RateLimitAlgorithm;
  maxAmount: number;
  windowMs: number;
  /** ROLLING_WINDOW: bucket length; ignored by FIXED_WINDOW. */
  bucketMs: number;
  amount: number;
  /** true: grant what is left (possibly less than asked, possibly 0); false: all or nothing. */
  bestEffort: boolean;
  /** CheckRequest.deduplication_id; empty = no deduplication. */
  deduplicationId?: string;
}

/** An allocation's answer. `status` is set when the store could not decide and its failure mode did (quota_failure.ts). */
export interface Allocation extends Grant {
  status?: { code: number; message: string };
}

/**
 * Where quota counters live: in this process (MemQuotaStore) or shared by
 * every replica (RedisQuotaStore). Both implement upstream redisquota's
 * windows (quota_windows.ts) and the same deduplication.
 */
export interface QuotaStore {
  /** `memory` or the store's URL without credentials. */
  readonly description: string;
  allocate(req: AllocateRequest): Allocation | Promise<Allocation>;
  /** Amount used in the current window per counter key, for introspection. */
  usage(): Record<string, number>;
  /** Forgets counters of quotas not kept (after a reload removed them); a shared store lets their keys expire instead. */
  retain(keep: (quotaName: string) => boolean): void;
  /** For /healthz and ControlZ: undefined when healthy, else what is wrong. */
  problem(): string | undefined;
  close(): Promise<void>;
}

interface Counter {
  quotaName: string;
  windowMs: number;
  state: WindowState;
}

/** Quotas in this process: each replica counts on its own (a restart forgets). */
export class MemQuotaStore implements QuotaStore {
  readonly description = "memory";
  private readonly counters = new Map<string, Counter>();
  private readonly dedup = new Map<string, { grant: Grant; validUntilMs: number; expiresMs: number }>();
  private nextSweepMs = 0;

  /** @param now the clock, in milliseconds (injected so tests step time instead of sleeping) */
  constructor(private readonly now: () => number = Date.now) {}

  allocate(req: AllocateRequest): Allocation {
    const now = Math.floor(this.now());
    this.sweep(now);
    const dedupKey = req.deduplicationId ? `${req.deduplicationId}\u0000${req.key}` : undefined;
    if (dedupKey !== undefined) {
      const previous = this.dedup.get(dedupKey);
      if (previous !== undefined && previous.expiresMs > now) return { granted: previous.grant.granted, validDurationMs: Math.max(0, previous.validUntilMs - now) };
    }
    const counter = this.counters.get(counterId(req));
    const { state, grant } = allocateWindow(counter?.state, { ...req, amount: Math.max(0, req.amount) }, now);
    this.counters.set(counterId(req), { quotaName: req.quotaName, windowMs: req.windowMs, state });
    if (dedupKey !== undefined) this.dedup.set(dedupKey, { grant, validUntilMs: now + grant.validDurationMs, expiresMs: now + DEDUPLICATION_WINDOW_MS });
    return grant;
  }

  usage(): Record<string, number> {
    const now = this.now();
    const out: Record<string, number> = {};
    for (const [key, c] of this.counters) out[key] = usedAt(c.state, c.windowMs, now);
    return out;
  }

  retain(keep: (quotaName: string) => boolean): void {
    for (const [key, c] of this.counters) if (!keep(c.quotaName)) this.counters.delete(key);
  }

  problem(): undefined {
    return undefined;
  }

  async close(): Promise<void> {}

  private sweep(now: number): void {
    if (now < this.nextSweepMs) return;
    this.nextSweepMs = now + DEDUPLICATION_WINDOW_MS;
    for (const [key, entry] of this.dedup) if (entry.expiresMs <= now) this.dedup.delete(key);
  }
}

/** The counter of a request: its key and algorithm (a changed algorithm starts a new counter, as in Redis). */
export function counterId(req: Pick<AllocateRequest, "key" | "algorithm">): string {
  return `${req.key};${req.algorithm === "ROLLING_WINDOW" ? "rolling" : "fixed"}`;
}
