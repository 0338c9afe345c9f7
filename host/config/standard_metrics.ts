// The mesh's standard request and TCP metrics, as upstream's `prometheus`
// adapter made them from reports (mixer's standard metric instances,
// research/redisquota.md §7), named `mesh_` for `istio_`, with the duration in
// milliseconds as telemetry v2 has it. Every metric, its value and its labels
// with upstream's defaults for missing attributes; a HubMetrics document
// changes them (metrics_config.ts).
import type { AttributeLookup } from "../wire/compressed.ts";
import { durationMs, evaluateLabel, lookupTerm, parseLabelExpression, type LabelExpression } from "./label_expression.ts";

export const METRIC_IDS = [
  "REQUEST_COUNT",
  "REQUEST_DURATION",
  "REQUEST_SIZE",
  "RESPONSE_SIZE",
  "TCP_OPENED_CONNECTIONS",
  "TCP_CLOSED_CONNECTIONS",
  "TCP_SENT_BYTES",
  "TCP_RECEIVED_BYTES",
] as const;
export type MetricId = (typeof METRIC_IDS)[number];

/** Where a label's value comes from: an expression (a HubMetrics document may write one), or one of upstream's conditionals. */
export type LabelSource =
  | { readonly kind: "expression"; readonly expression: LabelExpression }
  | {
      readonly kind: "builtin";
      readonly text: string;
      readonly compute: (a: AttributeLookup) => string;
      /** Every attribute `compute` reads (the hub decodes only what its metrics read when nothing else needs a report). */
      readonly reads: readonly string[];
    };

export interface StandardMetric {
  readonly id: MetricId;
  readonly name: string;
  readonly help: string;
  readonly type: "counter" | "histogram";
  readonly protocol: "http" | "tcp";
  readonly buckets?: readonly number[];
  /** What one report adds (counter) or observes (histogram); undefined: this report does not count for the metric. */
  readonly value: (a: AttributeLookup) => number | undefined;
  /** Every attribute `value` reads. */
  readonly reads: readonly string[];
  /**
   * What `value` is made of, when it is a constant or one attribute's count
   * (`AttributeLookup.count`) divided by `divisor`: a reader that has the
   * count without a lookup by name makes the same value from it.
   */
  readonly counts?: { readonly constant: number } | { readonly name: string; readonly divisor: number };
}

const expr = (text: string): LabelSource => ({ kind: "expression", expression: parseLabelExpression(text) });
const str = (a: AttributeLookup, name: string) => {
  const v = a.get(name);
  return v !== undefined && "stringValue" in v ? v.stringValue : undefined;
};
const outbound = (a: AttributeLookup) => (str(a, "context.reporter.kind") ?? "inbound") === "outbound";

function number(a: AttributeLookup, name: string): number {
  const counted = a.count?.(name);
  if (counted !== undefined) return counted;
  const v = a.get(name);
  if (v === undefined) return 0;
  if ("int64Value" in v) return Number(v.int64Value);
  if ("doubleValue" in v) return v.doubleValue;
  if ("durationValue" in v) return durationMs(v.durationValue);
  return 0;
}

/** A metric's value, its reads and `counts`, for one attribute's count divided by `divisor`. */
function counted(name: string, divisor = 1): Pick<StandardMetric, "value" | "reads" | "counts"> {
  return { value: (a) => number(a, name) / divisor, reads: [name], counts: { name, divisor } };
}

/** Labels of every metric, in upstream's order. */
const COMMON_BEFORE: ReadonlyArray<readonly [string, LabelSource]> = [
  [
    "reporter",
    {
      kind: "builtin",
      text: 'conditional((context.reporter.kind | "inbound") == "outbound", "source", "destination")',
      compute: (a) => (outbound(a) ? "source" : "destination"),
      reads: ["context.reporter.kind"],
    },
  ],
  ["source_workload", expr('source.workload.name | "unknown"')],
  ["source_workload_namespace", expr('source.workload.namespace | "unknown"')],
  ["source_principal", expr('source.principal | "unknown"')],
  ["source_app", expr('source.labels["app"] | "unknown"')],
  ["source_version", expr('source.labels["version"] | "unknown"')],
  ["destination_workload", expr('destination.workload.name | "unknown"')],
  ["destination_workload_namespace", expr('destination.workload.namespace | "unknown"')],
  ["destination_principal", expr('destination.principal | "unknown"')],
  ["destination_app", expr('destination.labels["app"] | "unknown"')],
  ["destination_version", expr('destination.labels["version"] | "unknown"')],
  [
    "destination_service",
    {
      kind: "builtin",
      text: 'destination.service.host | conditional((destination.service.name | "unknown") == "unknown", "unknown", request.host)',
      compute: (a) =>
        str(a, "destination.service.host") ??
        ((str(a, "destination.service.name") ?? "unknown") === "unknown" ? "unknown" : (str(a, "request.host") ?? "unknown")),
      reads: ["destination.service.host", "destination.service.name", "request.host"],
    },
  ],
  ["destination_service_name", expr('destination.service.name | "unknown"')],
  ["destination_service_namespace", expr('destination.service.namespace | "unknown"')],
];
const HTTP_ONLY: ReadonlyArray<readonly [string, LabelSource]> = [
  ["request_protocol", expr('api.protocol | context.protocol | "unknown"')],
  ["response_code", expr("response.code | 200")],
];
const RESPONSE_FLAGS: readonly [string, LabelSource] = ["response_flags", expr('context.proxy_error_code | "-"')];
const PERMISSIVE: ReadonlyArray<readonly [string, LabelSource]> = [
  ["permissive_response_code", expr('rbac.permissive.response_code | "none"')],
  ["permissive_response_policyid", expr('rbac.permissive.effective_policy_id | "none"')],
];
const SECURITY_POLICY: readonly [string, LabelSource] = [
  "connection_security_policy",
  {
    kind: "builtin",
    text: 'conditional((context.reporter.kind | "inbound") == "outbound", "unknown", conditional(connection.mtls | false, "mutual_tls", "none"))',
    compute: (a) => {
      if (outbound(a)) return "unknown";
      const m = a.get("connection.mtls");
      return m !== undefined && "boolValue" in m && m.boolValue ? "mutual_tls" : "none";
    },
    reads: ["context.reporter.kind", "connection.mtls"],
  },
];

export const HTTP_LABELS: ReadonlyArray<readonly [string, LabelSource]> = [...COMMON_BEFORE, ...HTTP_ONLY, RESPONSE_FLAGS, ...PERMISSIVE, SECURITY_POLICY];
export const TCP_LABELS: ReadonlyArray<readonly [string, LabelSource]> = [...COMMON_BEFORE, RESPONSE_FLAGS, SECURITY_POLICY];

/** Mixer's request duration buckets, in seconds (its prometheus adapter converted durations to seconds). */
const DURATION_SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Telemetry v2's, in milliseconds. */
const DURATION_MS_BUCKETS = [0.5, 1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000, 600000, 1800000, 3600000];

/**
 * The duration metric as telemetry v2 names it (`requestDurationUnit:
 * MILLISECONDS` of a HubMetrics document), for dashboards written for it.
 * promtool flags the name (Prometheus wants base units), hence not the default.
 */
export const REQUEST_DURATION_MILLISECONDS: StandardMetric = {
  id: "REQUEST_DURATION",
  name: "mesh_request_duration_milliseconds",
  help: "Duration of reported requests in milliseconds (response.duration)",
  type: "histogram",
  protocol: "http",
  buckets: DURATION_MS_BUCKETS,
  ...counted("response.duration"),
};
/** Upstream's size buckets: exponential, 8 finite, scale 1, growth 10. */
const BYTES_BUCKETS = [1, 10, 100, 1000, 10000, 100000, 1000000, 10000000];

const event = (a: AttributeLookup, which: string) => (str(a, "connection.event") === which ? 1 : undefined);

export const STANDARD_METRICS: readonly StandardMetric[] = [
  {
    id: "REQUEST_COUNT",
    name: "mesh_requests_total",
    help: "Requests reported to the hub (upstream requests_total)",
    type: "counter",
    protocol: "http",
    value: () => 1,
    reads: [],
    counts: { constant: 1 },
  },
  {
    id: "REQUEST_DURATION",
    name: "mesh_request_duration_seconds",
    help: "Duration of reported requests in seconds (response.duration)",
    type: "histogram",
    protocol: "http",
    buckets: DURATION_SECONDS_BUCKETS,
    ...counted("response.duration", 1000),
  },
  {
    id: "REQUEST_SIZE",
    name: "mesh_request_bytes",
    help: "Size of reported requests in bytes (request.size)",
    type: "histogram",
    protocol: "http",
    buckets: BYTES_BUCKETS,
    ...counted("request.size"),
  },
  {
    id: "RESPONSE_SIZE",
    name: "mesh_response_bytes",
    help: "Size of reported responses in bytes (response.size)",
    type: "histogram",
    protocol: "http",
    buckets: BYTES_BUCKETS,
    ...counted("response.size"),
  },
  {
    id: "TCP_SENT_BYTES",
    name: "mesh_tcp_sent_bytes_total",
    help: "Bytes sent to the client on reported TCP connections (connection.sent.bytes)",
    type: "counter",
    protocol: "tcp",
    ...counted("connection.sent.bytes"),
  },
  {
    id: "TCP_RECEIVED_BYTES",
    name: "mesh_tcp_received_bytes_total",
    help: "Bytes received from the client on reported TCP connections (connection.received.bytes)",
    type: "counter",
    protocol: "tcp",
    ...counted("connection.received.bytes"),
  },
  {
    id: "TCP_OPENED_CONNECTIONS",
    name: "mesh_tcp_connections_opened_total",
    help: "TCP connections opened (connection.event open)",
    type: "counter",
    protocol: "tcp",
    value: (a) => event(a, "open"),
    reads: ["connection.event"],
  },
  {
    id: "TCP_CLOSED_CONNECTIONS",
    name: "mesh_tcp_connections_closed_total",
    help: "TCP connections closed (connection.event close)",
    type: "counter",
    protocol: "tcp",
    value: (a) => event(a, "close"),
    reads: ["connection.event"],
  },
];

/** User agents whose requests are not counted (upstream's promhttp rule: health checkers and scrapers). */
const EXCLUDED_USER_AGENTS = [/^kube-probe/, /^Prometheus/];

/** The attributes reportProtocol reads. */
export const REPORT_PROTOCOL_READS: readonly string[] = ["context.protocol", "request.useragent"];

/** Which kind of metrics a report feeds: upstream's rules match on context.protocol. */
export function reportProtocol(a: AttributeLookup): "http" | "tcp" | undefined {
  const protocol = str(a, "context.protocol");
  if (protocol === "tcp") return "tcp";
  if (protocol !== "http" && protocol !== "grpc") return undefined;
  const agent = lookupTerm(a, { kind: "attribute", name: "request.useragent" }) ?? "-";
  return EXCLUDED_USER_AGENTS.some((r) => r.test(agent)) ? undefined : "http";
}

/** The attributes a label's value is made of. */
export function labelReads(source: LabelSource): string[] {
  return source.kind === "builtin" ? [...source.reads] : source.expression.terms.flatMap((t) => (t.kind === "attribute" ? [t.name] : []));
}

export function labelValue(source: LabelSource, a: AttributeLookup): string {
  return source.kind === "builtin" ? source.compute(a) : evaluateLabel(source.expression, a);
}
