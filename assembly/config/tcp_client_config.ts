import { AttributeBag } from "../attributes/bag";
import { JsonValue } from "../json";
import { QuotaRule } from "../quota";
import { readAttributes } from "./attributes_json";
import { TransportConfig } from "./transport_config";
import { readQuotaSpec } from "./quota_spec_json";
import { ConfigReader } from "./reader";
import { readTransport } from "./transport_json";

// TcpClientConfig (spec 1-policy-and-client-config.md; hub-client.md §7):
// the hub client of TCP connections, camelCase as in the spec:
//   { "transport": TransportConfig, "hubAttributes": Attributes,
//     "disableCheckCalls": bool, "disableReportCalls": bool,
//     "connectionQuotaSpec": QuotaSpec, "reportInterval": Duration }

/** Period of `continue` reports when reportInterval is unset (upstream src/envoy/tcp/mixer/config.h). */
export const DEFAULT_REPORT_INTERVAL_NS: i64 = 10_000_000_000;
/** Shortest report period; smaller values, an explicit 0 included, are raised to it. */
export const MIN_REPORT_INTERVAL_NS: i64 = 1_000_000_000;

const FIELDS: StaticArray<string> = [
  "transport", "hubAttributes", "disableCheckCalls", "disableReportCalls", "connectionQuotaSpec", "reportInterval",
];

/** The compiled TcpClientConfig: read-only once built, shared by every connection. */
export class TcpClientConfig {
  transport: TransportConfig = new TransportConfig();
  /** Static attributes, applied before the connection's own. */
  hubAttributes: AttributeBag = new AttributeBag();
  disableCheckCalls: bool = false;
  disableReportCalls: bool = false;
  /** connectionQuotaSpec's rules, charged on the connection's check. */
  connectionQuotaRules: Array<QuotaRule> = [];
  reportIntervalNanos: i64 = DEFAULT_REPORT_INTERVAL_NS;
}

/**
 * The effective report period (upstream TcpConfig): unset or negative → 10 s;
 * otherwise the configured value, raised to 1 s when smaller.
 *
 *   resolveReportIntervalNanos(true, 250_000_000) == 1_000_000_000
 */
export function resolveReportIntervalNanos(present: bool, configuredNanos: i64): i64 {
  if (!present || configuredNanos < 0) return DEFAULT_REPORT_INTERVAL_NS;
  return configuredNanos < MIN_REPORT_INTERVAL_NS ? MIN_REPORT_INTERVAL_NS : configuredNanos;
}

/** Reads the `tcpClientConfig` object at path `p`; null when absent. Problems go to `r`. */
export function readTcpClientConfig(r: ConfigReader, v: JsonValue | null, p: string): TcpClientConfig | null {
  const obj = r.object(v, p);
  if (obj === null) return null;
  for (let i = 0; i < obj.keys.length; i++) {
    if (!FIELDS.includes(obj.keys[i])) r.fail(p + "." + obj.keys[i], "unknown field (expected " + FIELDS.join(", ") + ")");
  }
  const c = new TcpClientConfig();
  c.transport = readTransport(r, r.object(r.member(obj, "transport"), p + ".transport"), p + ".transport");
  c.hubAttributes = readAttributes(r, r.member(obj, "hubAttributes"), p + ".hubAttributes");
  c.disableCheckCalls = r.bool(r.member(obj, "disableCheckCalls"), p + ".disableCheckCalls");
  c.disableReportCalls = r.bool(r.member(obj, "disableReportCalls"), p + ".disableReportCalls");
  readQuotaSpec(r, r.member(obj, "connectionQuotaSpec"), p + ".connectionQuotaSpec", c.connectionQuotaRules);
  const interval = r.member(obj, "reportInterval");
  c.reportIntervalNanos = resolveReportIntervalNanos(interval !== null, r.durationNanos(interval, p + ".reportInterval", 0));
  return c;
}
