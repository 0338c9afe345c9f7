import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { counterName, daemonRegistry, specCounter, specGauge } from "../../host/telemetry/spec_metrics.ts";
import { prometheusStatName, statsToPrometheus } from "../../host/proxy/stats_exposition.ts";
import { needPromtool, promtoolCheck } from "./promtool.ts";

describe("spec metric names under Prometheus conventions", () => {
  it("counters end in _total; gauges keep the spec name", async () => {
    assert.equal(counterName("anchor_server_csr_count"), "anchor_server_csr_count_total");
    assert.equal(counterName("hub_runtime_dispatches_total"), "hub_runtime_dispatches_total");
    const registry = daemonRegistry("test");
    specGauge(registry, "hub_config_rule_configs_total", "Known rules");
    assert.match(await registry.metrics(), /^# TYPE hub_config_rule_configs_total gauge$/m);
  });

  it("proxy stat names become Prometheus names", () => {
    assert.equal(prometheusStatName("hub_client.total_check_calls", "counter"), "hub_client_total_check_calls_total");
    assert.equal(prometheusStatName("listener.inbound.active", "gauge"), "listener_inbound_active");
    assert.equal(prometheusStatName("rbac.policy.foo/require-jwt.rule_0.allowed", "counter"), "rbac_policy_foo_require_jwt_rule_0_allowed_total");
  });

  it("a daemon registry, spec counters and proxy stats pass promtool", async (t) => {
    needPromtool(t);
    const registry = daemonRegistry("test");
    specCounter(registry, "anchor_server_csr_count", "CSRs received").inc();
    specGauge(registry, "anchor_server_root_cert_expiry_timestamp", "Root expiry").set(3);
    const daemon = promtoolCheck(await registry.metrics());
    assert.equal(daemon.problems, "");
    assert.equal(daemon.status, 0);
    const stats = new Map<string, number | bigint>([
      ["hub_client.total_check_calls", 3n],
      ["listener.inbound.active", 1],
      ["rbac.policy.foo/require-jwt.rule_0.allowed", 2],
    ]);
    const proxy = promtoolCheck(await statsToPrometheus(stats, new Set(["listener.inbound.active"]), registry));
    assert.equal(proxy.problems, "");
    assert.equal(proxy.status, 0);
  });

  it("promtool itself finds what the old exposition had wrong (the lint is live)", (t) => {
    needPromtool(t);
    const r = promtoolCheck("# TYPE listener_inbound_active counter\nlistener_inbound_active 1\n# HELP g x\n# TYPE g gauge\ng_total 1\n");
    assert.match(r.problems, /no help text/);
    assert.match(r.problems, /counter metrics should have "_total" suffix/);
  });
});
