// The shared quota store: counters in Redis, so every replica of the hub
// draws from the same quota. Each allocation is one script run (quota_lua.ts),
// atomic in Redis. The store never makes a Check wait for long or fail:
// - not connected → the failure mode answers at once;
// - connected but slow → the command times out after --quotaStoreTimeout and
//   the failure mode answers;
// - the client reconnects by itself (backoff up to 1 s) and reloads the
//   scripts when Redis lost them (EVALSHA falls back to EVAL).
// Every failure is counted; the changes between up and down are logged once.
import { Redis } from "ioredis";
import { isIP } from "node:net";
import type { ScopedLogger } from "../telemetry/logger.ts";
import { FIXED_WINDOW_SCRIPT, ROLLING_WINDOW_SCRIPT } from "./quota_lua.ts";
import { failureAllocation, type QuotaStoreFailureMode } from "./quota_failure.ts";
import { type AllocateRequest, type Allocation, counterId, DEDUPLICATION_WINDOW_MS, type QuotaStore } from "./quota_store.ts";
import type { QuotaStoreErrorReason, QuotaStoreMetrics } from "./quota_store_metrics.ts";
import type { QuotaStoreLocation } from "./quota_store_url.ts";

/** Every key the hub writes starts with this. */
export const REDIS_KEY_PREFIX = "mesh-hub:";
/** Longest wait between reconnection attempts. */
export const MAX_RECONNECT_WAIT_MS = 1000;
/** How recent a failed allocation must be to show on /healthz while connected. */
const RECENT_FAILURE_MS = 10_000;

/** ioredis's words for a command that found no connection. */
const NOT_CONNECTED = /Stream isn't writeable|Connection is closed/i;

type ScriptReply = [number, number];
interface QuotaCommands {
  meshQuotaFixed(meta: string, data: string, dedup: string, ...args: Array<string | number>): Promise<ScriptReply>;
  meshQuotaRolling(meta: string, data: string, dedup: string, ...args: Array<string | number>): Promise<ScriptReply>;
}

export interface RedisQuotaStoreOptions {
  location: Extract<QuotaStoreLocation, { kind: "redis" }>;
  /** Longest wait for one allocation (--quotaStoreTimeout). */
  timeoutMs: number;
  failureMode: QuotaStoreFailureMode;
  metrics: QuotaStoreMetrics;
  log: ScopedLogger;
  /** The replica's clock, ms: windows start and end by it. */
  now?: () => number;
}

export class RedisQuotaStore implements QuotaStore {
  readonly description: string;
  private readonly client: Redis & QuotaCommands;
  private readonly now: () => number;
  private readonly log: ScopedLogger;
  private readonly metrics: QuotaStoreMetrics;
  private downSince: number | undefined;
  private lastError = "connecting";
  private lastFailure: { atMs: number; reason: QuotaStoreErrorReason; message: string } | undefined;
  private closing = false;
  private everConnected = false;

  constructor(private readonly options: RedisQuotaStoreOptions) {
    this.description = options.location.description;
    this.now = options.now ?? Date.now;
    this.log = options.log;
    this.metrics = options.metrics;
    this.downSince = this.now();
    this.client = new Redis(options.location.url, {
      // A command while disconnected fails at once instead of waiting in a queue.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.timeoutMs,
      connectTimeout: Math.max(1000, options.timeoutMs),
      retryStrategy: (attempt) => (this.closing ? null : Math.min(50 * 2 ** Math.min(attempt, 10), MAX_RECONNECT_WAIT_MS)),
      // SNI names a host, never an address (RFC 6066); an address is checked against the certificate's IP SANs.
      ...(options.location.tls ? { tls: isIP(options.location.host) ? {} : { servername: options.location.host } } : {}),
    }) as Redis & QuotaCommands;
    this.client.defineCommand("meshQuotaFixed", { numberOfKeys: 3, lua: FIXED_WINDOW_SCRIPT });
    this.client.defineCommand("meshQuotaRolling", { numberOfKeys: 3, lua: ROLLING_WINDOW_SCRIPT });
    this.client.on("ready", () => this.onReady());
    this.client.on("error", (e: Error) => {
      this.lastError = e.message;
    });
    this.client.on("close", () => this.onDown());
  }

  /** Resolves once connected, or after `limitMs` (the hub serves either way; the failure mode answers meanwhile). */
  async waitUntilReady(limitMs: number): Promise<boolean> {
    if (this.client.status === "ready") return true;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.client.off("ready", onReady);
        resolve(false);
      }, limitMs);
      const onReady = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.client.once("ready", onReady);
    });
  }

  async allocate(req: AllocateRequest): Promise<Allocation> {
    if (this.client.status !== "ready") return this.failed(req, "unavailable", `not connected: ${this.lastError}`);
    const id = counterId(req);
    const keys = [`${REDIS_KEY_PREFIX}quota:${id}.meta`, `${REDIS_KEY_PREFIX}quota:${id}.data`, req.deduplicationId ? `${REDIS_KEY_PREFIX}dedup:${req.deduplicationId}-${id}` : ""] as const;
    const args = [req.maxAmount, Math.max(1, Math.round(req.windowMs)), Math.max(1, Math.round(req.bucketMs)), Math.max(0, req.amount), req.bestEffort ? 1 : 0, Math.floor(this.now()), DEDUPLICATION_WINDOW_MS];
    const began = performance.now();
    try {
      const reply = req.algorithm === "ROLLING_WINDOW" ? await this.client.meshQuotaRolling(...keys, ...args) : await this.client.meshQuotaFixed(...keys, ...args);
      if (!Array.isArray(reply) || reply.length !== 2 || !reply.every((n) => Number.isInteger(n))) throw new ReplyError(`unexpected script reply ${JSON.stringify(reply)}`);
      this.metrics.latency.observe({ outcome: "ok" }, (performance.now() - began) / 1000);
      return { granted: reply[0], validDurationMs: reply[1] };
    } catch (e) {
      this.metrics.latency.observe({ outcome: "failed" }, (performance.now() - began) / 1000);
      const message = (e as Error).message;
      const reason: QuotaStoreErrorReason = /timed out/i.test(message) ? "timeout" : this.client.status !== "ready" || NOT_CONNECTED.test(message) ? "unavailable" : "error";
      return this.failed(req, reason, message);
    }
  }

  usage(): Record<string, number> {
    return {};
  }

  retain(): void {
    // Keys of removed quotas expire with their window.
  }

  problem(): string | undefined {
    const mode = `allocations answered by --quotaStoreFailureMode ${this.options.failureMode}`;
    if (this.downSince !== undefined) return `quota store ${this.description}: unavailable since ${new Date(this.downSince).toISOString()} (${this.lastError}); ${mode}`;
    const f = this.lastFailure;
    if (f !== undefined && this.now() - f.atMs < RECENT_FAILURE_MS) return `quota store ${this.description}: an allocation failed at ${new Date(f.atMs).toISOString()} (${f.reason}: ${f.message}); ${mode}`;
    return undefined;
  }

  async close(): Promise<void> {
    this.closing = true;
    try {
      if (this.client.status === "ready") await Promise.race([this.client.quit(), new Promise((r) => setTimeout(r, 1000).unref())]);
    } catch {
      // closing anyway
    }
    this.client.disconnect();
  }

  private failed(req: AllocateRequest, reason: QuotaStoreErrorReason, message: string): Allocation {
    const first = this.lastFailure === undefined || this.now() - this.lastFailure.atMs >= RECENT_FAILURE_MS;
    this.lastFailure = { atMs: this.now(), reason, message };
    this.metrics.errors.inc({ reason });
    const answer = failureAllocation(this.options.failureMode, req.amount, `${reason}: ${message}`);
    this.metrics.failureAnswers.inc({ result: answer.granted > 0 || req.amount <= 0 ? "allowed" : "denied" });
    // One line per episode of failures (connection changes are logged on their own).
    if (first && this.downSince === undefined) this.log.warn(`quota store ${this.description}: allocation failed (${reason}: ${message}); ${this.options.failureMode === "allow" ? "granting" : "denying"} as --quotaStoreFailureMode ${this.options.failureMode} says`);
    return answer;
  }

  private onReady(): void {
    const since = this.downSince;
    this.downSince = undefined;
    this.lastError = "connection closed";
    this.metrics.up.set(1);
    if (since !== undefined) this.log.info(`quota store ${this.description}: connected${this.everConnected ? ` again after ${((this.now() - since) / 1000).toFixed(1)} s` : ""}`);
    this.everConnected = true;
  }

  private onDown(): void {
    if (this.closing || this.downSince !== undefined) return;
    this.downSince = this.now();
    if (this.lastError === "connecting") this.lastError = "connection closed";
    this.metrics.up.set(0);
    this.log.warn(`quota store ${this.description}: connection lost (${this.lastError}); reconnecting; meanwhile allocations are answered by --quotaStoreFailureMode ${this.options.failureMode}`);
  }
}

class ReplyError extends Error {}
