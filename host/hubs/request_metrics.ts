// The hub's standard request and TCP metrics (host/config/standard_metrics.ts), counted
// from every reported request and served on /metrics beside the hub's own.
// Labels follow the HubMetrics documents in force; the label sets of each
// metric are bounded (--requestMetricsMaxSeries): a report that would open
// one more is not counted in that metric but in
// hub_request_metrics_overflow_total{metric}, so a label fed by an unbounded
// attribute (a request id) cannot exhaust the hub's memory.
import type { Counter, Registry } from "prom-client";
import type { HubMetrics as HubMetricsDocument } from "../config/resources/hub_rules.ts";
import { specCounter } from "../telemetry/spec_metrics.ts";
import type { AttributeLookup, AttributeMap, AttributeValue } from "../wire/compressed.ts";
import { AttributeSlots, type ReportSlots } from "../wire/report_slots.ts";
import { LiveMetric, type MetricPlan } from "./live_metric.ts";
import {
  HTTP_LABELS,
  labelReads,
  labelValue,
  type LabelSource,
  type MetricId,
  REPORT_PROTOCOL_READS,
  REQUEST_DURATION_MILLISECONDS,
  reportProtocol,
  STANDARD_METRICS,
  TCP_LABELS,
} from "../config/standard_metrics.ts";

/**
 * Upstream's defaults with the documents' overrides applied in order: a tag
 * override UPSERT replaces a label's source or appends a new label, REMOVE
 * drops it; `disabled` switches the matched metrics off or on.
 */
export function planMetrics(documents: readonly HubMetricsDocument[]): MetricPlan[] {
  const unit = documents.reduce<string>((u, d) => d.requestDurationUnit ?? u, "SECONDS");
  return STANDARD_METRICS.map((standard) => {
    const metric = standard.id === "REQUEST_DURATION" && unit === "MILLISECONDS" ? REQUEST_DURATION_MILLISECONDS : standard;
    let enabled = true;
    const labels = new Map<string, LabelSource>(metric.protocol === "http" ? HTTP_LABELS : TCP_LABELS);
    for (const doc of documents) {
      for (const o of doc.overrides) {
        if (!o.metrics.includes(metric.id)) continue;
        if (o.disabled !== undefined) enabled = !o.disabled;
        for (const t of o.tagOverrides) {
          if (t.operation === "REMOVE") labels.delete(t.label);
          else labels.set(t.label, { kind: "expression", expression: t.value });
        }
      }
    }
    return { metric, enabled, labels: [...labels] };
  });
}

/** A plan's labels as text, to tell whether a reload changed them and which metrics share them. */
function labelsSignature(plan: MetricPlan): string {
  return plan.labels.map(([n, s]) => `${n}=${s.kind === "builtin" ? s.text : s.expression.text}`).join("\u0000");
}

/** Enabled metrics of one protocol sharing one label configuration: labels are computed once per report for all of them. */
interface LabelGroup {
  readonly protocol: "http" | "tcp";
  readonly labels: ReadonlyArray<readonly [string, LabelSource]>;
  readonly metrics: LiveMetric[];
  /** Every attribute the labels read. */
  readonly reads: readonly string[];
  /**
   * The last report's label values, their joined key and the attributes
   * they were made of: the reports of a batch mostly share those
   * attributes, and their labels are then taken again, not computed anew
   * (and the same key string looked up again, its hash kept). `counted`:
   * the number of the last report they are the labels of (RequestMetrics.counted).
   */
  last?: { values: string[]; key: string; inputs: Array<AttributeValue | undefined>; counted: number };
  /**
   * Per metric, the slot of the attribute whose count makes its value (-1:
   * the constant in `constants`) and the divisor (StandardMetric.counts);
   * undefined when a metric's value is made otherwise. `counts`: scratch,
   * one value per metric.
   */
  readonly countSlots?: Int32Array;
  readonly divisors: Float64Array;
  readonly constants: Float64Array;
  readonly counts: Float64Array;
}

export class RequestMetrics {
  private live = new Map<MetricId, { metric: LiveMetric; signature: string }>();
  private groups: LabelGroup[] = [];
  private reads: ReadonlySet<string> = new Set();
  /** The attributes read, in slots; those the labels and the protocol read (not the values counted), by slot. */
  private slots = new AttributeSlots([]);
  private labelInputs: Int32Array = new Int32Array(0);
  /** Reports counted so far, and the protocol of the last one. */
  private counted = 0;
  private lastProtocol: "http" | "tcp" | undefined;
  /** The entry whose values countAgain() put in the groups' `counts` last. */
  private countsOf: ReportSlots | undefined;
  private countsEntry = -1;
  private readonly overflow: Counter<"metric">;

  constructor(
    private readonly registry: Registry,
    /** Label sets per metric (--requestMetricsMaxSeries). */
    private readonly maxSeries: number,
  ) {
    this.overflow = specCounter(
      registry,
      "hub_request_metrics_overflow_total",
      "Reported requests not counted in a standard request metric because it already had --requestMetricsMaxSeries label sets",
      ["metric"],
    );
    this.configure([]);
  }

  /**
   * Applies the HubMetrics documents in force. A metric whose configuration
   * changed starts again from zero under its new labels (Prometheus sees a
   * counter reset); the others keep counting.
   */
  configure(documents: readonly HubMetricsDocument[]): void {
    const next = new Map<MetricId, { metric: LiveMetric; signature: string }>();
    for (const plan of planMetrics(documents)) {
      const signature = `${plan.metric.name}\u0000${plan.enabled}\u0000${labelsSignature(plan)}`;
      const previous = this.live.get(plan.metric.id);
      if (previous !== undefined && previous.signature === signature) {
        next.set(plan.metric.id, previous);
        continue;
      }
      if (previous?.metric.plan.enabled) this.registry.removeSingleMetric(previous.metric.name);
      const live = new LiveMetric(plan);
      if (plan.enabled) {
        this.registry.registerMetric(live as never);
        this.overflow.labels({ metric: live.name }).inc(0);
      }
      next.set(plan.metric.id, { metric: live, signature });
    }
    this.live = next;
    const groups = new Map<string, Pick<LabelGroup, "protocol" | "labels" | "metrics" | "reads">>();
    for (const { metric } of next.values()) {
      if (!metric.plan.enabled) continue;
      const key = `${metric.plan.metric.protocol}\u0000${labelsSignature(metric.plan)}`;
      let group = groups.get(key);
      if (group === undefined) {
        const reads = [...new Set(metric.plan.labels.flatMap(([, source]) => labelReads(source)))];
        groups.set(key, (group = { protocol: metric.plan.metric.protocol, labels: metric.plan.labels, metrics: [], reads }));
      }
      group.metrics.push(metric);
    }
    const reads = new Set<string>();
    for (const group of groups.values()) {
      for (const [, source] of group.labels) for (const name of labelReads(source)) reads.add(name);
      for (const live of group.metrics) for (const name of live.plan.metric.reads) reads.add(name);
    }
    if (reads.size > 0) for (const name of REPORT_PROTOCOL_READS) reads.add(name);
    this.reads = reads;
    this.slots = new AttributeSlots([...reads]);
    this.groups = [...groups.values()].map((g) => ({ ...g, ...countsOf(g.metrics, this.slots) }));
    const labelInputs = new Set(reads.size > 0 ? REPORT_PROTOCOL_READS : []);
    for (const group of this.groups) for (const name of group.reads) labelInputs.add(name);
    this.labelInputs = this.slots.slotsNamed(labelInputs);
  }

  /** Every attribute record() reads under the configuration in force: the others need not be decoded for it. */
  attributesRead(): ReadonlySet<string> {
    return this.reads;
  }

  /** attributesRead() in slots, for readReportSlots. */
  attributeSlots(): AttributeSlots {
    return this.slots;
  }

  /** Counts reported requests (one Report's entries). */
  record(entries: readonly AttributeMap[]): void {
    for (const a of entries) this.count(a, false);
  }

  /** Counts one Report's entries as readReportSlots read them with attributeSlots(). */
  recordSlots(batch: ReportSlots): void {
    // Another configuration's slots may lack attributes this one reads (the handler reads and counts in one go).
    if (batch.slots !== this.slots) throw new Error("a Report read with the slots of another metrics configuration");
    const view = batch.view();
    for (let i = 0; i < batch.count; i++) {
      view.entry = i;
      const same = i > 0 && batch.same(i, i - 1, this.labelInputs);
      if (!same || !this.countAgain(batch, i)) this.count(view, same);
    }
    this.countsOf = undefined;
  }

  /**
   * Counts entry `i` of `batch`, which holds the same values of what labels
   * and protocol read as the report counted last, as count() would: under
   * that report's labels, each value made from its count in place (no
   * lookup by name). False, having changed nothing, where count() would
   * make the labels anew or a value otherwise: count it with count().
   */
  private countAgain(batch: ReportSlots, i: number): boolean {
    const protocol = this.lastProtocol;
    const counted = this.counted + 1;
    if (protocol === undefined) {
      this.counted = counted;
      return true;
    }
    const groups = this.groups;
    // The counts made last are entry i - 1's: those of slots whose bytes entry i shares with it are kept.
    const after = this.countsOf === batch && this.countsEntry === i - 1;
    this.countsOf = undefined;
    for (const group of groups) {
      if (group.protocol !== protocol) continue;
      const slots = group.countSlots;
      if (slots === undefined || group.last === undefined || group.last.counted !== counted - 1) return false;
      for (let m = 0; m < slots.length; m++) {
        const slot = slots[m];
        if (slot < 0) {
          group.counts[m] = group.constants[m];
          continue;
        }
        if (after && batch.sameAsBefore(i, slot)) continue;
        const count = batch.countOf(i, slot);
        if (count === undefined) return false;
        group.counts[m] = count / group.divisors[m];
      }
    }
    this.countsOf = batch;
    this.countsEntry = i;
    this.counted = counted;
    for (const group of groups) {
      if (group.protocol !== protocol) continue;
      const last = group.last!;
      last.counted = counted;
      const { metrics, counts } = group;
      for (let m = 0; m < metrics.length; m++) {
        if (!metrics[m].record(last.key, last.values, counts[m], this.maxSeries)) this.overflow.labels({ metric: metrics[m].plan.metric.name }).inc();
      }
    }
    return true;
  }

  /** Counts report `a`; `sameLabelInputs`: it holds the same values of what labels and protocol read as the report counted last. */
  private count(a: AttributeLookup, sameLabelInputs: boolean): void {
    const counted = ++this.counted;
    const protocol = sameLabelInputs ? this.lastProtocol : reportProtocol(a);
    this.lastProtocol = protocol;
    if (protocol === undefined) return;
    for (const group of this.groups) {
      if (group.protocol !== protocol) continue;
      let values: string[] | undefined;
      let key = "";
      for (const live of group.metrics) {
        const value = live.plan.metric.value(a);
        if (value === undefined) continue;
        if (values === undefined) {
          const last = group.last;
          if (last !== undefined && ((sameLabelInputs && last.counted === counted - 1) || sameInputs(a, group.reads, last.inputs))) {
            values = last.values;
            key = last.key;
            last.counted = counted;
          } else {
            const inputs = group.reads.map((name) => a.get(name));
            values = group.labels.map(([, source]) => labelValue(source, a));
            if (last !== undefined && sameValues(values, last.values)) {
              values = last.values;
              key = last.key;
            } else key = values.join("\u0000");
            group.last = { values, key, inputs, counted };
          }
        }
        if (!live.record(key, values, value, this.maxSeries)) this.overflow.labels({ metric: live.plan.metric.name }).inc();
      }
    }
  }
}

/** A group's StandardMetric.counts in `slots` (LabelGroup.countSlots). */
function countsOf(metrics: readonly LiveMetric[], slots: AttributeSlots): Pick<LabelGroup, "countSlots" | "divisors" | "constants" | "counts"> {
  const n = metrics.length;
  const [divisors, constants, counts] = [new Float64Array(n), new Float64Array(n), new Float64Array(n)];
  const countSlots = new Int32Array(n);
  for (let m = 0; m < n; m++) {
    const c = metrics[m].plan.metric.counts;
    if (c === undefined) return { divisors, constants, counts };
    if ("constant" in c) {
      countSlots[m] = -1;
      constants[m] = c.constant;
    } else {
      const slot = slots.slotOf.get(c.name);
      if (slot === undefined) return { divisors, constants, counts };
      countSlots[m] = slot;
      divisors[m] = c.divisor;
    }
  }
  return { countSlots, divisors, constants, counts };
}

/** Whether report `a` holds the same values of `reads` as `inputs` (read from an earlier report); false when unsure. */
function sameInputs(a: AttributeLookup, reads: readonly string[], inputs: ReadonlyArray<AttributeValue | undefined>): boolean {
  for (let i = 0; i < reads.length; i++) if (!sameAttribute(a.get(reads[i]), inputs[i])) return false;
  return true;
}

function sameAttribute(x: AttributeValue | undefined, y: AttributeValue | undefined): boolean {
  if (x === y) return true;
  if (x === undefined || y === undefined) return false;
  if ("stringValue" in x) return "stringValue" in y && x.stringValue === y.stringValue;
  if ("int64Value" in x) return "int64Value" in y && x.int64Value === y.int64Value;
  if ("boolValue" in x) return "boolValue" in y && x.boolValue === y.boolValue;
  if ("stringMapValue" in x) {
    if (!("stringMapValue" in y)) return false;
    const xs = x.stringMapValue.entries;
    const ys = y.stringMapValue.entries;
    let n = 0;
    for (const k in xs) {
      if (xs[k] !== ys[k]) return false;
      n++;
    }
    for (const _ in ys) n--;
    return n === 0;
  }
  // Doubles (NaN), times, bytes: computed anew.
  return false;
}

function sameValues(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
