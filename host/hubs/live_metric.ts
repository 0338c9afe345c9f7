// One standard request metric's series (request_metrics.ts), kept as plain
// numbers and served to prom-client's registry as samples when /metrics is read.
import type { LabelSource, StandardMetric } from "../config/standard_metrics.ts";

/** One metric as configured: on or off, and its labels in order. */
export interface MetricPlan {
  readonly metric: StandardMetric;
  readonly enabled: boolean;
  readonly labels: ReadonlyArray<readonly [string, LabelSource]>;
}

interface Series {
  readonly labels: Record<string, string>;
  /** Counter: the total. Histogram: the sum of observations. */
  value: number;
  count: number;
  /** Histogram: observations per bucket (not cumulative); the last is +Inf. */
  readonly buckets?: number[];
}

/**
 * One standard metric's series, kept as plain numbers and turned into
 * samples only when /metrics is read (prom-client's metric interface:
 * `get()`). prom-client's own children hash their label object on every
 * increment, which with twenty labels cost more than the rest of a report.
 */
export class LiveMetric {
  readonly name: string;
  readonly help: string;
  readonly type: "counter" | "histogram";
  readonly aggregator = "sum";
  private readonly series = new Map<string, Series>();
  private readonly bounds: readonly number[];
  // The series last recorded to and its key: consecutive reports mostly share their labels.
  private lastKey: string | undefined;
  private lastSeries: Series | undefined;

  constructor(readonly plan: MetricPlan) {
    this.name = plan.metric.name;
    this.help = plan.metric.help;
    this.type = plan.metric.type;
    this.bounds = plan.metric.buckets ?? [];
  }

  /** Records one report under label `values` (joined as `key`); false when that would open a label set beyond `maxSeries`. */
  record(key: string, values: readonly string[], value: number, maxSeries: number): boolean {
    let series = key === this.lastKey ? this.lastSeries : this.series.get(key);
    if (series === undefined) {
      if (this.series.size >= maxSeries) return false;
      const labels = Object.fromEntries(this.plan.labels.map(([name], i) => [name, values[i]]));
      series = { labels, value: 0, count: 0, ...(this.type === "histogram" ? { buckets: new Array<number>(this.bounds.length + 1).fill(0) } : {}) };
      this.series.set(key, series);
    }
    this.lastKey = key;
    this.lastSeries = series;
    series.value += value;
    series.count++;
    if (series.buckets !== undefined) {
      let i = 0;
      while (i < this.bounds.length && value > this.bounds[i]) i++;
      series.buckets[i]++;
    }
    return true;
  }

  get(): {
    name: string;
    help: string;
    type: string;
    aggregator: string;
    values: Array<{ labels: Record<string, string | number>; value: number; metricName?: string }>;
  } {
    const values: Array<{ labels: Record<string, string | number>; value: number; metricName?: string }> = [];
    for (const s of this.series.values()) {
      if (s.buckets === undefined) {
        values.push({ labels: s.labels, value: s.value });
        continue;
      }
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += s.buckets![i];
        values.push({ metricName: `${this.name}_bucket`, labels: { le, ...s.labels }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { le: "+Inf", ...s.labels }, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.value });
      values.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.series.clear();
    this.lastKey = undefined;
    this.lastSeries = undefined;
  }
}
