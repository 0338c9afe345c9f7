import type { Counter, Registry } from "prom-client";
import { GrpcServerMetrics } from "../telemetry/grpc_metrics.ts";
import { daemonRegistry, specCounter, specGauge, specHistogram } from "../telemetry/spec_metrics.ts";
import type { DispatchVariety } from "./check.ts";
import type { LoadedConfig } from "./config_store.ts";
import type { HubConfig } from "./hub_config.ts";

/**
 * The hub's built-in adapters and templates (upstream configured them as
 * resources; here they are compiled in): deny, allowList, memory quota and
 * access log, instantiating the checknothing, listentry, quota and logentry
 * templates. hub_config_adapter_info_configs and hub_config_template_configs
 * count them; their error gauges stay 0 because they cannot fail to load.
 */
export const BUILT_IN_ADAPTERS = ["deny", "allowList", "memquota", "accessLog"] as const;
export const BUILT_IN_TEMPLATES = ["checknothing", "listentry", "quota", "logentry"] as const;

const PER_REQUEST_BUCKETS = [0, 1, 2, 3, 4, 5, 10, 20, 50];
const DURATION_BUCKETS = [0.00001, 0.00005, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1];

/**
 * Every counter and gauge the hub exports: the hub_* rows of spec 2
 * ("Exported counters and gauges"), named as docs/metrics.md says
 * (counters end in `_total`, gauges do not), plus mesh_build, the
 * go-grpc-prometheus counters and the Node process metrics.
 */
export class HubMetrics {
  readonly registry: Registry = daemonRegistry("hubs");
  readonly grpc = new GrpcServerMetrics(this.registry);
  private readonly dispatches = specCounter(
    this.registry,
    "hub_runtime_dispatches_total",
    "Total adapter dispatches: deny/allowList actions applied, quota allocations, access-log entries written",
    ["handler", "variety"],
  );
  readonly dispatchDuration = specHistogram(
    this.registry,
    "hub_runtime_dispatch_duration_seconds",
    "Duration of adapter dispatches: rule and quota evaluation of a Check (variety check), access-log writes of a Report (variety report)",
    DURATION_BUCKETS,
    ["variety"],
  );
  readonly destinationsPerRequest = specHistogram(
    this.registry,
    "hub_dispatcher_destinations_per_request",
    "Handlers dispatched per request (Check or Report)",
    PER_REQUEST_BUCKETS,
  );
  readonly instancesPerRequest = specHistogram(
    this.registry,
    "hub_dispatcher_instances_per_request",
    "Instances created per request: actions applied and access-log entries",
    PER_REQUEST_BUCKETS,
  );
  readonly destinationsPerVariety = specGauge(
    this.registry,
    "hub_dispatcher_destinations_per_variety_total",
    "Handlers configured per template variety (check, quota, report)",
    ["variety"],
  );
  readonly throttled = specCounter(this.registry, "hub_loadshedding_requests_throttled", "Requests dropped by the load shedder");
  /** Ours (not in spec 2): calls --loadsheddingMode logonly would have dropped, served. */
  readonly loggedOnly = specCounter(
    this.registry,
    "hub_loadshedding_requests_logged_only",
    "Calls over a load shedding threshold that --loadsheddingMode logonly logged and served",
  );
  readonly predictedCostShed = specCounter(
    this.registry,
    "hub_loadshedding_predicted_cost_shed_total",
    "Total predicted cost of dropped requests (each call costs 1)",
  );
  readonly adapterInfoConfigs = specGauge(
    this.registry,
    "hub_config_adapter_info_configs_total",
    "Known adapters (built in: deny, allowList, memquota, accessLog)",
  );
  readonly adapterInfoConfigErrors = specGauge(
    this.registry,
    "hub_config_adapter_info_config_errors_total",
    "Errors processing adapter info config (built-in adapters: always 0)",
  );
  readonly attributes = specGauge(this.registry, "hub_config_attributes_total", "Known attributes (global word list)");
  readonly handlerConfigs = specGauge(this.registry, "hub_config_handler_configs_total", "Known handlers (HubQuota and HubAccessLog)");
  readonly handlerValidationErrors = specGauge(
    this.registry,
    "hub_config_handler_validation_error_total",
    "Handler validation errors: HubQuota and HubAccessLog documents currently kept out",
  );
  readonly instanceConfigs = specGauge(this.registry, "hub_config_instance_configs_total", "Known instances: actions of the known rules");
  readonly instanceConfigErrors = specGauge(
    this.registry,
    "hub_config_instance_config_errors_total",
    "Errors processing instance config: HubRule documents kept out for a bad action (spec.actions)",
  );
  readonly ruleConfigs = specGauge(this.registry, "hub_config_rule_configs_total", "Known rules (HubRule)");
  readonly ruleConfigErrors = specGauge(
    this.registry,
    "hub_config_rule_config_errors_total",
    "Errors processing rule config: files and HubRule documents currently kept out",
  );
  readonly ruleMatchErrors = specGauge(this.registry, "hub_config_rule_config_match_error_total", "Rule conditions not parseable (bad regex)");
  readonly templateConfigs = specGauge(
    this.registry,
    "hub_config_template_configs_total",
    "Known templates (built in: checknothing, listentry, quota, logentry)",
  );
  readonly templateConfigErrors = specGauge(
    this.registry,
    "hub_config_template_config_errors_total",
    "Errors processing template config (built-in templates: always 0)",
  );
  readonly unsatisfiedActionHandlers = specGauge(
    this.registry,
    "hub_config_unsatisfied_action_handler_total",
    "Actions that cannot be carried out because their handler is unavailable: quota actions naming no HubQuota",
  );
  readonly closedHandlers = specGauge(this.registry, "hub_handler_closed_handlers_total", "Handlers closed during the last config transition");
  readonly daemons = specGauge(
    this.registry,
    "hub_handler_daemons_total",
    "Active daemon routines per adapter environment (none: handlers run no background routines)",
  );
  readonly handlerBuildFailures = specGauge(
    this.registry,
    "hub_handler_handler_build_failures_total",
    "Handlers that failed creation since the last config transition (access-log files that cannot be opened)",
  );
  readonly handlerCloseFailures = specGauge(
    this.registry,
    "hub_handler_handler_close_failures_total",
    "Errors closing handlers since the last config transition (always 0: closing an access log ends its stream, and a failing stream counts as a build failure)",
  );
  readonly newHandlers = specGauge(this.registry, "hub_handler_new_handlers_total", "Handlers newly created in the last config transition");
  readonly reusedHandlers = specGauge(this.registry, "hub_handler_reused_handlers_total", "Handlers re-used in the last config transition");
  readonly workers = specGauge(
    this.registry,
    "hub_handler_workers_total",
    "Active worker routines per adapter environment (none: every call runs on the one JavaScript thread)",
  );
  private readonly dispatchChildren = new Map<string, Counter.Internal>();
  /** The handlers (HubQuota, HubAccessLog) of the configuration in force: id → content. */
  private handlers = new Map<string, string>();
  private readonly failedHandlers = new Set<string>();
  readonly reportEntriesRefused = specCounter(
    this.registry,
    "hub_report_entries_refused_total",
    "Reported requests refused alone (unknown word, invalid UTF-8) while the rest of their batch was taken",
  );

  constructor() {
    this.adapterInfoConfigs.set(BUILT_IN_ADAPTERS.length);
    this.templateConfigs.set(BUILT_IN_TEMPLATES.length);
    for (const variety of ["check", "quota", "report"] as const) this.destinationsPerVariety.set({ variety }, 0);
  }

  /** Sets the config gauges from a newly applied configuration, comparing its handlers with the previous one's. */
  configApplied(loaded: LoadedConfig): void {
    const { config, errors } = loaded;
    const kinds = errors.map(errorKind);
    this.ruleConfigs.set(config.rules.length);
    this.ruleConfigErrors.set(kinds.filter((k) => k !== "handler").length);
    this.ruleMatchErrors.set(loaded.matchErrors);
    this.handlerConfigs.set(config.quotas.size + config.accessLogs.length);
    this.handlerValidationErrors.set(kinds.filter((k) => k === "handler").length);
    this.instanceConfigs.set(config.rules.reduce((n, r) => n + r.actions.length, 0));
    this.instanceConfigErrors.set(errors.filter((e) => /: spec\.actions\[/.test(e)).length);
    this.unsatisfiedActionHandlers.set(unsatisfiedQuotaActions(config));
    this.destinationsPerVariety.set({ variety: "check" }, config.preconditionRules.length);
    this.destinationsPerVariety.set({ variety: "quota" }, config.quotas.size);
    this.destinationsPerVariety.set({ variety: "report" }, config.accessLogs.length);
    const next = new Map<string, string>([...config.quotas.values(), ...config.accessLogs].map((h) => [h.id, JSON.stringify(h)]));
    let created = 0;
    let reused = 0;
    for (const [id, body] of next) {
      if (this.handlers.get(id) === body) reused++;
      else created++;
    }
    this.newHandlers.set(created);
    this.reusedHandlers.set(reused);
    this.closedHandlers.set([...this.handlers].filter(([id, body]) => next.get(id) !== body).length);
    this.handlers = next;
    this.failedHandlers.clear();
    this.handlerBuildFailures.set(0);
    this.handlerCloseFailures.set(0);
  }

  /** An access-log file that could not be opened (a handler that failed creation). */
  handlerFailed(id: string): void {
    this.failedHandlers.add(id);
    this.handlerBuildFailures.set(this.failedHandlers.size);
  }

  dispatched(handler: string, variety: DispatchVariety, count = 1): void {
    const id = `${handler}\u0000${variety}`;
    let c = this.dispatchChildren.get(id);
    if (c === undefined) {
      c = this.dispatches.labels({ handler, variety });
      this.dispatchChildren.set(id, c);
    }
    c.inc(count);
  }

  /** One request's fan-out: distinct handlers and instances (dispatches). */
  request(destinations: number, instances: number): void {
    this.destinationsPerRequest.observe(destinations);
    this.instancesPerRequest.observe(instances);
  }
}

/** Which gauge a configuration error belongs to: HubQuota/HubAccessLog documents are handlers; HubRule documents and whole files are rules. */
export function errorKind(error: string): "handler" | "rule" {
  return /: (HubQuota|HubAccessLog) [^ :]+\/[^ :]+: /.test(error) ? "handler" : "rule";
}

/** Quota actions whose quota name no HubQuota defines (their handler is unavailable: such a quota is unlimited). */
export function unsatisfiedQuotaActions(config: HubConfig): number {
  let n = 0;
  for (const rule of config.rules) for (const a of rule.actions) if (a.kind === "quota" && !config.quotas.has(a.name)) n++;
  return n;
}
