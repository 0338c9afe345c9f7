import { type NotApplicable, na } from "./not_applicable.ts";

/**
 * `hubs server` flags of spec 2 this build does not apply, with the reason
 * (docs/daemon-reference.md). The hub evaluates rules in-process: there
 * are no adapters, worker pools or custom resources.
 */
const NO_TRACING = "the hub emits no traces (no tracer)";
const NO_LATENCY_SHEDDING = "load shedding here is by rate (--maxRequestsPerSecond, --burstSize), not by latency";

export const HUB_NOT_APPLICABLE_FLAGS: readonly NotApplicable[] = [
  na("--adapterWorkerPoolSize", "value", "1024", "there are no adapters: rules are evaluated in-process"),
  na("--apiWorkerPoolSize", "value", "1024", "calls are served on one event loop"),
  na("--numCheckCacheEntries", "value", "1500000", "the hub keeps no check cache (the filter caches check results)"),
  na("--singleThreaded", "bool", "false", "calls are served on one event loop either way", ["true"]),
  na("--profile", "bool", "false", "no profiling endpoint"),
  na("--averageLatencyThreshold", "value", "0s", NO_LATENCY_SHEDDING),
  na("--latencyEnforcementThreshold", "value", "100", NO_LATENCY_SHEDDING),
  na("--latencySampleHalflife", "value", "1s", NO_LATENCY_SHEDDING),
  na("--latencySamplesPerSecond", "value", "1.7976931348623157e+308", NO_LATENCY_SHEDDING),
  na("--loadsheddingMode", "value", "disabled", "--maxRequestsPerSecond always enforces; there is no log-only mode", ["enforce"]),
  na("--trace_tracerD_url", "value", "", NO_TRACING),
  na("--trace_tracerC_url", "value", "", NO_TRACING),
  na("--trace_log_spans", "bool", "false", NO_TRACING),
  na("--trace_sampling_rate", "value", "0", NO_TRACING),
  na("--useAdapterCRDs", "bool", "false", "needs orchestrator custom resources (an orchestrator API)"),
  na("--useTemplateCRDs", "bool", "false", "needs orchestrator custom resources (an orchestrator API)"),
];

/** Spec 2 variables of the hub (HU) this build does not apply. */
export const HUB_NOT_APPLICABLE_ENV: readonly NotApplicable[] = [
  na("MESH_LANG", "value", "", "the hub has one attribute expression language"),
  na("ORCHCONFIG", "value", "", "needs an orchestrator API"),
];
