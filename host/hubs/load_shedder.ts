import { MovingAverage } from "./moving_average.ts";
import { TokenBucket } from "./token_bucket.ts";

/**
 * The hub's load shedding, as upstream's loadshedding package: a mode and
 * up to two evaluators, each built only when its threshold is set.
 * - `disabled` (the default): nothing is evaluated, every call is served,
 *   whatever the thresholds say (the server logs that they are inert).
 * - `logonly`: a call over a threshold is logged and counted, and served.
 * - `enforce`: a call over a threshold is refused (UNAVAILABLE).
 */
export const LOAD_SHEDDING_MODES = ["disabled", "logonly", "enforce"] as const;
export type LoadSheddingMode = (typeof LOAD_SHEDDING_MODES)[number];

export interface LoadSheddingOptions {
  mode: LoadSheddingMode;
  /** Rate evaluator: calls per second; 0 = no rate evaluator. */
  maxRequestsPerSecond: number;
  burstSize: number;
  /** Latency evaluator: average call duration above which calls are shed; 0 = no latency evaluator. */
  averageLatencyThresholdMs: number;
  /** Calls per second below which the latency threshold is not enforced (a bucket of that many calls, refilled at that rate). */
  latencyEnforcementThreshold: number;
  /** Half-life of a latency sample in the average; 0 = 1 s (as upstream). */
  latencySampleHalflifeMs: number;
  /** Latency samples taken per second at most; 0 or the largest float = every call (as upstream). */
  latencySamplesPerSecond: number;
}

export const DEFAULT_LOAD_SHEDDING: LoadSheddingOptions = Object.freeze({
  mode: "disabled",
  maxRequestsPerSecond: 0,
  burstSize: 0,
  averageLatencyThresholdMs: 0,
  latencyEnforcementThreshold: 100,
  latencySampleHalflifeMs: 1000,
  latencySamplesPerSecond: Number.MAX_VALUE,
});

/** What to do with one call. */
export type SheddingVerdict = { readonly action: "serve" } | { readonly action: "shed" | "log"; readonly evaluator: string; readonly reason: string };

const SERVE: SheddingVerdict = Object.freeze({ action: "serve" });

interface LoadEvaluator {
  readonly name: string;
  /** Why this call is over the threshold, or undefined. */
  exceeded(): string | undefined;
}

/**
 * Token bucket of --maxRequestsPerSecond holding max(1, --burstSize).
 * (Upstream's limiter refuses everything at burst 0; here burst 0 means no
 * allowance beyond a bucket of one.)
 */
class RateLimitEvaluator implements LoadEvaluator {
  readonly name = "rateLimit";
  private readonly bucket: TokenBucket;
  constructor(
    private readonly rate: number,
    private readonly burst: number,
    now: () => number,
  ) {
    this.bucket = new TokenBucket(rate, Math.max(1, burst), now);
  }
  exceeded(): string | undefined {
    return this.bucket.take() ? undefined : `more than ${this.rate} requests per second (burst ${this.burst})`;
  }
}

/**
 * Moving average of call durations against --averageLatencyThreshold,
 * enforced only once the calls exceed --latencyEnforcementThreshold per
 * second (a bucket of that many calls, as upstream: below that volume
 * latency never sheds).
 */
class LatencyEvaluator implements LoadEvaluator {
  readonly name = "grpcResponseLatency";
  private readonly sampler: TokenBucket;
  private readonly enforcement: TokenBucket;
  private readonly average: MovingAverage;
  constructor(
    private readonly thresholdMs: number,
    enforcementThreshold: number,
    halfLifeMs: number,
    samplesPerSecond: number,
    private readonly now: () => number,
  ) {
    const sampleRate = samplesPerSecond === 0 || samplesPerSecond >= Number.MAX_VALUE ? Number.POSITIVE_INFINITY : samplesPerSecond;
    this.sampler = new TokenBucket(sampleRate, 1, now);
    this.enforcement = new TokenBucket(enforcementThreshold, Math.floor(enforcementThreshold), now);
    this.average = new MovingAverage(halfLifeMs > 0 ? halfLifeMs : 1000, 0, now());
  }
  exceeded(): string | undefined {
    if (this.enforcement.take()) return undefined;
    const averageMs = this.average.valueAt(this.now());
    if (averageMs < this.thresholdMs) return undefined;
    return `observed average latency ${(averageMs / 1000).toFixed(6)}s exceeds the threshold ${(this.thresholdMs / 1000).toFixed(6)}s`;
  }
  observe(durationMs: number): void {
    if (this.sampler.take()) this.average.add(durationMs, this.now());
  }
}

export class LoadShedder {
  private readonly evaluators: LoadEvaluator[] = [];
  private readonly latency: LatencyEvaluator | undefined;

  /** @param now the clock in milliseconds (injected for tests) */
  constructor(
    readonly options: LoadSheddingOptions,
    now: () => number = () => performance.now(),
  ) {
    if (options.mode !== "disabled" && options.averageLatencyThresholdMs > 0) {
      this.latency = new LatencyEvaluator(
        options.averageLatencyThresholdMs,
        options.latencyEnforcementThreshold,
        options.latencySampleHalflifeMs,
        options.latencySamplesPerSecond,
        now,
      );
      this.evaluators.push(this.latency);
    }
    if (options.mode !== "disabled" && options.maxRequestsPerSecond > 0)
      this.evaluators.push(new RateLimitEvaluator(options.maxRequestsPerSecond, options.burstSize, now));
  }

  /** Thresholds given that the mode leaves inert (`disabled`): the server warns about them at start. */
  get inertThresholds(): string[] {
    if (this.options.mode !== "disabled") return [];
    return [
      ...(this.options.maxRequestsPerSecond > 0 ? ["--maxRequestsPerSecond"] : []),
      ...(this.options.averageLatencyThresholdMs > 0 ? ["--averageLatencyThreshold"] : []),
    ];
  }

  /** The verdict on a call about to be served: the first evaluator over its threshold decides (in `logonly`, the call is served). */
  judge(): SheddingVerdict {
    for (const e of this.evaluators) {
      const reason = e.exceeded();
      if (reason !== undefined) return { action: this.options.mode === "enforce" ? "shed" : "log", evaluator: e.name, reason };
    }
    return SERVE;
  }

  /** A call ended after `durationMs` (every call, shed ones too, as upstream's gRPC stats handler sees them). */
  observe(durationMs: number): void {
    this.latency?.observe(durationMs);
  }
}
