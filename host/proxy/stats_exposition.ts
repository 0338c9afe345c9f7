import { Counter, Gauge, Registry } from "prom-client";

/** One proxy stat as /stats shows it. */
export type StatValues = ReadonlyMap<string, number | bigint>;

/** HELP text of the sidecar's stat families, by name pattern; the first match wins. */
const HELP: ReadonlyArray<[RegExp, string]> = [
  [/^hub_client\.tcp\./, "Hub client counter of the TCP filter (the filter's counters, published every statsUpdateInterval)"],
  [/^hub_client\./, "Hub client counter of the filter (published every statsUpdateInterval)"],
  [/^hub_transport\./, "Hub calls carried by the sidecar's gRPC transport"],
  [/^listener\.[a-z]+\.active$/, "Requests or connections in flight on the listener"],
  [/^listener\./, "Listener counter"],
  [/^jwt_authn\./, "RequestAuthentication outcomes"],
  [/^rbac\.policy\./, "AuthorizationPolicy decisions by policy and rule"],
  [/^rbac\.reason\./, "Authorization decisions by reason"],
  [/^rbac\./, "Authorization decisions"],
  [/^inbound\./, "Inbound requests by transport"],
  [/^outbound\./, "Outbound requests by transport"],
  [/^route\./, "Outbound and gateway routing decisions"],
  [/^http\./, "HTTP requests refused before routing"],
  [/^workload_certificate\./, "Workload certificate rotations"],
  [/^filter\./, "Filter module restarts after traps"],
  [/^config\./, "Configuration directory loads"],
];

export function statHelp(name: string): string {
  return HELP.find(([re]) => re.test(name))?.[1] ?? "Sidecar stat";
}

/**
 * A stat name as a Prometheus name: lower case, every character outside
 * `[a-z0-9_]` an underscore (`hub_client.total_check_calls` →
 * `hub_client_total_check_calls`), and for counters the `_total` suffix
 * Prometheus expects (OpenMetrics; docs/metrics.md).
 */
export function prometheusStatName(name: string, kind: "counter" | "gauge"): string {
  const base = name
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, "_")
    .replace(/^([0-9])/, "_$1");
  return kind === "counter" ? (base.endsWith("_total") ? base : `${base}_total`) : base.replace(/_total$/, "");
}

/**
 * The stats in the Prometheus text format, built with prom-client (HELP and
 * TYPE on every family), followed by the agent's own registry when given.
 * Two stats that map to one Prometheus name keep the first.
 */
export async function statsToPrometheus(stats: StatValues, gauges: ReadonlySet<string>, agent?: Registry): Promise<string> {
  const registry = new Registry();
  const seen = new Set<string>();
  for (const [name, value] of [...stats].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const kind = gauges.has(name) ? "gauge" : "counter";
    const promName = prometheusStatName(name, kind);
    if (seen.has(promName) || agent?.getSingleMetric(promName)) continue;
    seen.add(promName);
    const help = `${statHelp(name)} (${name})`;
    if (kind === "gauge") new Gauge({ name: promName, help, registers: [registry] }).set(Number(value));
    else new Counter({ name: promName, help, registers: [registry] }).inc(Number(value));
  }
  const merged = agent ? Registry.merge([registry, agent]) : registry;
  return merged.metrics();
}
