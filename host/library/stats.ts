// The embedded filter's counters in the application's prom-client registry,
// named as the sidecar exposes them (docs/metrics.md), read when scraped.

import { Counter, Gauge, type Registry } from "prom-client";
import { prometheusStatName, statHelp } from "../proxy/stats_exposition.ts";

export type StatReader = () => ReadonlyMap<string, { value: number; gauge: boolean }>;

/**
 * Registers one metric per counter `read` gives now; each reads its value at
 * collection. Returns the function that removes them again (close()).
 */
export function registerStats(registry: Registry, prefix: string, read: StatReader): () => void {
  const names: string[] = [];
  for (const [stat, { gauge }] of read()) {
    const name = `${prefix}${prometheusStatName(stat, gauge ? "gauge" : "counter")}`;
    if (registry.getSingleMetric(name))
      throw new Error(`options.registry: a metric named ${name} is already registered (another filter? give each a metricsPrefix)`);
    const help = `${statHelp(stat)} (${stat})`;
    const current = () => read().get(stat)?.value ?? 0;
    if (gauge) {
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(current());
        },
      });
    } else {
      new Counter({
        name,
        help,
        registers: [registry],
        collect() {
          this.reset();
          this.inc(current());
        },
      });
    }
    names.push(name);
  }
  return () => names.forEach((n) => registry.removeSingleMetric(n));
}
