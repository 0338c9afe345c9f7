import type { Counter, Gauge, Histogram, Registry } from "prom-client";
import { specCounter, specGauge, specHistogram } from "../telemetry/spec_metrics.ts";

/** Why an allocation did not get the store's answer. */
export type QuotaStoreErrorReason = "unavailable" | "timeout" | "error";

const LATENCY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** The shared quota store's metrics (ours; spec 2 has none), on the hub's registry. */
export class QuotaStoreMetrics {
  readonly errors: Counter<"reason">;
  readonly failureAnswers: Counter<"result">;
  readonly latency: Histogram<"outcome">;
  readonly up: Gauge;

  constructor(registry: Registry) {
    this.errors = specCounter(registry, "hub_quota_store_errors_total", "Quota allocations the shared store did not answer: unavailable (not connected), timeout (--quotaStoreTimeout), error (an error reply)", ["reason"]);
    this.failureAnswers = specCounter(registry, "hub_quota_store_failure_answers_total", "Quota allocations answered by --quotaStoreFailureMode instead of the store, by result (allowed, denied)", ["result"]);
    this.latency = specHistogram(registry, "hub_quota_store_allocation_duration_seconds", "Duration of quota allocations in the shared store, by outcome (ok, failed)", LATENCY_BUCKETS, ["outcome"]);
    this.up = specGauge(registry, "hub_quota_store_up", "1 while the hub is connected to its shared quota store, else 0");
    for (const reason of ["unavailable", "timeout", "error"] as const) this.errors.labels({ reason }).inc(0);
    for (const result of ["allowed", "denied"] as const) this.failureAnswers.labels({ result }).inc(0);
    this.up.set(0);
  }
}
