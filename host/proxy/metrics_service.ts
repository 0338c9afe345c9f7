import { METRICS_SERVICE } from "../wire/envoy_grpc.ts";
import { STATSD_FLUSH_INTERVAL_MS, type StatsSnapshot } from "../telemetry/statsd_sink.ts";
import { GrpcStreamSink } from "./grpc_stream_sink.ts";

/**
 * The sidecar's stats at one flush as Envoy's metrics service sink sends
 * them: one io.prometheus.client.MetricFamily per stat, named as `/stats`
 * names it, a COUNTER with its cumulative value (Envoy's default, not
 * deltas) for each counter used so far, a GAUGE for each gauge, every
 * metric stamped with the flush time.
 */
export function metricFamilies(snapshot: StatsSnapshot, nowMs: number): Array<Record<string, unknown>> {
  const families: Array<Record<string, unknown>> = [];
  for (const [name, raw] of snapshot.values) {
    const value = Number(raw);
    const gauge = snapshot.gauges.has(name);
    if (!gauge && value === 0) continue; // never used
    families.push({ name, type: gauge ? "GAUGE" : "COUNTER", metric: [{ [gauge ? "gauge" : "counter"]: { value }, timestamp_ms: String(nowMs) }] });
  }
  return families;
}

export interface MetricsServiceOptions {
  /** `host:port` of the envoy.service.metrics.v3.MetricsService. */
  address: string;
  /** The sidecar's node (`id`, `cluster`), sent in each stream's identifier. */
  node: { id: string; cluster: string };
  snapshot: () => StatsSnapshot;
  onError: (e: Error) => void;
  /** Envoy's stats flush interval, 5 s by default. */
  intervalMs?: number;
  now?: () => number;
}

/**
 * `--proxyMetricsService`: the sidecar's stats (those of `/stats`) streamed
 * to an Envoy metrics service (StreamMetrics) every stats flush interval
 * (upstream Envoy's default, 5 s), and once more on close.
 */
export class MetricsServiceClient {
  private readonly sink: GrpcStreamSink;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly options: MetricsServiceOptions) {
    this.sink = new GrpcStreamSink({
      address: options.address,
      service: METRICS_SERVICE,
      method: "StreamMetrics",
      identifier: { node: options.node },
      onError: options.onError,
    });
    this.timer = setInterval(() => this.flush(), options.intervalMs ?? STATSD_FLUSH_INTERVAL_MS);
    this.timer.unref();
  }

  flush(): void {
    this.sink.send({ envoy_metrics: metricFamilies(this.options.snapshot(), (this.options.now ?? Date.now)()) });
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.flush();
    await this.sink.close();
  }
}
