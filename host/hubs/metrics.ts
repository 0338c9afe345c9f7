import { collectDefaultMetrics, Counter, Gauge, Registry } from "prom-client";
import { buildInfo } from "../cli/version.ts";
import { registerBuildMetric } from "../telemetry/build_metric.ts";
import { GrpcServerMetrics } from "../telemetry/grpc_metrics.ts";
import type { DispatchVariety } from "./check.ts";

/**
 * Every counter the hub exports (spec 2, "Exported counters and gauges",
 * the hub_* rows that apply to this server), plus gRPC and process metrics.
 */
export class HubMetrics {
  readonly registry = new Registry();
  readonly grpc = new GrpcServerMetrics(this.registry);
  private readonly dispatches = new Counter({
    name: "hub_runtime_dispatches_total",
    help: "Total adapter dispatches: deny/allowList actions applied, quota allocations, access-log entries written",
    labelNames: ["handler", "variety"],
    registers: [this.registry],
  });
  private readonly dispatchChildren = new Map<string, Counter.Internal>();
  readonly throttled = new Counter({ name: "hub_loadshedding_requests_throttled", help: "Requests dropped by the load shedder", registers: [this.registry] });
  readonly ruleConfigs = new Gauge({ name: "hub_config_rule_configs_total", help: "Known rules (HubRule)", registers: [this.registry] });
  readonly ruleConfigErrors = new Gauge({
    name: "hub_config_rule_config_errors_total",
    help: "Errors processing rule config: files and documents currently kept out",
    registers: [this.registry],
  });
  readonly ruleMatchErrors = new Gauge({ name: "hub_config_rule_config_match_error_total", help: "Rule conditions not parseable (bad regex)", registers: [this.registry] });
  readonly handlerConfigs = new Gauge({ name: "hub_config_handler_configs_total", help: "Known handlers (HubQuota and HubAccessLog)", registers: [this.registry] });
  readonly reportEntriesRefused = new Counter({
    name: "hub_report_entries_refused_total",
    help: "Reported requests refused alone (unknown word, invalid UTF-8) while the rest of their batch was taken",
    registers: [this.registry],
  });
  readonly attributes = new Gauge({ name: "hub_config_attributes_total", help: "Known attributes (global word list)", registers: [this.registry] });

  constructor(component = "hubs") {
    collectDefaultMetrics({ register: this.registry });
    registerBuildMetric(this.registry, component, buildInfo());
    for (const g of [this.ruleConfigs, this.ruleConfigErrors, this.ruleMatchErrors, this.handlerConfigs]) g.set(0);
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
}
