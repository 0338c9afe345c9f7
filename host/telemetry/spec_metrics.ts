import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import { buildInfo } from "../daemon/version.ts";
import { registerBuildMetric } from "./build_metric.ts";

/**
 * Spec 2 names metrics by their OpenCensus view (`Sum`, `Count`,
 * `LastValue`, `Distribution`); each is exported under the name upstream's
 * daemons exposed it with, so dashboards and alerts written against the
 * spec find it:
 * - Sum/Count → a counter: the spec name plus `_total` unless it ends so
 *   already (`anchor_server_csr_count` → `anchor_server_csr_count_total`),
 *   the sample name OpenMetrics gives a counter family;
 * - LastValue → a gauge under the spec name, `_total` included
 *   (`hub_config_rule_configs_total`): upstream's exposition, although
 *   `promtool check metrics` asks gauges not to end so (the spec-mandated
 *   exceptions; test/telemetry/spec_metric_names.test.ts lists them from
 *   the spec);
 * - Distribution → a histogram of the spec name.
 * docs/metrics.md lists every spec name with the name it is exported under.
 */
export function counterName(specName: string): string {
  return specName.endsWith("_total") ? specName : `${specName}_total`;
}

/** prom-client's default metrics that are gauges named `_total` (their per-type siblings stay, and `sum()` gives the total). */
const DEFAULT_GAUGES_NAMED_TOTAL = ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"];

/**
 * A daemon's registry: Node process metrics (less the three gauges that
 * break the `_total` convention) and `mesh_build`.
 */
export function daemonRegistry(component: string): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  for (const name of DEFAULT_GAUGES_NAMED_TOTAL) registry.removeSingleMetric(name);
  registerBuildMetric(registry, component, buildInfo());
  return registry;
}

/** A spec `Sum`/`Count` as a counter (one line per counter: `specCounter(registry, "hub_…", "help")`). */
export function specCounter<L extends string = string>(registry: Registry, specName: string, help: string, labelNames: readonly L[] = []): Counter<L> {
  return new Counter<L>({ name: counterName(specName), help, labelNames, registers: [registry] });
}

/** A spec `LastValue` as a gauge, starting at 0. */
export function specGauge<L extends string = string>(registry: Registry, specName: string, help: string, labelNames: readonly L[] = []): Gauge<L> {
  const g = new Gauge<L>({ name: specName, help, labelNames, registers: [registry] });
  if (labelNames.length === 0) (g as Gauge<string>).set(0);
  return g;
}

/** A spec `Distribution` as a histogram. */
export function specHistogram<L extends string = string>(
  registry: Registry,
  specName: string,
  help: string,
  buckets: number[],
  labelNames: readonly L[] = [],
): Histogram<L> {
  return new Histogram<L>({ name: specName, help, buckets, labelNames, registers: [registry] });
}
