// TcpClientConfig (spec 1-policy-and-client-config.md; hub-client §7):
// reportInterval resolution (default 10 s, floor 1 s, explicit 0 → 1 s,
// negative → default) and compilation of the tcpClientConfig member.
import { ClientConfig, DEFAULT_CLUSTER } from "../../assembly/config/client_config";
import { compileConfig } from "../../assembly/config/compile";
import {
  DEFAULT_REPORT_INTERVAL_NS, MIN_REPORT_INTERVAL_NS, resolveReportIntervalNanos, TcpClientConfig,
} from "../../assembly/config/tcp_client_config";
import { AttributeBag } from "../../assembly/attributes/bag";
import { QuotaCharge, quotaCharges } from "../../assembly/quota";

function q(s: string): string {
  return s.replaceAll("'", "\"");
}

function tcpOf(text: string): TcpClientConfig {
  const r = compileConfig(q(text));
  expect(r.error).toBe("", text);
  const c: ClientConfig = r.config!;
  expect(c.tcp).not.toBeNull(text);
  return c.tcp!;
}

function intervalOf(member: string): i64 {
  return tcpOf("{'tcpClientConfig':{" + member + "}}").reportIntervalNanos;
}

describe("resolveReportIntervalNanos", () => {
  it("uses 10 s when unset or negative", () => {
    expect(DEFAULT_REPORT_INTERVAL_NS).toBe(10_000_000_000);
    expect(resolveReportIntervalNanos(false, 0)).toBe(DEFAULT_REPORT_INTERVAL_NS);
    expect(resolveReportIntervalNanos(true, -1)).toBe(DEFAULT_REPORT_INTERVAL_NS);
  });

  it("raises values under 1 s, an explicit 0 included, to 1 s", () => {
    expect(MIN_REPORT_INTERVAL_NS).toBe(1_000_000_000);
    expect(resolveReportIntervalNanos(true, 0)).toBe(MIN_REPORT_INTERVAL_NS);
    expect(resolveReportIntervalNanos(true, 1)).toBe(MIN_REPORT_INTERVAL_NS);
    expect(resolveReportIntervalNanos(true, 999_999_999)).toBe(MIN_REPORT_INTERVAL_NS);
  });

  it("keeps 1 s and longer values as configured", () => {
    expect(resolveReportIntervalNanos(true, 1_000_000_000)).toBe(1_000_000_000);
    expect(resolveReportIntervalNanos(true, 1_500_000_000)).toBe(1_500_000_000);
    expect(resolveReportIntervalNanos(true, 3_600_000_000_000)).toBe(3_600_000_000_000);
  });

  it("applies to the configuration's reportInterval in every duration form", () => {
    expect(intervalOf("")).toBe(10_000_000_000);
    expect(intervalOf("'reportInterval':null")).toBe(10_000_000_000);
    expect(intervalOf("'reportInterval':'0s'")).toBe(1_000_000_000);
    expect(intervalOf("'reportInterval':'0.250s'")).toBe(1_000_000_000);
    expect(intervalOf("'reportInterval':'-5s'")).toBe(10_000_000_000);
    expect(intervalOf("'reportInterval':'30s'")).toBe(30_000_000_000);
    expect(intervalOf("'reportInterval':{'seconds':2,'nanos':500000000}")).toBe(2_500_000_000);
  });
});

describe("compileConfig: tcpClientConfig", () => {
  it("is absent unless configured", () => {
    const r = compileConfig(q("{'httpClientConfig':{}}"));
    expect(r.config!.tcp).toBeNull();
  });

  it("may stand alone, without httpClientConfig", () => {
    const t = tcpOf("{'tcpClientConfig':{}}");
    expect(t.transport.checkCluster).toBe(DEFAULT_CLUSTER);
    expect(t.disableCheckCalls).toBe(false);
    expect(t.disableReportCalls).toBe(false);
    expect(t.connectionQuotaRules.length).toBe(0);
  });

  it("reads its own transport, attributes, flags and connection quota", () => {
    const t = tcpOf(
      "{'httpClientConfig':{'transport':{'checkCluster':'http_hub'}}," +
        "'tcpClientConfig':{'transport':{'checkCluster':'tcp_hub','disableCheckCache':true,'networkFailPolicy':{'policy':'FAIL_CLOSE','maxRetry':2}}," +
        "'hubAttributes':{'attributes':{'destination.uid':{'stringValue':'kubernetes://db-0.shop'}}}," +
        "'disableCheckCalls':true,'disableReportCalls':true," +
        "'connectionQuotaSpec':{'rules':[{'match':[{'clause':{'source.namespace':{'exact':'web'}}}],'quotas':[{'quota':'connections','charge':2}]}]}}}",
    );
    expect(t.transport.checkCluster).toBe("tcp_hub");
    expect(t.transport.disableCheckCache).toBe(true);
    expect(t.transport.networkFailPolicy.failClose).toBe(true);
    expect(t.transport.networkFailPolicy.maxRetry).toBe(2);
    expect(t.hubAttributes.getString("destination.uid")).toBe("kubernetes://db-0.shop");
    expect(t.disableCheckCalls).toBe(true);
    expect(t.disableReportCalls).toBe(true);
    const bag = new AttributeBag();
    bag.setString("source.namespace", "web");
    const charges = new Array<QuotaCharge>();
    quotaCharges(t.connectionQuotaRules, bag, charges);
    expect(charges.length).toBe(1);
    expect(charges[0].quota).toBe("connections");
    expect(charges[0].charge).toBe(2);
  });

  it("names the field of every problem", () => {
    const rows: string[][] = [
      ["{'tcpClientConfig':1}", "tcpClientConfig: expected an object"],
      ["{'tcpClientConfig':{'reportInterval':'soon'}}", "tcpClientConfig.reportInterval: expected a duration"],
      ["{'tcpClientConfig':{'interval':'1s'}}", "tcpClientConfig.interval: unknown field"],
      ["{'tcpClientConfig':{'disableCheckCalls':'yes'}}", "tcpClientConfig.disableCheckCalls: expected true or false"],
      ["{'tcpClientConfig':{'transport':{'checkCluster':''}}}", "tcpClientConfig.transport.checkCluster: expected a non-empty cluster name"],
      ["{'tcpClientConfig':{'connectionQuotaSpec':{'rules':[{'quotas':[{'quota':'c','charge':0}]}]}}}", "tcpClientConfig.connectionQuotaSpec.rules[0].quotas[0].charge: expected an integer from 1"],
      ["{'tcpClientConfig':{'connectionQuotaSpec':{'rules':[{'match':[{'clause':{'a':{'regex':'('}}}]}]}}}", "tcpClientConfig.connectionQuotaSpec.rules[0].match[0].clause[a].regex:"],
    ];
    for (let i = 0; i < rows.length; i++) {
      const r = compileConfig(q(rows[i][0]));
      expect(r.config).toBeNull(rows[i][0]);
      expect(r.error.startsWith(rows[i][1])).toBe(true, "got: " + r.error);
    }
  });
});
