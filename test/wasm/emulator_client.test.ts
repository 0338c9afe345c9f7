import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Action } from "../../host/wasm/abi_types.ts";
import { FilterEmulator } from "../../host/wasm/emulator.ts";
import { GLOBAL_WORDS } from "../../host/wire/global_words.ts";
import { BUILDS, PROPERTIES, REQUEST, SERVICE, allow, pluginConfig } from "./emulator_support.ts";

const UNAVAILABLE = { fail: { code: 14, message: "upstream connect error or disconnect/reset before headers" } };

for (const [build, wasm] of BUILDS) {
  describe(`filter in a host that executes retries (${build}): fail policy`, () => {
    // The Node host declares mesh.host_retries: the module sends the policy as
    // call metadata and never retries itself (emulator_retries.test.ts: the module's own).
    const policy = { maxRetry: 2, baseRetryWait: "0.080s", maxRetryWait: "1s" };

    it("FAIL_OPEN delivers the request after the retries are spent", () => {
      const emu = new FilterEmulator(pluginConfig({ failPolicy: { policy: "FAIL_OPEN", ...policy } }), wasm, { hostRetries: true });
      emu.script.push(UNAVAILABLE, UNAVAILABLE, UNAVAILABLE);
      const r = emu.request(REQUEST, PROPERTIES);
      const call = emu.calls[0];
      assert.deepEqual(call.metadata, [["x-mesh-retry-policy", "max-retry=2;base-retry-wait-ms=80;max-retry-wait-ms=1000"]]);
      assert.equal(call.attempts, 3, "one attempt and two retries");
      assert.equal(call.backoffMs.length, 2);
      assert.ok(call.backoffMs[0] >= 80 && call.backoffMs[0] <= 80, `first wait ${call.backoffMs[0]}`);
      assert.ok(call.backoffMs[1] >= 80 && call.backoffMs[1] <= 160, `second wait ${call.backoffMs[1]}`);
      assert.equal(emu.continued(r.id), true);
      assert.equal(emu.vm.takeLocalReply(r.id), undefined);
      assert.ok(emu.logs.some((l) => l.level === "warn" && l.message.includes("FAIL_OPEN")));
    });

    it("FAIL_CLOSE rejects with 503 after the retries are spent", () => {
      const emu = new FilterEmulator(pluginConfig({ failPolicy: { policy: "FAIL_CLOSE", ...policy } }), wasm, { hostRetries: true });
      emu.script.push(UNAVAILABLE, UNAVAILABLE, UNAVAILABLE);
      const r = emu.request(REQUEST, PROPERTIES);
      assert.equal(emu.calls.length, 1, "the module does not retry on top of the host");
      emu.advance(5000);
      assert.equal(emu.calls.filter((c) => c.method === "Check").length, 1);
      assert.equal(emu.calls[0].attempts, 3);
      const reply = emu.vm.takeLocalReply(r.id) ?? r.localReply;
      assert.equal(reply?.status, 503);
      assert.match(reply?.body ?? "", /^UNAVAILABLE:upstream connect error/);
      assert.equal(emu.continued(r.id), false);
    });

    it("a retry that succeeds delivers the hub's answer", () => {
      const emu = new FilterEmulator(pluginConfig({ failPolicy: { policy: "FAIL_CLOSE", ...policy } }), wasm, { hostRetries: true });
      emu.script.push(UNAVAILABLE, { respond: allow() });
      const r = emu.request(REQUEST, PROPERTIES);
      assert.equal(emu.calls[0].attempts, 2);
      assert.equal(emu.continued(r.id), true);
    });

    it("the service-level policy overrides the mesh-level one", () => {
      const config = pluginConfig({ failPolicy: { policy: "FAIL_OPEN" } }) as any;
      config.httpClientConfig.serviceConfigs[SERVICE].networkFailPolicy = { policy: "FAIL_CLOSE", maxRetry: 1 };
      const emu = new FilterEmulator(config, wasm, { hostRetries: true });
      emu.script.push(UNAVAILABLE, UNAVAILABLE);
      const r = emu.request(REQUEST, PROPERTIES);
      assert.equal(emu.calls[0].policy.maxRetry, 1);
      assert.equal((emu.vm.takeLocalReply(r.id) ?? r.localReply)?.status, 503);
    });
  });

  describe(`filter in a proxy-wasm host (${build}): quota cache`, () => {
    it("after a policy-cache hit, quotas are decided locally and refilled by best-effort prefetch", () => {
      const emu = new FilterEmulator(pluginConfig({ quotas: true }), wasm);
      emu.script.push({ respond: { ...allow(), quotas: { requestcount: { grantedAmount: 1, validDuration: { seconds: 60 } } } } });
      emu.request(REQUEST, PROPERTIES);
      assert.equal(emu.calls.length, 1);
      assert.deepEqual(emu.calls[0].decoded.quotas, { requestcount: { amount: 1 } }, "a policy miss sends the quota exactly");

      // Policy hit: the quota cache answers at once (optimistically) and prefetches.
      const second = emu.request(REQUEST, PROPERTIES);
      assert.equal(second.action, Action.Continue);
      assert.equal(emu.calls.length, 2);
      const prefetch = emu.calls[1];
      assert.equal(prefetch.decoded.quotas.requestcount.bestEffort, true);
      assert.ok(prefetch.decoded.quotas.requestcount.amount >= 10, "prefetch asks for at least the minimum");
      emu.answer(prefetch, { respond: { precondition: { status: {} }, quotas: { requestcount: { grantedAmount: 0, validDuration: { seconds: 60 } } } } });

      // The hub granted nothing: once the optimistic tokens are gone, requests get 429 locally.
      let denied = 0;
      for (let i = 0; i < 20; i++) {
        const r = emu.request(REQUEST, PROPERTIES);
        if (r.localReply?.status === 429) denied++;
      }
      assert.ok(denied > 0, "an exhausted pool denies");
      assert.equal(emu.counter("total_quota_cache_hits"), 0, "counters are published on the stats interval only");
      emu.advance(10_000);
      assert.ok(emu.counter("total_quota_cache_hits") >= 21);
      assert.ok(emu.counter("total_remote_quota_prefetch_calls") >= 1);
    });
  });

  describe(`filter in a proxy-wasm host (${build}): reports`, () => {
    it("batches reports and sends them when the batch is full", () => {
      const emu = new FilterEmulator(pluginConfig({ disableCheckCalls: true, transport: { reportBatchMaxEntries: 2 } }), wasm);
      const a = emu.request(REQUEST, PROPERTIES);
      emu.finish(a.id, 200, [["content-type", "text/plain"]]);
      assert.equal(emu.calls.filter((c) => c.method === "Report").length, 0);
      const b = emu.request({ ...REQUEST, ":path": "/orders/8" }, PROPERTIES);
      emu.finish(b.id, 404);
      const reports = emu.calls.filter((c) => c.method === "Report");
      assert.equal(reports.length, 1);
      const batch = reports[0].decoded;
      assert.equal(batch.attributes.length, 2);
      assert.equal(batch.repeatedAttributesSemantics, 1, "INDEPENDENT_ENCODING");
      const code = GLOBAL_WORDS.indexOf("response.code");
      assert.deepEqual(
        batch.attributes.map((a: any) => a.int64s[String(code)]),
        [200, 404],
      );
      const words: string[] = batch.defaultWords;
      const path = GLOBAL_WORDS.indexOf("request.path");
      assert.deepEqual(
        batch.attributes.map((a: any) => words[-a.strings[String(path)] - 1]),
        ["/orders/7?key=k1", "/orders/8"],
      );
    });

    it("sends a partial batch when its timer fires", () => {
      const emu = new FilterEmulator(pluginConfig({ disableCheckCalls: true, transport: { reportBatchMaxTime: "0.050s", statsUpdateInterval: "10s" } }), wasm);
      const a = emu.request(REQUEST, PROPERTIES);
      emu.finish(a.id, 200);
      assert.equal(emu.calls.filter((c) => c.method === "Report").length, 0);
      emu.advance(100);
      assert.equal(emu.calls.filter((c) => c.method === "Report").length, 1);
      assert.equal(emu.calls.find((c) => c.method === "Report")?.cluster, "hub_server");
    });

    it("reports a denied request with its check error", () => {
      const emu = new FilterEmulator(pluginConfig({ transport: { disableReportBatch: true } }), wasm);
      emu.script.push({ respond: { precondition: { status: { code: 7, message: "no" } } } });
      const r = emu.request(REQUEST, PROPERTIES);
      emu.vm.finishStream(r.id);
      const report = emu.calls.find((c) => c.method === "Report")!.decoded.attributes[0];
      assert.equal(report.int64s[String(GLOBAL_WORDS.indexOf("response.code"))], 403);
      assert.equal(report.int64s[String(GLOBAL_WORDS.indexOf("check.error_code"))], 7);
      const msg = report.strings[String(GLOBAL_WORDS.indexOf("check.error_message"))];
      assert.equal(emu.calls.find((c) => c.method === "Report")!.decoded.defaultWords[-msg - 1], "PERMISSION_DENIED:no");
    });
  });

  describe(`filter in a proxy-wasm host (${build}): configuration and counters`, () => {
    it("a bad configuration is refused, logged with its field, and the old one keeps serving", () => {
      const emu = new FilterEmulator(pluginConfig({ disableCheckCalls: true }), wasm);
      const refused = emu.configure({ httpClientConfig: { transport: { networkFailPolicy: { policy: "FAIL_SOMETIMES" } } } });
      assert.equal(refused, false);
      assert.ok(emu.logs.some((l) => l.level === "error" && l.message.includes("httpClientConfig.transport.networkFailPolicy.policy")));
      const r = emu.request(REQUEST, PROPERTIES);
      assert.equal(r.action, Action.Continue, "the previous configuration (checks disabled) still applies");
      assert.equal(emu.configure("{not json"), false);
      assert.equal(emu.request(REQUEST, PROPERTIES).action, Action.Continue);
    });

    it("publishes client counters every statsUpdateInterval", () => {
      const emu = new FilterEmulator(pluginConfig({ transport: { statsUpdateInterval: "1s" } }), wasm);
      emu.script.push({ respond: allow() });
      for (let i = 0; i < 5; i++) emu.request(REQUEST, PROPERTIES);
      assert.equal(emu.counter("total_check_calls"), 0);
      emu.advance(1000);
      assert.equal(emu.counter("total_check_calls"), 5);
      assert.equal(emu.counter("total_check_cache_hits"), 4);
      assert.equal(emu.counter("total_check_cache_misses"), 1);
      assert.equal(emu.counter("total_remote_check_calls"), 1);
      assert.equal(emu.counter("total_remote_calls"), 1);
      assert.equal(emu.counter("total_remote_call_successes"), 1);
    });
  });
}
