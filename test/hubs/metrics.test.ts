// The hub's config gauges of spec 2 from configurations built like the server builds them.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseDocuments } from "../../host/config/documents.ts";
import { decodeHubDocument, isHubDocument } from "../../host/config/resources/hub_rules.ts";
import type { LoadedConfig } from "../../host/hubs/config_store.ts";
import { buildHubConfig } from "../../host/hubs/hub_config.ts";
import { errorKind, HubMetrics } from "../../host/hubs/metrics.ts";
import { compileRegex } from "../../host/regex/engine.ts";
import { metricValue } from "./support/hub_process.ts";

function loaded(yaml: string, errors: string[] = []): LoadedConfig {
  const resources = parseDocuments(yaml, "test.yaml")
    .filter(isHubDocument)
    .map((d) => decodeHubDocument(d, { defaultNamespace: "mesh-system", compileRegex }, []));
  const built = buildHubConfig(resources, "mesh-system");
  return { config: built.config, resources, errors: [...errors, ...built.problems], matchErrors: 0 };
}

const doc = (kind: string, name: string, spec: string) => `---\napiVersion: config.mesh.io/v1alpha2\nkind: ${kind}\nmetadata: {name: ${name}}\nspec: ${spec}\n`;
const quota = (name: string, max: number) => doc("HubQuota", name, `{maxAmount: ${max}, validDuration: 1s}`);

describe("hub config gauges", () => {
  it("count rules, instances, handlers and quota actions without a HubQuota", async () => {
    const m = new HubMetrics();
    m.configApplied(
      loaded(
        doc("HubRule", "deny", "{actions: [{deny: {}}]}") +
          doc("HubRule", "limits", "{actions: [{quota: {name: requests}}, {quota: {name: nowhere}}]}") +
          quota("requests", 5) +
          doc("HubAccessLog", "all", "{path: /tmp/hub-metrics-test.jsonl}"),
      ),
    );
    const text = await m.registry.metrics();
    assert.equal(metricValue(text, "hub_config_rule_configs_total"), 2);
    assert.equal(metricValue(text, "hub_config_instance_configs_total"), 3);
    assert.equal(metricValue(text, "hub_config_handler_configs_total"), 2);
    assert.equal(metricValue(text, "hub_config_unsatisfied_action_handler_total"), 1);
    assert.equal(metricValue(text, 'hub_dispatcher_destinations_per_variety_total{variety="check"}'), 1);
    assert.equal(metricValue(text, 'hub_dispatcher_destinations_per_variety_total{variety="quota"}'), 1);
    assert.equal(metricValue(text, 'hub_dispatcher_destinations_per_variety_total{variety="report"}'), 1);
    assert.equal(metricValue(text, "hub_handler_new_handlers_total"), 2);
    assert.equal(metricValue(text, "hub_config_adapter_info_configs_total"), 4);
  });

  it("a configuration change: new, reused and closed handlers", async () => {
    const m = new HubMetrics();
    m.configApplied(loaded(quota("a", 1) + quota("b", 1) + quota("c", 1)));
    m.configApplied(loaded(quota("a", 1) + quota("b", 2) + quota("d", 1)));
    const text = await m.registry.metrics();
    assert.equal(metricValue(text, "hub_handler_reused_handlers_total"), 1, "a is unchanged");
    assert.equal(metricValue(text, "hub_handler_new_handlers_total"), 2, "b changed, d is new");
    assert.equal(metricValue(text, "hub_handler_closed_handlers_total"), 2, "old b and c");
  });

  it("errors are rule or handler errors by the document they name", async () => {
    assert.equal(errorKind("/etc/hub/q.yaml: HubQuota mesh-system/requests: spec.maxAmount: expected a positive integer"), "handler");
    assert.equal(errorKind("/etc/hub/r.yaml: HubRule mesh-system/deny: spec.actions[0]: unknown action"), "rule");
    assert.equal(errorKind("/etc/hub/bad.yaml: line 3: bad indentation"), "rule");
    const m = new HubMetrics();
    m.configApplied(
      loaded(quota("a", 1) + doc("HubQuota", "a2", "{name: a, maxAmount: 1, validDuration: 1s}"), [
        "/etc/hub/r.yaml: HubRule mesh-system/deny: spec.actions[0]: unknown action",
      ]),
    );
    const text = await m.registry.metrics();
    assert.equal(metricValue(text, "hub_config_handler_validation_error_total"), 1, "the duplicate quota name");
    assert.equal(metricValue(text, "hub_config_rule_config_errors_total"), 1);
    assert.equal(metricValue(text, "hub_config_instance_config_errors_total"), 1);
  });
});
