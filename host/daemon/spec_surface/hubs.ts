import { type NotApplicable, na } from "./not_applicable.ts";

/**
 * `hubs server` flags of spec 2 this build does not apply, with the reason
 * (docs/daemon-reference.md). The hub evaluates rules in-process: there
 * are no adapters, worker pools or custom resources.
 */
const NO_TRACING = "the hub emits no traces (no tracer)";

export const HUB_NOT_APPLICABLE_FLAGS: readonly NotApplicable[] = [
  na("--adapterWorkerPoolSize", "value", "1024", "there are no adapters: rules are evaluated in-process"),
  na("--apiWorkerPoolSize", "value", "1024", "calls are served on one event loop"),
  na("--numCheckCacheEntries", "value", "1500000", "the hub keeps no check cache (the filter caches check results)"),
  // Upstream's default (false) runs calls on a pool of routines; here every call runs on the one JavaScript thread, so only true describes this hub.
  { ...na("--singleThreaded", "bool", "false", "every call runs on the one JavaScript thread: only --singleThreaded=true describes this hub"), only: ["true"] },
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
