import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Action, PeerType } from "../../host/wasm/abi_types.ts";
import { type EmulatedCall, FilterEmulator } from "../../host/wasm/emulator.ts";
import { type AttributeMap, type AttributeValue, GlobalDictionary, decodeAttributes } from "../../host/wire/compressed.ts";
import { GLOBAL_WORDS } from "../../host/wire/global_words.ts";
import { BUILDS, PROPERTIES, REQUEST, deny, pluginConfig } from "./emulator_support.ts";

// TCP mode (hub-client.md §7): attributes at accept, the check with the
// connection quota on the first client data with reading paused, open /
// continue / close reports with byte deltas, reportInterval and its floor.

const DICTIONARY = new GlobalDictionary(GLOBAL_WORDS);
const UNAVAILABLE = { fail: { code: 14, message: "upstream connect error or disconnect/reset before headers" } };

const CONNECTION = {
  "source.address": "10.0.0.5:41000",
  "destination.address": "10.0.0.9:5432",
  "upstream.address": "10.1.0.3:5432",
  "connection.mtls": true,
  "connection.uri_san_peer_certificate": "spiffe://cluster.local/ns/web/sa/frontend",
  "connection.uri_san_local_certificate": "spiffe://cluster.local/ns/db/sa/postgres",
  "connection.requested_server_name": "db.shop.svc.cluster.local",
};

function tcpConfig(
  options: {
    failPolicy?: object;
    transport?: object;
    reportInterval?: string | null;
    quota?: boolean;
    disableCheckCalls?: boolean;
    disableReportCalls?: boolean;
  } = {},
): { tcpClientConfig: Record<string, unknown> } {
  return {
    tcpClientConfig: {
      transport: { networkFailPolicy: options.failPolicy, disableReportBatch: true, ...(options.transport ?? {}) },
      hubAttributes: { attributes: { "destination.uid": { stringValue: "kubernetes://postgres-0.db" }, "context.protocol": { stringValue: "static" } } },
      disableCheckCalls: options.disableCheckCalls ?? false,
      disableReportCalls: options.disableReportCalls ?? false,
      connectionQuotaSpec: options.quota === false ? undefined : { rules: [{ quotas: [{ quota: "connections", charge: 1 }] }] },
      reportInterval: options.reportInterval === null ? undefined : (options.reportInterval ?? "2s"),
    },
  };
}

/** A CheckResponse allowing, cacheable by source.principal, granting the connection quota. */
function allowByPrincipal(): Record<string, unknown> {
  return {
    precondition: {
      status: { code: 0 },
      validDuration: { seconds: 60 },
      validUseCount: 100,
      referencedAttributes: { attributeMatches: [{ name: GLOBAL_WORDS.indexOf("source.principal"), condition: 2 }] },
    },
    quotas: { connections: { grantedAmount: 1 } },
  };
}

function checkAttributes(call: EmulatedCall): AttributeMap {
  return decodeAttributes(call.decoded.attributes, { dictionary: DICTIONARY });
}

/** Every report entry sent so far, decoded, in order. */
function reports(emu: FilterEmulator): AttributeMap[] {
  const out: AttributeMap[] = [];
  for (const call of emu.calls.filter((c) => c.method === "Report")) {
    for (const entry of call.decoded.attributes ?? [])
      out.push(decodeAttributes(entry, { dictionary: DICTIONARY, defaultWords: call.decoded.defaultWords ?? [] }));
  }
  return out;
}

function value(map: AttributeMap, name: string): unknown {
  const v: AttributeValue | undefined = map.get(name);
  if (v === undefined) return undefined;
  if ("stringValue" in v) return v.stringValue;
  if ("int64Value" in v) return Number(v.int64Value);
  if ("boolValue" in v) return v.boolValue;
  if ("bytesValue" in v) return [...v.bytesValue];
  if ("durationValue" in v) return Number(v.durationValue.seconds) * 1000 + v.durationValue.nanos / 1e6;
  if ("timestampValue" in v) return v.timestampValue;
  return v;
}

function traffic(map: AttributeMap): [string, number, number, number, number] {
  return [
    value(map, "connection.event") as string,
    value(map, "connection.received.bytes") as number,
    value(map, "connection.sent.bytes") as number,
    value(map, "connection.received.bytes_total") as number,
    value(map, "connection.sent.bytes_total") as number,
  ];
}

const text = (b: Uint8Array) => new TextDecoder().decode(b);

/** Check calls that held a connection (not quota prefetches). */
function blockingChecks(emu: FilterEmulator): EmulatedCall[] {
  return emu.calls.filter((c) => c.method === "Check" && !c.decoded.quotas?.connections?.bestEffort);
}

for (const [build, wasm] of BUILDS) {
  describe(`filter in a proxy-wasm host (${build}): TCP check`, () => {
    it("builds the attributes at accept and checks on the first client data, with reading paused", () => {
      const emu = new FilterEmulator(tcpConfig(), wasm);
      assert.equal(emu.configured, true);
      const id = emu.connect(CONNECTION);
      assert.equal(emu.calls.length, 0, "no check before the client sends anything");

      const first = emu.downstream(id, "hello ");
      assert.equal(first.action, Action.Pause);
      assert.equal(first.forwarded.length, 0);
      assert.equal(emu.calls.length, 1);
      const call = emu.calls[0];
      assert.equal(call.cluster, "hub_server");
      assert.equal(call.method, "Check");
      assert.deepEqual(call.decoded.quotas, { connections: { amount: 1 } });

      const a = checkAttributes(call);
      assert.deepEqual(value(a, "source.ip"), [10, 0, 0, 5]);
      assert.deepEqual(value(a, "origin.ip"), [10, 0, 0, 5]);
      assert.equal(value(a, "source.port"), 41000);
      assert.equal(value(a, "source.principal"), "cluster.local/ns/web/sa/frontend");
      assert.equal(value(a, "source.user"), "cluster.local/ns/web/sa/frontend");
      assert.equal(value(a, "source.namespace"), "web");
      assert.equal(value(a, "destination.principal"), "cluster.local/ns/db/sa/postgres");
      assert.deepEqual(value(a, "destination.ip"), [10, 0, 0, 9]);
      assert.equal(value(a, "destination.port"), 5432);
      assert.equal(value(a, "connection.mtls"), true);
      assert.equal(value(a, "connection.requested_server_name"), "db.shop.svc.cluster.local");
      assert.equal(value(a, "destination.uid"), "kubernetes://postgres-0.db", "static hub attributes");
      assert.equal(value(a, "context.protocol"), "tcp", "derived attributes win over static ones");
      assert.match(value(a, "connection.id") as string, new RegExp(`^tcp-${emu.rootId}-[0-9a-f]+-${id}$`));
      assert.deepEqual(value(a, "context.time"), { seconds: emu.nowNanos / 1_000_000_000n, nanos: 0 });

      // More data while the check is out: still held, no second check.
      const second = emu.downstream(id, "world");
      assert.equal(second.action, Action.Pause);
      assert.equal(second.forwarded.length, 0);
      assert.equal(emu.calls.length, 1);

      emu.answer(call, { respond: allowByPrincipal() });
      const signals = emu.connectionSignals(id);
      assert.equal(signals.continued, true, "proxy_continue_stream(downstream)");
      assert.equal(signals.closeDownstream, false);
      assert.equal(text(signals.forwarded), "hello world", "the held bytes are released, once");

      const later = emu.downstream(id, "!");
      assert.equal(later.action, Action.Continue);
      assert.equal(text(later.forwarded), "!");
      assert.equal(emu.calls.filter((c) => c.method === "Check").length, 1);
    });

    it("a denied connection is closed without forwarding, and its close report carries the check error", () => {
      const emu = new FilterEmulator(tcpConfig(), wasm);
      emu.script.push({ respond: deny(7, "caller not allowed") });
      const id = emu.connect(CONNECTION);
      const r = emu.downstream(id, "secret");
      assert.equal(r.action, Action.Pause);
      assert.equal(r.closeDownstream, true, "proxy_close_stream(downstream)");
      assert.equal(r.continued, false);
      assert.equal(r.forwarded.length, 0);
      assert.equal(emu.downstream(id, "more").forwarded.length, 0, "nothing flows after the close");

      const sent = reports(emu);
      assert.equal(sent.length, 1, "no open report, one close report");
      assert.deepEqual(traffic(sent[0]), ["close", 6, 0, 6, 0]);
      assert.equal(value(sent[0], "check.error_code"), 7);
      assert.equal(value(sent[0], "check.error_message"), "PERMISSION_DENIED:caller not allowed");
      emu.closeConnection(id, PeerType.Local);
      assert.equal(reports(emu).length, 1, "the close is reported once");
    });

    it("an exhausted connection quota closes the connection", () => {
      const emu = new FilterEmulator(tcpConfig(), wasm);
      emu.script.push({ respond: { ...allowByPrincipal(), quotas: { connections: { grantedAmount: 0 } } } });
      const id = emu.connect(CONNECTION);
      const r = emu.downstream(id, "x");
      assert.equal(r.closeDownstream, true);
      assert.equal(value(reports(emu)[0], "check.error_message"), "RESOURCE_EXHAUSTED:Quota is exhausted for: connections");
    });

    it("without a connectionQuotaSpec the check carries no quota", () => {
      const emu = new FilterEmulator(tcpConfig({ quota: false }), wasm);
      emu.downstream(emu.connect(CONNECTION), "x");
      assert.equal(emu.calls[0].decoded.quotas, undefined);
    });

    it("FAIL_OPEN lets the connection through when the hub is unreachable", () => {
      const emu = new FilterEmulator(tcpConfig({ failPolicy: { policy: "FAIL_OPEN", maxRetry: 1 } }), wasm);
      emu.script.push(UNAVAILABLE, UNAVAILABLE);
      const id = emu.connect(CONNECTION);
      const held = emu.downstream(id, "abc");
      assert.equal(held.continued, false, "held while the module's retry waits");
      emu.advance(80);
      const checks = emu.calls.filter((c) => c.method === "Check");
      assert.equal(checks.length, 2, "one attempt and one retry, by the module");
      assert.equal(checks[1].atNanos - checks[0].atNanos, 80_000_000n, "the first retry waits baseRetryWait");
      const r = emu.connectionSignals(id);
      assert.equal(r.continued, true);
      assert.equal(r.closeDownstream, false);
      assert.equal(text(r.forwarded), "abc");
      assert.deepEqual(traffic(reports(emu)[0]), ["open", 3, 0, 3, 0]);
      assert.ok(emu.logs.some((l) => l.level === "warn" && l.message.includes("FAIL_OPEN")));
    });

    it("FAIL_CLOSE closes the connection when the hub is unreachable", () => {
      const emu = new FilterEmulator(tcpConfig({ failPolicy: { policy: "FAIL_CLOSE", maxRetry: 1 } }), wasm);
      emu.script.push(UNAVAILABLE, UNAVAILABLE);
      const id = emu.connect(CONNECTION);
      assert.equal(emu.downstream(id, "abc").closeDownstream, false, "not before the retry failed too");
      emu.advance(80);
      assert.equal(emu.calls.filter((c) => c.method === "Check").length, 2);
      const r = emu.connectionSignals(id);
      assert.equal(r.closeDownstream, true);
      assert.equal(r.forwarded.length, 0);
      const close = reports(emu)[0];
      assert.equal(value(close, "connection.event"), "close");
      assert.equal(value(close, "check.error_code"), 14);
      assert.match(value(close, "check.error_message") as string, /^UNAVAILABLE:upstream connect error/);
    });

    it("serves a second connection from the check cache, with no hub call", () => {
      const emu = new FilterEmulator(tcpConfig({ transport: { statsUpdateInterval: "1s" } }), wasm);
      emu.script.push({ respond: allowByPrincipal() });
      emu.downstream(emu.connect(CONNECTION), "a");
      const second = emu.connect({ ...CONNECTION, "source.address": "10.0.0.6:50000" });
      const r = emu.downstream(second, "b");
      assert.equal(r.action, Action.Continue, "answered at once");
      assert.equal(text(r.forwarded), "b");
      assert.equal(blockingChecks(emu).length, 1);
      // The connection quota is then decided by the quota cache, refilled by a best-effort prefetch.
      const prefetch = emu.calls.filter((c) => c.method === "Check" && c.decoded.quotas?.connections?.bestEffort);
      assert.equal(prefetch.length, 1);

      const other = emu.connect({ ...CONNECTION, "connection.uri_san_peer_certificate": "spiffe://cluster.local/ns/web/sa/admin" });
      assert.equal(emu.downstream(other, "c").action, Action.Pause, "another principal is another cache key");
      assert.equal(blockingChecks(emu).length, 2);

      emu.advance(1000);
      assert.equal(emu.tcpCounter("total_check_calls"), 3);
      assert.equal(emu.tcpCounter("total_check_cache_hits"), 1);
      assert.equal(emu.tcpCounter("total_check_cache_misses"), 2);
      assert.equal(emu.tcpCounter("total_remote_check_calls"), 2);
      assert.equal(emu.tcpCounter("total_quota_calls"), 3);
      assert.equal(emu.tcpCounter("total_quota_cache_hits"), 1);
      assert.equal(emu.tcpCounter("total_remote_quota_prefetch_calls"), 1);
      assert.equal(emu.tcpCounter("total_remote_calls"), 3, "two checks and a prefetch");
      assert.equal(emu.counter("total_check_calls"), 0, "the HTTP client's counters are apart");
    });

    it("skips the check when disableCheckCalls is set, and still reports", () => {
      const emu = new FilterEmulator(tcpConfig({ disableCheckCalls: true }), wasm);
      const id = emu.connect(CONNECTION);
      const r = emu.downstream(id, "abcd");
      assert.equal(r.action, Action.Continue);
      assert.equal(text(r.forwarded), "abcd");
      assert.equal(emu.calls.filter((c) => c.method === "Check").length, 0);
      assert.deepEqual(traffic(reports(emu)[0]), ["open", 4, 0, 4, 0]);
    });

    it("a connection closed while its check is out cancels the call and reports the close without a check error", () => {
      const emu = new FilterEmulator(tcpConfig({ transport: { statsUpdateInterval: "1s" } }), wasm);
      const id = emu.connect(CONNECTION);
      emu.downstream(id, "xy");
      emu.closeConnection(id, PeerType.Remote);
      assert.equal(emu.calls[0].cancelled, true);
      const close = reports(emu)[0];
      assert.deepEqual(traffic(close), ["close", 2, 0, 2, 0]);
      assert.equal(close.has("check.error_code"), false);
      emu.script.push({ respond: allowByPrincipal() });
      emu.drain();
      emu.advance(1000);
      assert.equal(emu.tcpCounter("total_remote_call_cancellations"), 1);
    });

    it("a connection closed before any data is reported at close, unchecked", () => {
      const emu = new FilterEmulator(tcpConfig(), wasm);
      emu.closeConnection(emu.connect(CONNECTION));
      assert.equal(emu.calls.filter((c) => c.method === "Check").length, 0);
      assert.deepEqual(traffic(reports(emu)[0]), ["close", 0, 0, 0, 0]);
    });

    it("a plugin without tcpClientConfig lets connections through untouched", () => {
      const emu = new FilterEmulator(pluginConfig(), wasm);
      const id = emu.connect(CONNECTION);
      const r = emu.downstream(id, "abc");
      assert.equal(r.action, Action.Continue);
      assert.equal(text(r.forwarded), "abc");
      emu.closeConnection(id);
      emu.advance(5000);
      assert.equal(emu.calls.length, 0);
    });

    it("serves HTTP streams and TCP connections side by side, each with its own transport", () => {
      const config = { ...pluginConfig(), ...tcpConfig({ transport: { checkCluster: "hub_tcp", reportCluster: "hub_tcp_reports" } }) };
      const emu = new FilterEmulator(config, wasm);
      assert.equal(emu.configured, true);
      const http = emu.request(REQUEST, PROPERTIES);
      assert.equal(http.action, Action.Pause);
      assert.equal(emu.calls[0].cluster, "hub_server");
      const id = emu.connect(CONNECTION);
      emu.downstream(id, "x");
      assert.equal(emu.calls[1].cluster, "hub_tcp");
      emu.answer(emu.calls[1], { respond: allowByPrincipal() });
      assert.equal(emu.calls.find((c) => c.method === "Report")?.cluster, "hub_tcp_reports");
    });
  });

  describe(`filter in a proxy-wasm host (${build}): TCP reports`, () => {
    it("open, continue every reportInterval and close, with byte deltas since the last continue report", () => {
      const emu = new FilterEmulator(tcpConfig({ reportInterval: "2s" }), wasm);
      emu.script.push({ respond: allowByPrincipal() });
      const id = emu.connect(CONNECTION);
      emu.downstream(id, 100);
      const up = emu.upstream(id, 40);
      assert.equal(up.action, Action.Continue);
      assert.equal(up.forwarded.length, 40);
      assert.deepEqual(reports(emu).map(traffic), [["open", 100, 0, 100, 0]]);

      emu.advance(1900);
      assert.equal(reports(emu).length, 1, "not due yet");
      emu.advance(100);
      // The open report did not move the baseline.
      assert.deepEqual(reports(emu).map(traffic)[1], ["continue", 100, 40, 100, 40]);

      emu.downstream(id, 10);
      emu.upstream(id, 5);
      emu.advance(2000);
      assert.deepEqual(reports(emu).map(traffic)[2], ["continue", 10, 5, 110, 45]);

      emu.advance(2000);
      assert.deepEqual(reports(emu).map(traffic)[3], ["continue", 0, 0, 110, 45], "an idle period reports zero deltas");

      emu.downstream(id, 1);
      emu.advance(500);
      emu.closeConnection(id, PeerType.Remote);
      const all = reports(emu);
      assert.equal(all.length, 5);
      const close = all[4];
      assert.deepEqual(traffic(close), ["close", 1, 0, 111, 45]);
      assert.equal(value(close, "connection.duration"), 6500);
      assert.equal(close.has("check.error_code"), false);
      assert.equal(all[0].has("connection.duration"), false, "only the close report has a duration");
      for (const r of all) {
        assert.equal(value(r, "context.protocol"), "tcp");
        assert.equal(value(r, "source.principal"), "cluster.local/ns/web/sa/frontend");
      }
      const time = (r: AttributeMap) => (value(r, "context.time") as { seconds: bigint }).seconds;
      assert.equal(time(all[1]) - time(all[0]), 2n, "each report carries its own context.time");

      emu.advance(4000);
      assert.equal(reports(emu).length, 5, "no reports after the close");
    });

    it("takes destination.ip/port from the upstream host when the local address is unknown", () => {
      const emu = new FilterEmulator(tcpConfig({ disableCheckCalls: true }), wasm);
      const { "destination.address": _, ...props } = CONNECTION;
      emu.downstream(emu.connect(props), "x");
      const open = reports(emu)[0];
      assert.deepEqual(value(open, "destination.ip"), [10, 1, 0, 3]);
      assert.equal(value(open, "destination.port"), 5432);
    });

    it("batches connection reports by the TCP transport's settings", () => {
      const emu = new FilterEmulator(tcpConfig({ disableCheckCalls: true, transport: { disableReportBatch: false, reportBatchMaxEntries: 3 } }), wasm);
      const a = emu.connect(CONNECTION);
      const b = emu.connect(CONNECTION);
      emu.downstream(a, "x");
      emu.downstream(b, "y");
      assert.equal(emu.calls.length, 0, "two reports wait in the batch");
      emu.closeConnection(a);
      const batch = emu.calls.filter((c) => c.method === "Report");
      assert.equal(batch.length, 1);
      assert.equal(batch[0].decoded.attributes.length, 3);
    });

    it("sends no reports when disableReportCalls is set", () => {
      const emu = new FilterEmulator(tcpConfig({ disableReportCalls: true }), wasm);
      emu.script.push({ respond: allowByPrincipal() });
      const id = emu.connect(CONNECTION);
      emu.downstream(id, "x");
      emu.advance(5000);
      emu.closeConnection(id);
      assert.equal(emu.calls.filter((c) => c.method === "Report").length, 0);
    });

    for (const [label, interval, expectMs] of [
      ["a reportInterval under 1 s is raised to 1 s", "0.2s", 1000],
      ["an explicit 0 reportInterval becomes 1 s", "0s", 1000],
      ["without reportInterval the period is 10 s", null, 10000],
    ] as const) {
      it(label, () => {
        const emu = new FilterEmulator(tcpConfig({ disableCheckCalls: true, reportInterval: interval }), wasm);
        assert.ok(emu.tickMs > 0 && emu.tickMs <= 1000, `tick ${emu.tickMs} ms`);
        const id = emu.connect(CONNECTION);
        emu.downstream(id, "x");
        emu.advance(expectMs - 100);
        assert.equal(reports(emu).length, 1, "only the open report");
        emu.advance(100);
        assert.deepEqual(
          reports(emu).map((r) => value(r, "connection.event")),
          ["open", "continue"],
        );
      });
    }

    it("the tick runs at the shortest period HTTP and TCP need", () => {
      const emu = new FilterEmulator(
        {
          ...pluginConfig({ transport: { reportBatchMaxTime: "5s", statsUpdateInterval: "5s" } }),
          ...tcpConfig({ reportInterval: "3s", transport: { reportBatchMaxTime: "4s", statsUpdateInterval: "4s" } }),
        },
        wasm,
      );
      assert.equal(emu.tickMs, 3000);
      const http = new FilterEmulator(pluginConfig({ transport: { reportBatchMaxTime: "5s", statsUpdateInterval: "5s" } }), wasm);
      assert.equal(http.tickMs, 5000, "HTTP alone keeps its period");
    });
  });

  describe(`filter in a proxy-wasm host (${build}): TCP configuration`, () => {
    for (const [config, error] of [
      [{ tcpClientConfig: { reportInterval: "soon" } }, "tcpClientConfig.reportInterval: expected a duration"],
      [{ tcpClientConfig: { reportIntervall: "1s" } }, "tcpClientConfig.reportIntervall: unknown field"],
      [
        { tcpClientConfig: { connectionQuotaSpec: { rules: [{ quotas: [{ charge: 1 }] }] } } },
        "tcpClientConfig.connectionQuotaSpec.rules[0].quotas[0].quota: expected a quota name",
      ],
      [
        { tcpClientConfig: { transport: { networkFailPolicy: { policy: "SOMETIMES" } } } },
        "tcpClientConfig.transport.networkFailPolicy.policy: expected FAIL_OPEN or FAIL_CLOSE",
      ],
      [{ tcpClientConfig: [] }, "tcpClientConfig: expected an object"],
    ] as const) {
      it(`refuses ${JSON.stringify(config)} naming the field, and keeps the previous configuration`, () => {
        const emu = new FilterEmulator(tcpConfig({ disableCheckCalls: true }), wasm);
        assert.equal(emu.configure(config), false);
        assert.ok(
          emu.logs.some((l) => l.level === "error" && l.message.includes(error)),
          emu.logs.map((l) => l.message).join("\n"),
        );
        emu.downstream(emu.connect(CONNECTION), "x");
        assert.equal(reports(emu).length, 1, "the old TCP configuration still serves");
      });
    }

    it("a reconfiguration keeps open connections reporting", () => {
      const emu = new FilterEmulator(tcpConfig({ disableCheckCalls: true, reportInterval: "2s" }), wasm);
      const id = emu.connect(CONNECTION);
      emu.downstream(id, "x");
      assert.equal(emu.configure(tcpConfig({ disableCheckCalls: true, reportInterval: "2s", transport: { reportCluster: "hub_next" } })), true);
      emu.advance(2000);
      const continued = emu.calls.filter((c) => c.method === "Report");
      assert.equal(continued.at(-1)?.cluster, "hub_next");
      assert.deepEqual(
        reports(emu).map((r) => value(r, "connection.event")),
        ["open", "continue"],
      );
    });
  });
}
