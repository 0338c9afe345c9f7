import type { Field } from "../decode.ts";
import { attempt } from "../problems.ts";
import { type Attributes, decodeAttributes } from "./attributes.ts";
import { type PatternChecks, type QuotaSpec, type TransportConfig, decodeQuotaSpec, decodeTransportConfig } from "./hub_client.ts";

/** Spec 1, TcpClientConfig.reportInterval: default 10 s; a value under 1 s is reset to 1 s. */
export const DEFAULT_TCP_REPORT_INTERVAL_MS = 10_000;
export const MIN_TCP_REPORT_INTERVAL_MS = 1_000;

export interface TcpClientConfig {
  readonly transport?: TransportConfig;
  readonly hubAttributes?: Attributes;
  readonly disableCheckCalls: boolean;
  readonly disableReportCalls: boolean;
  readonly connectionQuotaSpec?: QuotaSpec;
  /** After the spec's floor (≥ 1 s) and default (10 s). */
  readonly reportIntervalMs: number;
}

/** The hub client configuration of TCP listeners (spec 1, TcpClientConfig). */
export function decodeTcpClientConfig(f: Field, checks: PatternChecks): TcpClientConfig {
  f.object();
  f.allowOnly(["transport", "hubAttributes", "mixerAttributes", "disableCheckCalls", "disableReportCalls", "connectionQuotaSpec", "reportInterval"]);
  const hub = f.get("mixerAttributes").present && !f.get("hubAttributes").present ? f.get("mixerAttributes") : f.get("hubAttributes");
  const ri = f.get("reportInterval");
  let reportIntervalMs = attempt(ri, (r) => r.durationMs(DEFAULT_TCP_REPORT_INTERVAL_MS));
  if (reportIntervalMs !== undefined && reportIntervalMs < MIN_TCP_REPORT_INTERVAL_MS) {
    ri.warn(`below the 1s minimum: 1s is used`);
    reportIntervalMs = MIN_TCP_REPORT_INTERVAL_MS;
  }
  return Object.freeze({
    transport: attempt(f.get("transport"), decodeTransportConfig),
    hubAttributes: attempt(hub, decodeAttributes),
    disableCheckCalls: attempt(f.get("disableCheckCalls"), (b) => b.bool()),
    disableReportCalls: attempt(f.get("disableReportCalls"), (b) => b.bool()),
    connectionQuotaSpec: f.get("connectionQuotaSpec").present ? attempt(f.get("connectionQuotaSpec"), (q) => decodeQuotaSpec(q, checks)) : undefined,
    reportIntervalMs,
  });
}
