// The filter module on a real proxy-wasm host (proxy-wasm-cpp-host, the ABI
// library Envoy links, on WAMR), release and debug builds. Run by
// `npm run conformance`; the host prints every ABI call and these scenarios
// assert on those calls and on its exit status. The driver carries
// test/pwhost/pwdriver-waits.patch: `--wait-ticks` lets the proxy's timer fire
// while a stream waits and while a root drains, as Envoy's event loop does. The plugin configuration is the
// one the deploy artifacts ship (build/deploy/plugin-config.json), with the
// transport settings each scenario needs.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
  ALLOW,
  type DriverRun,
  EXIT,
  type Variant,
  checkAnswer,
  decodeCheck,
  decodeReport,
  forwardedAttributeHeader,
  invalidUtf8Strings,
  request,
  runDriver,
  text,
} from "./support/driver.ts";

const SHIPPED = JSON.parse(readFileSync(join(import.meta.dirname, "..", "..", "build", "deploy", "plugin-config.json"), "utf8")) as {
  httpClientConfig: { transport: Record<string, unknown> };
  tcpClientConfig: Record<string, unknown>;
  resources: Array<{ kind: string }>;
};

interface Tweaks {
  transport?: Record<string, unknown>;
  /** Leave out the QuotaSpec and its binding (no quota calls, no prefetch). */
  noQuotas?: boolean;
}

/** The shipped HTTP configuration with transport overrides (the TCP client is left out of HTTP scenarios). */
function httpConfig(t: Tweaks = {}): string {
  return JSON.stringify({
    httpClientConfig: { ...SHIPPED.httpClientConfig, transport: { ...SHIPPED.httpClientConfig.transport, ...t.transport } },
    resources: t.noQuotas ? SHIPPED.resources.filter((r) => !r.kind.startsWith("QuotaSpec")) : SHIPPED.resources,
  });
}

const GET_PET = request("GET", "/pets/42?key=alice");
const GRANT = checkAnswer({
  precondition: { status: { code: 0 }, validDuration: { seconds: 60 }, validUseCount: 1000 },
  quotas: { requestcount: { grantedAmount: 1, validDuration: { seconds: 60 } } },
});

const checks = (run: DriverRun) => run.calls.filter((c) => c.method === "Check");
const reports = (run: DriverRun) => run.calls.filter((c) => c.method === "Report");
const served = (run: DriverRun) => assert.equal(run.status, EXIT.ok, run.output);

/** Lines of `run` between two indexes matching `re`. */
const linesBetween = (run: DriverRun, from: number, to: number, re: RegExp) => run.lines.slice(from, to).filter((l) => re.test(l));

/** Virtual milliseconds the driver's ticks advanced between two output lines. */
function tickedMs(run: DriverRun, from: number, to: number): number {
  return linesBetween(run, from, to, />> proxy_on_tick\(/).reduce((sum, l) => sum + Number(/virtual clock \+(\d+)ms/.exec(l)?.[1] ?? 0), 0);
}

for (const variant of ["release", "debug"] as Variant[]) {
  describe(`filter.wasm (${variant}) on proxy-wasm-cpp-host`, () => {
    it("allow: one Check to hub_server with the request's attributes and quota, then the request continues", () => {
      const run = runDriver(variant, ["--config", httpConfig(), ...GET_PET, "--grpc-response", GRANT]);
      served(run);
      const [check, ...more] = checks(run);
      assert.equal(more.length, 0);
      assert.equal(check.cluster, "hub_server");
      assert.equal(check.service, "mesh.hub.v1.Hub");
      assert.equal(check.timeoutMs, 5000);
      const request = decodeCheck(check.message);
      assert.equal(text(request.attributes, "request.path"), "/pets/42?key=alice");
      assert.equal(text(request.attributes, "request.method"), "GET");
      assert.equal(text(request.attributes, "api.operation"), "getPet");
      assert.equal(text(request.attributes, "request.api_key"), "alice");
      assert.equal(text(request.attributes, "destination.uid"), "kubernetes://petstore-v1.demo");
      assert.deepEqual(Object.keys(request.quotas), ["requestcount"]);
      assert.deepEqual(run.outcomes, ["request continued to the upstream"]);
      // The forwarded attributes travel upstream in x-mesh-attributes.
      assert.match(run.lines[run.indexOf(/--> request headers sent upstream/)], /"x-mesh-attributes": "[A-Za-z0-9+/=]+"/);
    });

    it("check cache: an identical second request is decided without a hub call", () => {
      const run = runDriver(variant, ["--config", httpConfig({ noQuotas: true }), ...GET_PET, "--requests", "2", "--grpc-response", ALLOW()]);
      served(run);
      const second = run.indexOf(/=== stream 2 /);
      assert.ok(second > 0);
      assert.equal(checks(run).length, 1);
      assert.ok(checks(run)[0].line < second);
      assert.deepEqual(linesBetween(run, second, run.indexOf(/--> outcome/, second), /grpc_call/), []);
      assert.deepEqual(run.outcomes, ["request continued to the upstream", "request continued to the upstream"]);
    });

    it("deny: PERMISSION_DENIED answers 403 with body CODE:message and nothing goes upstream", () => {
      const deny = checkAnswer({ precondition: { status: { code: 7, message: "admins only" }, validDuration: { seconds: 5 }, validUseCount: 10 } });
      const run = runDriver(variant, ["--config", httpConfig(), ...request("GET", "/admin"), "--grpc-response", deny]);
      served(run);
      assert.equal(run.replies.length, 1);
      assert.equal(run.replies[0].status, 403);
      assert.equal(run.replies[0].body, "PERMISSION_DENIED:admins only");
      assert.deepEqual(run.outcomes, ['local reply 403 "PERMISSION_DENIED:admins only"']);
      assert.equal(run.indexOf(/--> request headers sent upstream/), -1);
    });

    it("quota: a quota granted short answers 429 RESOURCE_EXHAUSTED", () => {
      const exhausted = checkAnswer({
        precondition: { status: { code: 0 }, validDuration: { seconds: 60 }, validUseCount: 100 },
        quotas: { requestcount: { grantedAmount: 0, validDuration: { seconds: 60 } } },
      });
      const run = runDriver(variant, ["--config", httpConfig(), ...GET_PET, "--grpc-response", exhausted]);
      served(run);
      assert.equal(run.replies.length, 1);
      assert.equal(run.replies[0].status, 429);
      assert.match(run.replies[0].body, /^RESOURCE_EXHAUSTED:.*requestcount/);
    });

    // NetworkFailPolicy on a host that performs no retries of its own: the module
    // re-dispatches after backoff on the ABI's timer (issue 14, "Done when").
    for (const policy of ["FAIL_CLOSE", "FAIL_OPEN"] as const) {
      it(`${policy} with maxRetry 2: exactly 3 Check attempts spaced by the backoff, then ${policy === "FAIL_CLOSE" ? "503" : "the request continues"}`, () => {
        const transport = { networkFailPolicy: { policy, maxRetry: 2, baseRetryWait: "0.08s", maxRetryWait: "1s" } };
        const run = runDriver(variant, [
          "--config",
          httpConfig({ transport, noQuotas: true }),
          ...GET_PET,
          "--grpc-response-for",
          "Check=UNAVAILABLE:hub down",
          "--grpc-response",
          "0:",
          "--wait-ticks",
          "20",
        ]);
        served(run);
        const attempts = checks(run);
        assert.equal(attempts.length, 3, `Check attempts:\n${attempts.map((a) => run.lines[a.line]).join("\n")}`);
        // The same request each time, and no retry instructions a host could act on as well.
        for (const a of attempts) {
          assert.deepEqual(a.message, attempts[0].message);
          assert.doesNotMatch(a.metadata, /max-retry=[1-9]/);
        }
        for (let i = 1; i < attempts.length; i++) {
          const waited = tickedMs(run, attempts[i - 1].line, attempts[i].line);
          assert.ok(waited >= 80 && waited <= 1000, `attempt ${i + 1} after ${waited} ms of timer ticks (base wait 80 ms, at most 1 s)`);
        }
        const end = run.indexOf(/--> outcome/);
        assert.ok(end > attempts[2].line, "the decision comes after the last attempt");
        if (policy === "FAIL_CLOSE") {
          assert.equal(run.replies.length, 1);
          assert.equal(run.replies[0].status, 503);
          assert.match(run.replies[0].body, /^UNAVAILABLE:/);
        } else {
          assert.deepEqual(run.outcomes, ["request continued to the upstream"]);
        }
      });
    }

    it("FAIL_CLOSE with maxRetry 0: one attempt, then 503 with the transport status", () => {
      const transport = { networkFailPolicy: { policy: "FAIL_CLOSE", maxRetry: 0 } };
      const run = runDriver(variant, [
        "--config",
        httpConfig({ transport, noQuotas: true }),
        ...GET_PET,
        "--grpc-response-for",
        "Check=UNAVAILABLE:hub down",
        "--grpc-response",
        "0:",
      ]);
      served(run);
      assert.equal(checks(run).length, 1);
      assert.deepEqual(run.outcomes, ['local reply 503 "UNAVAILABLE:hub down"']);
    });

    it("report on tick: requests are batched and sent when reportBatchMaxTime has passed", () => {
      const run = runDriver(variant, [
        "--config",
        httpConfig({ transport: { reportBatchMaxTime: "1s" }, noQuotas: true }),
        ...GET_PET,
        "--requests",
        "2",
        "--ticks",
        "1",
        "--grpc-response",
        ALLOW(),
      ]);
      served(run);
      const tick = run.indexOf(/>> proxy_on_tick\(/);
      assert.ok(tick > 0);
      const [report, ...more] = reports(run);
      assert.ok(report, "no Report call");
      assert.ok(report.line > tick, "the batch waits for the timer");
      assert.ok(report.line < run.indexOf(/-- shutdown/), "sent on the tick, not at shutdown");
      assert.equal(more.length, 0);
      const entries = decodeReport(report.message);
      assert.equal(entries.length, 2);
      for (const e of entries) {
        assert.equal(text(e, "request.path"), "/pets/42?key=alice");
        assert.equal(text(e, "response.code"), "200");
      }
    });

    it("report: a response's trailers (proxy_on_response_trailers) join response.headers, and the body sizes are the host's", () => {
      const run = runDriver(variant, [
        "--config",
        httpConfig({ transport: { reportBatchMaxEntries: 1 }, noQuotas: true }),
        ...GET_PET,
        "--body",
        "12345",
        "--resp-header",
        "content-type=application/grpc",
        "--resp-header",
        "grpc-status=0",
        "--resp-body",
        "abcdefgh",
        "--resp-trailer",
        "grpc-status=13",
        "--resp-trailer",
        "grpc-message=broken",
        "--grpc-response",
        ALLOW(),
      ]);
      served(run);
      assert.ok(run.indexOf(/>> proxy_on_response_trailers\(/) > 0, "the host hands the trailers to the module");
      const [report] = reports(run);
      assert.ok(report, "no Report call");
      const [entry] = decodeReport(report.message);
      assert.equal(text(entry, "response.grpc_status"), "13");
      assert.equal(text(entry, "response.grpc_message"), "broken");
      assert.equal(text(entry, "request.size"), "5");
      assert.equal(text(entry, "response.size"), "8");
    });

    it("report by size: a full batch (reportBatchMaxEntries) is sent at once, without a tick", () => {
      const run = runDriver(variant, [
        "--config",
        httpConfig({ transport: { reportBatchMaxEntries: 3, reportBatchMaxTime: "1h" }, noQuotas: true }),
        ...GET_PET,
        "--requests",
        "3",
        "--grpc-response",
        ALLOW(),
      ]);
      served(run);
      assert.equal(run.indexOf(/>> proxy_on_tick\(/), -1);
      const [report] = reports(run);
      assert.ok(report && report.line < run.indexOf(/-- shutdown/), "no Report before shutdown");
      assert.ok(report.line > run.indexOf(/>> proxy_on_log\(4\)/), "sent when the third request is logged");
      assert.equal(decodeReport(report.message).length, 3);
    });

    it("flush at shutdown: the last batch is sent from proxy_on_done, the root stays until the hub answers, then proxy_done", () => {
      const run = runDriver(variant, [
        "--config",
        httpConfig({ transport: { reportBatchMaxTime: "1h" }, noQuotas: true }),
        ...GET_PET,
        "--grpc-response",
        ALLOW(),
        "--answer-at-shutdown",
        "--wait-ticks",
        "20",
      ]);
      served(run);
      const done = run.indexOf(/>> proxy_on_done\(1\) \(root\)/);
      const returned = run.indexOf(/<< proxy_on_done = /, done);
      assert.ok(done > 0 && returned > done);
      const [report, ...more] = reports(run);
      assert.ok(report, "no Report call");
      assert.equal(more.length, 0);
      assert.ok(report.line > done && report.line < returned, "the batch is sent from proxy_on_done");
      assert.equal(decodeReport(report.message).length, 1);
      // Returning true would let the host delete the root and cancel the call in flight.
      assert.match(run.lines[returned], /<< proxy_on_done = false/);
      const answered = run.indexOf(new RegExp(`>> proxy_on_grpc_receive token=${report.token} `), returned);
      const proxyDone = run.indexOf(/\[worker ctx 1\] done -> OK/, returned);
      assert.ok(answered > 0 && proxyDone > answered, "proxy_done once the batch is answered");
      assert.ok(run.indexOf(/-- shutdown: root context done/) > proxyDone);
    });

    it("shutdown with a hub that never answers: the root calls proxy_done after a bounded wait on its timer", () => {
      const run = runDriver(variant, [
        "--config",
        httpConfig({ transport: { reportBatchMaxTime: "1h" }, noQuotas: true }),
        ...GET_PET,
        "--grpc-response",
        ALLOW(),
        "--wait-ticks",
        "100",
      ]);
      served(run);
      const returned = run.indexOf(/\[worker ctx 1\] << proxy_on_done = false/);
      const proxyDone = run.indexOf(/\[worker ctx 1\] done -> OK/, returned);
      assert.ok(returned > 0 && proxyDone > returned, run.output);
      const waited = tickedMs(run, returned, proxyDone);
      assert.ok(waited > 0 && waited <= 30_000, `waited ${waited} ms of timer ticks`);
      assert.ok(run.indexOf(/-- shutdown: root context done/) > proxyDone);
    });

    it("reports survive a hub outage: a batch refused with UNAVAILABLE is sent again on the timer, entries intact", () => {
      const run = runDriver(variant, [
        "--config",
        httpConfig({ transport: { reportBatchMaxEntries: 2, reportBatchMaxTime: "1h" }, noQuotas: true }),
        ...GET_PET,
        "--requests",
        "2",
        "--ticks",
        "5",
        "--grpc-response-for",
        "Report=UNAVAILABLE:hub down",
        "--grpc-response-for",
        "Report=0:",
        "--grpc-response",
        ALLOW(),
      ]);
      served(run);
      const [first, second, ...more] = reports(run);
      assert.ok(first && second, "the refused batch was not sent again");
      assert.equal(more.length, 0, "sent again after the hub accepted it");
      assert.ok(run.indexOf(/>> proxy_on_tick\(/, first.line) < second.line, "resent on the timer");
      const texts = (m: Buffer) => decodeReport(m).map((e) => `${text(e, "request.path")} ${text(e, "response.code")}`);
      assert.deepEqual(texts(second.message), texts(first.message));
      assert.equal(texts(first.message).length, 2);
      assert.ok(second.line < run.indexOf(/-- shutdown/));
    });

    it("counters: the hub client's counters reach the proxy's metrics every statsUpdateInterval", () => {
      const run = runDriver(variant, [
        "--config",
        httpConfig({ transport: { statsUpdateInterval: "1s", reportBatchMaxTime: "1s" }, noQuotas: true }),
        ...GET_PET,
        "--requests",
        "2",
        "--ticks",
        "2",
        "--grpc-response",
        ALLOW(),
      ]);
      served(run);
      const m = (name: string) => run.metrics.get(`hub_client.${name}`);
      assert.equal(m("total_check_calls"), 2n);
      assert.equal(m("total_check_cache_hits"), 1n);
      assert.equal(m("total_check_cache_misses"), 1n);
      assert.equal(m("total_remote_check_calls"), 1n);
      assert.equal(m("total_remote_check_accepts"), 1n);
      assert.equal(m("total_report_calls"), 2n);
      assert.equal(m("total_remote_report_calls"), 1n);
      assert.ok(run.indexOf(/increment_metric id=\d+ "hub_client\.total_check_calls" delta=2 -> OK/) > 0);
    });

    it("a client's x-mesh-attributes with invalid UTF-8 (a lone surrogate, ED BF BF) never reaches the hub; a deny stays a deny under FAIL_OPEN", () => {
      const header = forwardedAttributeHeader("source.uid", Buffer.from([0x61, 0x62, 0xed, 0xbf, 0xbf]));
      const deny = checkAnswer({ precondition: { status: { code: 7, message: "no" }, validDuration: { seconds: 5 }, validUseCount: 10 } });
      const transport = { networkFailPolicy: { policy: "FAIL_OPEN" }, reportBatchMaxTime: "1s" };
      const run = runDriver(variant, [
        "--config",
        httpConfig({ transport, noQuotas: true }),
        ...request("GET", "/pets/1", { "x-mesh-attributes": header }),
        "--ticks",
        "1",
        "--grpc-response",
        deny,
      ]);
      served(run);
      const [check] = checks(run);
      assert.ok(check, "no Check call");
      assert.deepEqual(invalidUtf8Strings("mesh.hub.v1.CheckRequest", check.message), []);
      assert.deepEqual(run.outcomes, ['local reply 403 "PERMISSION_DENIED:no"']);
      const [report] = reports(run);
      assert.ok(report, "no Report call");
      assert.deepEqual(invalidUtf8Strings("mesh.hub.v1.ReportRequest", report.message), []);
    });

    it("a refused plugin configuration: proxy_on_configure returns false naming the field, the host rejects the plugin", () => {
      const run = runDriver(variant, ["--config", JSON.stringify({ httpClientConfig: { transport: { networkFailPolicy: { policy: "FAIL_SOMETIMES" } } } })]);
      assert.equal(run.status, EXIT.pluginRejected, run.output);
      assert.ok(run.indexOf(/<< proxy_on_configure = false/) > 0);
      assert.ok(run.indexOf(/log error ".*httpClientConfig\.transport\.networkFailPolicy\.policy/) > 0, run.output);
    });

    it("TCP mode: a TcpClientConfig is accepted and arms the report timer (the host links every TCP callback)", () => {
      // pwdriver drives HTTP streams only; loading checks the TCP callbacks' signatures
      // (cpp-host looks every callback up at link time) and configure runs the TCP client.
      const tcp = { ...SHIPPED.tcpClientConfig, reportInterval: "1s" };
      const run = runDriver(variant, ["--config", JSON.stringify({ tcpClientConfig: tcp }), "--requests", "0", "--ticks", "2"]);
      served(run);
      assert.ok(run.indexOf(/\[worker ctx 1\] << proxy_on_configure = true/) > 0);
      const period = /set_tick_period_milliseconds (\d+)/.exec(run.lines[run.indexOf(/\[worker ctx 1\] set_tick_period_milliseconds/)] ?? "");
      assert.ok(period && Number(period[1]) > 0 && Number(period[1]) <= 1000, "the TCP client's periodic reports need the timer");
      assert.equal(linesBetween(run, 0, run.lines.length, />> proxy_on_tick\(1\)/).length, 2);
      assert.equal(run.calls.length, 0, "no connection, nothing to check or report");
    });
  });
}
