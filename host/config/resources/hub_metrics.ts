// HubMetrics: which attributes feed which label of the hub's standard
// request metrics (host/hubs/standard_metrics.ts holds upstream's defaults).
// Shaped as upstream's Telemetry API metric overrides: a match by metric, an
// on/off switch, and tag overrides that add, replace or remove labels; a
// value is written as upstream's metric instances wrote dimensions
// (`source.labels["app"] | "unknown"`).
import { type LabelExpression, parseLabelExpression } from "../label_expression.ts";
import { METRIC_IDS, type MetricId } from "../standard_metrics.ts";
import type { Field } from "../decode.ts";
import { attempt, attemptEach } from "../problems.ts";

export const METRIC_MATCHES = ["ALL_METRICS", ...METRIC_IDS] as const;
export const TAG_OPERATIONS = ["UPSERT", "REMOVE"] as const;

export type TagOverride = { readonly label: string; readonly operation: "UPSERT"; readonly value: LabelExpression } | { readonly label: string; readonly operation: "REMOVE" };

export interface MetricsOverride {
  /** The metrics it applies to (ALL_METRICS: every one). */
  readonly metrics: readonly MetricId[];
  /** Set: the metrics are switched off (true) or on (false). */
  readonly disabled?: boolean;
  readonly tagOverrides: readonly TagOverride[];
}

/** Prometheus label names, less those Prometheus reserves (`__…`) and `le` (histogram buckets). */
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Decodes `spec` of a HubMetrics document (ids, file and namespace are the caller's). */
export function decodeMetricsSpec(spec: Field): { overrides: MetricsOverride[]; requestDurationUnit?: "SECONDS" | "MILLISECONDS" } {
  spec.allowOnly(["overrides", "requestDurationUnit"]);
  const unitField = spec.get("requestDurationUnit");
  const requestDurationUnit = unitField.present ? attempt(unitField, (f) => f.enumOf(["SECONDS", "MILLISECONDS"] as const)) : undefined;
  const overrides = attemptEach(spec.get("overrides"), (o): MetricsOverride => {
    o.allowOnly(["match", "disabled", "tagOverrides"]);
    const metrics = attempt(o.get("match"), (m) => {
      m.allowOnly(["metric"]);
      const which = m.get("metric").enumOf(METRIC_MATCHES, "ALL_METRICS");
      return which === "ALL_METRICS" ? [...METRIC_IDS] : [which];
    });
    const disabledField = o.get("disabled");
    const disabled = disabledField.present ? disabledField.bool() : undefined;
    const tagOverrides = o
      .get("tagOverrides")
      .entries()
      .map(([label, f]): TagOverride => {
        if (!LABEL_NAME.test(label) || label.startsWith("__") || label === "le") f.invalid(`label name ${JSON.stringify(label)}: expected [a-zA-Z_][a-zA-Z0-9_]*, not starting with __ and not le`);
        f.allowOnly(["operation", "value"]);
        const operation = f.get("operation").enumOf(TAG_OPERATIONS, "UPSERT");
        if (operation === "REMOVE") {
          if (f.get("value").present) f.get("value").warn("ignored: REMOVE takes no value");
          return Object.freeze({ label, operation });
        }
        const valueField = f.get("value");
        const text = valueField.nonEmptyString();
        try {
          return Object.freeze({ label, operation, value: parseLabelExpression(text) });
        } catch (e) {
          return valueField.invalid((e as Error).message);
        }
      });
    return Object.freeze({ metrics: Object.freeze(metrics), ...(disabled !== undefined ? { disabled } : {}), tagOverrides: Object.freeze(tagOverrides) });
  });
  return { overrides, ...(requestDurationUnit !== undefined ? { requestDurationUnit } : {}) };
}
