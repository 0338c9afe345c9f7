/**
 * The counters and gauges spec 2 assigns to a daemon that it does not
 * export, with the reason (docs/metrics.md gives the same reasons in its
 * status tables). Every other spec row of the daemon is exported under its
 * spec name (host/telemetry/spec_metrics.ts); a test scrapes each daemon and
 * checks both halves against the spec's table
 * (test/telemetry/spec_metric_names.test.ts). A name ending in `*` stands
 * for every spec row it prefixes.
 */
export interface MetricNotExported {
  readonly name: string;
  readonly reason: string;
}

export type SpecDaemon = "disco-agent" | "mesh_ca" | "hubs" | "disco-discovery";

const NO_MCP = "there is no MCP: the configuration comes from files";
const NO_ORCH_WATCH = "no orchestrator API is watched: the configuration folder is read whole";
const DISCOVERY_DOES_IT = "describes listener and cluster generation, which disco-discovery does (exported there)";

export const METRICS_NOT_EXPORTED: Readonly<Record<SpecDaemon, readonly MetricNotExported[]>> = {
  "disco-agent": [
    { name: "endpoint_no_pod", reason: "the agent watches no registry (--endpoint names addresses, not pods)" },
    { name: "total_active_connections", reason: "agent and proxy are one process: the certificate is handed over in memory, there is no SDS stream" },
    { name: "total_stale_connections", reason: "agent and proxy are one process: there is no SDS stream" },
    { name: "total_push_errors", reason: "agent and proxy are one process: there is no SDS stream to fail" },
    { name: "disco_conflict_*", reason: DISCOVERY_DOES_IT },
    { name: "disco_destrule_subsets", reason: DISCOVERY_DOES_IT },
    { name: "disco_duplicate_proxy_clusters", reason: DISCOVERY_DOES_IT },
    { name: "disco_eds_no_instances", reason: DISCOVERY_DOES_IT },
    { name: "disco_endpoint_not_ready", reason: DISCOVERY_DOES_IT },
    { name: "disco_no_ip", reason: DISCOVERY_DOES_IT },
    { name: "disco_vservice_dup_domain", reason: DISCOVERY_DOES_IT },
  ],
  mesh_ca: [{ name: "anchor_secret_controller_*", reason: "they count certificates written to orchestrator secrets; this CA writes none (it serves only)" }],
  hubs: [{ name: "mesh_mcp_*", reason: `${NO_MCP} (fs://; mcps:// is refused at start)` }],
  "disco-discovery": [
    {
      name: "anchor_secret_controller_*",
      reason: "they count certificates written to orchestrator secrets; disco-discovery writes none (it relays CreateCertificate to mesh_ca)",
    },
    { name: "hub_*", reason: "disco-discovery evaluates no hub rules: hubs does and exports these" },
    { name: "mesh_mcp_*", reason: NO_MCP },
    {
      name: "disco_conflict_outbound_listener_http_over_current_tcp",
      reason:
        "an HTTP service always takes its port's outbound listener: the TCP services that lose it are counted by disco_conflict_outbound_listener_tcp_over_current_http",
    },
    {
      name: "disco_invalid_out_listeners",
      reason: "outbound listeners are built from fixed parts and encoded with Envoy's protos as they are built: none fails validation",
    },
    { name: "disco_no_ip", reason: NO_ORCH_WATCH },
    { name: "disco_orch_*", reason: NO_ORCH_WATCH },
    { name: "disco_total_orch_object_errors", reason: NO_ORCH_WATCH },
    { name: "disco_xds_push_context_errors", reason: "the push context is built synchronously when the folder changes, with no timeout to exceed" },
    { name: "disco_xds_write_timeout", reason: "a response is never abandoned on a timer; a dead proxy is found by keepalive" },
    { name: "disco_jwks_resolver_network_fetch_*", reason: "disco-discovery fetches no key sets: each sidecar fetches jwksUri itself (counted there)" },
    { name: "collector_validation_config_*", reason: "they count patches of the orchestrator's webhook configuration, which needs an orchestrator API" },
  ],
};

/** Whether `entry` stands for the spec row `name`. */
export function coversMetric(entry: MetricNotExported, name: string): boolean {
  return entry.name.endsWith("*") ? name.startsWith(entry.name.slice(0, -1)) : name === entry.name;
}
