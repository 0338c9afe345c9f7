// What the module does on a host that does not retry for it (Envoy and every
// proxy but our Node host): NetworkFailPolicy retries on the proxy's timer,
// the shutdown flush (proxy_on_done false, then proxy_done), the report retry
// buffer, and forwarded attributes that cannot change a decision.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Action } from "../../host/wasm/abi_types.ts";
import { FilterEmulator } from "../../host/wasm/emulator.ts";
import { GLOBAL_WORDS } from "../../host/wire/global_words.ts";
import { messageType } from "../../host/wire/protos.ts";
import { invalidStrings } from "../../host/wire/utf8_strings.ts";
import { BUILDS, PROPERTIES, REQUEST, allow, deny, pluginConfig } from "./emulator_support.ts";

const UNAVAILABLE = { fail: { code: 14, message: "upstream connect error or disconnect/reset before headers. reset reason: connection failure" } };
const MS = 1_000_000n;

const checks = (emu: FilterEmulator) => emu.calls.filter((c) => c.method === "Check");
const reports = (emu: FilterEmulator) => emu.calls.filter((c) => c.method === "Report");
const gapsMs = (emu: FilterEmulator) =>
  checks(emu)
    .slice(1)
    .map((c, i) => Number((c.atNanos - checks(emu)[i].atNanos) / MS));

for (const [build, wasm] of BUILDS) {
  describe(`filter retrying on its own timer (${build})`, () => {
    const policy = { maxRetry: 2, baseRetryWait: "0.080s", maxRetryWait: "1s" };

    it("FAIL_CLOSE: three Check attempts spaced by the backoff, then 503; no retry metadata", () => {
      const emu = new FilterEmulator(pluginConfig({ failPolicy: { policy: "FAIL_CLOSE", ...policy }, transport: { statsUpdateInterval: "1s" } }), wasm);
      emu.script.push(UNAVAILABLE, UNAVAILABLE, UNAVAILABLE);
      const r = emu.request(REQUEST, PROPERTIES);
      assert.equal(r.action, Action.Pause);
      assert.equal(checks(emu).length, 1);
      assert.equal(emu.tickMs, 80, "the timer is armed for the first backoff");
      emu.advance(79);
      assert.equal(checks(emu).length, 1, "not before the backoff");
      emu.advance(1);
      assert.equal(checks(emu).length, 2);
      emu.advance(160);
      assert.equal(checks(emu).length, 3);
      const [first, second] = gapsMs(emu);
      assert.equal(first, 80, "first retry after baseRetryWait exactly");
      assert.ok(second >= 80 && second <= 160, `second retry after ${second} ms`);
      for (const c of checks(emu)) assert.deepEqual(c.metadata, [], "Envoy would forward retry metadata to the hub as a header");
      assert.deepEqual(new Set(checks(emu).map((c) => Buffer.from(c.message).toString("hex"))).size, 1, "the same bytes, so the same deduplication id");
      const final = emu.vm.takeLocalReply(r.id);
      assert.equal(final?.status, 503);
      assert.match(final?.body ?? "", /^UNAVAILABLE:upstream connect error/);
      emu.advance(1000);
      assert.equal(emu.counter("total_remote_call_retries"), 2);
      assert.equal(emu.counter("total_remote_calls"), 1, "one remote call however many attempts");
      assert.equal(emu.counter("total_remote_call_send_errors"), 1);
    });

    it("FAIL_OPEN: the same three attempts, then the request continues", () => {
      const emu = new FilterEmulator(pluginConfig({ failPolicy: { policy: "FAIL_OPEN", ...policy } }), wasm);
      emu.script.push(UNAVAILABLE, UNAVAILABLE, UNAVAILABLE);
      const r = emu.request(REQUEST, PROPERTIES);
      emu.advance(80);
      assert.equal(emu.continued(r.id), false, "still waiting after the first retry");
      emu.advance(160);
      assert.equal(checks(emu).length, 3);
      assert.equal(emu.continued(r.id), true);
      assert.equal(emu.vm.takeLocalReply(r.id), undefined);
    });

    it("a retry that gets the hub's answer decides by it; a deny stays a deny under FAIL_OPEN", () => {
      const emu = new FilterEmulator(pluginConfig({ failPolicy: { policy: "FAIL_OPEN", ...policy } }), wasm);
      emu.script.push(UNAVAILABLE, { respond: deny(7, "not you") });
      const r = emu.request(REQUEST, PROPERTIES);
      emu.advance(80);
      assert.equal(checks(emu).length, 2);
      assert.equal(emu.vm.takeLocalReply(r.id)?.status, 403);
    });

    it("a status that is the hub's verdict (INVALID_ARGUMENT) is not retried", () => {
      const emu = new FilterEmulator(pluginConfig({ failPolicy: { policy: "FAIL_CLOSE", ...policy } }), wasm);
      emu.script.push({ fail: { code: 3, message: "bad request" } });
      const r = emu.request(REQUEST, PROPERTIES);
      emu.advance(2000);
      assert.equal(checks(emu).length, 1);
      assert.equal(r.localReply?.status ?? emu.vm.takeLocalReply(r.id)?.status, 400);
    });

    it("backoff grows with jitter up to maxRetryWait", () => {
      const emu = new FilterEmulator(pluginConfig({ failPolicy: { policy: "FAIL_CLOSE", maxRetry: 6, baseRetryWait: "0.080s", maxRetryWait: "0.5s" } }), wasm);
      for (let i = 0; i < 7; i++) emu.script.push(UNAVAILABLE);
      emu.request(REQUEST, PROPERTIES);
      emu.advance(5000);
      const gaps = gapsMs(emu);
      assert.equal(gaps.length, 6);
      gaps.forEach((g, n) => assert.ok(g >= 80 && g <= Math.min(500, 80 * 2 ** n) + 1, `wait ${n + 1}: ${g} ms`));
    });

    it("a client that went away while the retry waited: the call is abandoned", () => {
      const emu = new FilterEmulator(pluginConfig({ failPolicy: { policy: "FAIL_CLOSE", ...policy }, transport: { statsUpdateInterval: "1s" } }), wasm);
      emu.script.push(UNAVAILABLE);
      const r = emu.request(REQUEST, PROPERTIES);
      emu.vm.finishStream(r.id);
      emu.advance(2000);
      assert.equal(checks(emu).length, 1);
      assert.equal(emu.counter("total_remote_call_cancellations"), 1);
      assert.equal(emu.counter("total_remote_call_retries"), 0, "nothing was sent again");
    });

    it("a host that declares mesh.host_retries gets the policy as metadata and no module retries", () => {
      const emu = new FilterEmulator(pluginConfig({ failPolicy: { policy: "FAIL_CLOSE", ...policy } }), wasm, { hostRetries: true });
      emu.script.push(UNAVAILABLE, UNAVAILABLE, UNAVAILABLE);
      emu.request(REQUEST, PROPERTIES);
      emu.advance(2000);
      assert.equal(checks(emu).length, 1);
      assert.equal(checks(emu)[0].attempts, 3, "the host made the attempts");
      assert.deepEqual(checks(emu)[0].metadata, [["x-mesh-retry-policy", "max-retry=2;base-retry-wait-ms=80;max-retry-wait-ms=1000"]]);
    });
  });

  describe(`filter shutdown flush (${build})`, () => {
    it("proxy_on_done answers false while the last batch is in flight, then proxy_done once it is answered", () => {
      const emu = new FilterEmulator(pluginConfig({ disableCheckCalls: true }), wasm);
      emu.finish(emu.request(REQUEST, PROPERTIES).id, 200);
      assert.equal(reports(emu).length, 0, "batched");
      assert.equal(emu.shutdown(), false);
      assert.equal(reports(emu).length, 1, "the final batch is sent before the root is done");
      assert.equal(emu.rootDone, false);
      emu.answer(reports(emu)[0], { respond: {} });
      assert.equal(emu.rootDone, true);
      assert.equal(emu.vm.hasRoot(emu.rootId), false, "deleted after proxy_done");
    });

    it("a hub that never answers: proxy_done after the bounded wait, the batch counted as dropped", () => {
      const emu = new FilterEmulator(pluginConfig({ disableCheckCalls: true }), wasm);
      emu.finish(emu.request(REQUEST, PROPERTIES).id, 200);
      assert.equal(emu.shutdown(), false);
      emu.advance(4900);
      assert.equal(emu.rootDone, false);
      emu.advance(200);
      assert.equal(emu.rootDone, true);
      assert.equal(emu.counter("report_dropped"), 1);
      assert.ok(emu.logs.some((l) => l.message.includes("did not answer the last report batches")));
    });

    it("nothing to send: proxy_on_done answers true", () => {
      const emu = new FilterEmulator(pluginConfig({ disableCheckCalls: true }), wasm);
      assert.equal(emu.shutdown(), true);
      assert.equal(emu.vm.hasRoot(emu.rootId), false);
    });
  });

  describe(`filter report retry buffer (${build})`, () => {
    const config = (transport: object = {}) =>
      pluginConfig({ disableCheckCalls: true, transport: { disableReportBatch: true, statsUpdateInterval: "1s", ...transport } });

    it("keeps a batch the hub could not take and resends the same bytes when the hub is back", () => {
      const emu = new FilterEmulator(config(), wasm);
      emu.script.push(UNAVAILABLE);
      emu.finish(emu.request(REQUEST, PROPERTIES).id, 200);
      assert.equal(reports(emu).length, 1);
      emu.script.push(UNAVAILABLE, UNAVAILABLE, { respond: {} });
      emu.advance(1000);
      assert.equal(reports(emu).length, 2, "tried again at the next tick");
      emu.advance(1000);
      assert.equal(reports(emu).length, 3, "then 1 s after that failure");
      emu.advance(1000);
      assert.equal(reports(emu).length, 3, "then the wait doubles (2 s)");
      emu.advance(1000);
      assert.equal(reports(emu).length, 4);
      assert.equal(Buffer.from(reports(emu)[3].message).toString("hex"), Buffer.from(reports(emu)[0].message).toString("hex"));
      emu.advance(1000);
      assert.equal(emu.counter("report_dropped"), 0);
      assert.equal(emu.counter("total_remote_report_successes"), 1);
    });

    it("a success sends what the buffer holds at once", () => {
      const emu = new FilterEmulator(config(), wasm);
      emu.script.push(UNAVAILABLE, UNAVAILABLE);
      emu.finish(emu.request(REQUEST, PROPERTIES).id, 200);
      emu.finish(emu.request({ ...REQUEST, ":path": "/orders/8" }, PROPERTIES).id, 200);
      assert.equal(reports(emu).length, 2);
      emu.script.push({ respond: {} }, { respond: {} }, { respond: {} });
      emu.finish(emu.request({ ...REQUEST, ":path": "/orders/9" }, PROPERTIES).id, 200);
      assert.equal(reports(emu).length, 5, "the new batch, then both buffered ones, one after the other");
      const paths = reports(emu)
        .slice(2)
        .map((c) => c.decoded.defaultWords.find((w: string) => w.startsWith("/orders/")));
      assert.deepEqual(paths, ["/orders/9", "/orders/7?key=k1", "/orders/8"]);
    });

    it("overflow drops the oldest and counts them (reportBufferMaxEntries)", () => {
      const emu = new FilterEmulator(config({ reportBufferMaxEntries: 2 }), wasm);
      emu.script.push(UNAVAILABLE, UNAVAILABLE, UNAVAILABLE);
      for (let i = 0; i < 3; i++) emu.finish(emu.request({ ...REQUEST, ":path": `/orders/${i}` }, PROPERTIES).id, 200);
      emu.advance(1000);
      assert.equal(emu.counter("report_dropped"), 1);
      assert.ok(emu.logs.some((l) => l.level === "warn" && l.message.includes("report retry buffer full")));
    });

    it("a batch the hub refused (INVALID_ARGUMENT) is dropped and counted, not resent", () => {
      const emu = new FilterEmulator(config(), wasm);
      emu.script.push({ fail: { code: 3, message: "invalid" } });
      emu.finish(emu.request(REQUEST, PROPERTIES).id, 200);
      emu.advance(5000);
      assert.equal(reports(emu).length, 1);
      assert.equal(emu.counter("report_dropped"), 1);
    });
  });

  describe(`forwarded attributes cannot change a decision (${build})`, () => {
    // Attributes{ source.uid: "a" ED BF BF (not UTF-8), source.namespace: "web" }, base64.
    const INVALID = Buffer.from("0a140a0a736f757263652e7569641206120461edbfbf0a190a10736f757263652e6e616d65737061636512051203776562", "hex").toString("base64");

    it("an invalid string is dropped and counted; the Check is valid UTF-8 and the hub's deny stands under FAIL_OPEN", () => {
      const emu = new FilterEmulator(pluginConfig({ failPolicy: { policy: "FAIL_OPEN" }, transport: { statsUpdateInterval: "1s" } }), wasm);
      emu.script.push({ respond: deny(7, "denied") });
      const r = emu.request({ ...REQUEST, "x-mesh-attributes": INVALID, "x-junk": "\u00ff\u00fe" }, PROPERTIES);
      assert.equal(r.localReply?.status ?? emu.vm.takeLocalReply(r.id)?.status, 403);
      assert.deepEqual(invalidStrings(messageType("mesh.hub.v1.CheckRequest"), checks(emu)[0].message), [], "every string is valid UTF-8");
      const words: string[] = checks(emu)[0].decoded.attributes.words;
      assert.ok(words.includes("web"), "the valid forwarded attribute is kept");
      assert.ok(!words.some((w) => w.startsWith("a\ufffd")), "the invalid one is not");
      emu.advance(1000);
      assert.equal(emu.counter("forwarded_attributes_dropped"), 1);
    });

    it("a malformed header is ignored whole, and other requests' reports go in the same batch", () => {
      const emu = new FilterEmulator(pluginConfig({ transport: { reportBatchMaxEntries: 2, statsUpdateInterval: "1s" } }), wasm);
      emu.script.push({ respond: allow() });
      emu.finish(emu.request({ ...REQUEST, "x-mesh-attributes": "%%%not base64" }, PROPERTIES).id, 200);
      emu.finish(emu.request({ ...REQUEST, "x-mesh-attributes": INVALID }, PROPERTIES).id, 200);
      const batch = reports(emu)[0];
      assert.equal(batch.decoded.attributes.length, 2);
      assert.deepEqual(invalidStrings(messageType("mesh.hub.v1.ReportRequest"), batch.message), []);
      const uid = GLOBAL_WORDS.indexOf("source.uid");
      for (const entry of batch.decoded.attributes) assert.equal(entry.strings?.[String(uid)], undefined);
      emu.advance(1000);
      assert.equal(emu.counter("forwarded_attributes_dropped"), 2);
    });
  });
}

for (const [build, wasm] of BUILDS) {
  describe(`filter report size bound (${build})`, () => {
    it("a batch over 512 KiB goes as several Report calls, none over the bound", () => {
      const emu = new FilterEmulator(pluginConfig({ disableCheckCalls: true, transport: { reportBatchMaxEntries: 40 } }), wasm);
      for (let i = 0; i < 40; i++) {
        // 40 requests with 30 KB of headers each: about 1.2 MB as one batch, over the hub's default 1 MiB limit.
        const big = `${i}-`.padEnd(30_000, "x");
        emu.finish(emu.request({ ...REQUEST, ":path": `/orders/${i}`, "x-big": big }, PROPERTIES).id, 200);
      }
      const sent = reports(emu);
      assert.ok(sent.length >= 3, `${sent.length} calls`);
      for (const c of sent) assert.ok(c.message.length <= 512 * 1024, `${c.message.length} bytes`);
      assert.equal(
        sent.reduce((n, c) => n + c.decoded.attributes.length, 0),
        40,
        "every report, once",
      );
    });
  });
}
