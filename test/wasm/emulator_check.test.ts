import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Action } from "../../host/wasm/abi_types.ts";
import { FilterEmulator } from "../../host/wasm/emulator.ts";
import { decodeForwardHeader } from "../../host/filter/evaluation.ts";
import { GLOBAL_WORDS } from "../../host/wire/global_words.ts";
import { BUILDS, PROPERTIES, REQUEST, allow, deny, pluginConfig } from "./emulator_support.ts";

for (const [build, wasm] of BUILDS) {
  describe(`filter in a proxy-wasm host (${build}): check`, () => {
    it("pauses the request, calls the hub's Check on hub_server, and continues when allowed", () => {
      const emu = new FilterEmulator(pluginConfig(), wasm);
      assert.equal(emu.configured, true);
      const r = emu.request(REQUEST, PROPERTIES);
      assert.equal(r.action, Action.Pause);
      assert.equal(emu.calls.length, 1);
      const call = emu.calls[0];
      assert.equal(call.cluster, "hub_server");
      assert.equal(call.service, "mesh.hub.v1.Hub");
      assert.equal(call.method, "Check");
      assert.equal(call.timeoutMs, 5000);
      assert.equal(call.decoded.globalWordCount, 222);
      assert.ok(call.decoded.deduplicationId.length > 0);
      emu.answer(call, { respond: allow() });
      assert.equal(emu.continued(r.id), true);
      assert.equal(emu.vm.takeLocalReply(r.id), undefined);
      const sent = new Map(emu.requestHeaders(r.id));
      assert.ok(sent.get("x-mesh-attributes"), "forwarded attributes set on the upstream request");
    });

    it("sends the check attributes compressed against the global word list", () => {
      const emu = new FilterEmulator(pluginConfig(), wasm);
      emu.request(REQUEST, PROPERTIES);
      const attrs = emu.calls[0].decoded.attributes;
      const words: string[] = attrs.words ?? [];
      // request.path is global word 17; its value is a message word.
      const valueIndex = attrs.strings["17"];
      assert.equal(words[-valueIndex - 1], "/orders/7?key=k1");
      assert.equal(attrs.bools[String(GLOBAL_WORDS.indexOf("connection.mtls"))], true);
      // source.principal comes from the peer certificate, spiffe:// stripped.
      const principal = attrs.strings[String(GLOBAL_WORDS.indexOf("source.principal"))];
      assert.equal(words[-principal - 1], "cluster.local/ns/web/sa/frontend");
    });

    it("answers a denial with the mapped status and <CODE_NAME>:<message>", () => {
      const emu = new FilterEmulator(pluginConfig(), wasm);
      emu.script.push({ respond: deny(7, "caller not allowed") });
      const r = emu.request(REQUEST, PROPERTIES);
      assert.equal(r.localReply?.status, 403);
      assert.equal(r.localReply?.body, "PERMISSION_DENIED:caller not allowed");
      assert.equal(emu.continued(r.id), false);
    });

    for (const [code, name, status] of [
      [16, "UNAUTHENTICATED", 401],
      [3, "INVALID_ARGUMENT", 400],
      [5, "NOT_FOUND", 404],
      [14, "UNAVAILABLE", 503],
      [13, "INTERNAL", 500],
    ] as const) {
      it(`maps ${name} to ${status}`, () => {
        const emu = new FilterEmulator(pluginConfig({ failPolicy: { policy: "FAIL_CLOSE" } }), wasm);
        emu.script.push({ respond: deny(code, "x") });
        assert.equal(emu.request(REQUEST, PROPERTIES).localReply?.status, status);
      });
    }

    it("answers an exhausted quota with 429", () => {
      const emu = new FilterEmulator(pluginConfig({ quotas: true }), wasm);
      emu.script.push({ respond: { ...allow(), quotas: { requestcount: { grantedAmount: 0 } } } });
      const r = emu.request(REQUEST, PROPERTIES);
      assert.deepEqual(emu.calls[0].decoded.quotas, { requestcount: { amount: 1 } });
      assert.equal(r.localReply?.status, 429);
      assert.equal(r.localReply?.body, "RESOURCE_EXHAUSTED:Quota is exhausted for: requestcount");
    });

    it("serves repeated requests from the check cache without calling the hub", () => {
      const emu = new FilterEmulator(pluginConfig(), wasm);
      emu.script.push({ respond: allow() });
      emu.request(REQUEST, PROPERTIES);
      for (let i = 0; i < 3; i++) {
        const r = emu.request(REQUEST, PROPERTIES);
        assert.equal(r.action, Action.Continue);
      }
      assert.equal(emu.calls.length, 1);
      const other = emu.request({ ...REQUEST, ":path": "/orders/8" }, PROPERTIES);
      assert.equal(other.action, Action.Pause, "another path is another cache key");
      assert.equal(emu.calls.length, 2);
    });

    it("does not cache an answer with valid use count 0", () => {
      const emu = new FilterEmulator(pluginConfig(), wasm);
      emu.script.push({ respond: allow({}) }, { respond: allow() });
      (emu.script[0] as { respond: { precondition: { validUseCount: number } } }).respond.precondition.validUseCount = 0;
      emu.request(REQUEST, PROPERTIES);
      emu.request(REQUEST, PROPERTIES);
      assert.equal(emu.calls.length, 2);
    });

    it("applies route directives: request header operations and direct responses", () => {
      const emu = new FilterEmulator(pluginConfig(), wasm);
      emu.script.push({
        respond: allow({
          precondition: {
            status: { code: 0 },
            validUseCount: 0,
            routeDirective: {
              requestHeaderOperations: [
                { name: "x-tier", value: "gold" },
                { name: "user-agent", operation: 1 },
              ],
              responseHeaderOperations: [{ name: "x-hub", value: "seen", operation: 2 }],
            },
          },
        }),
      });
      const r = emu.request(REQUEST, PROPERTIES);
      const sent = new Map(emu.requestHeaders(r.id));
      assert.equal(sent.get("x-tier"), "gold");
      assert.equal(sent.has("user-agent"), false);
      const response = new Map(emu.finish(r.id, 200));
      assert.equal(response.get("x-hub"), "seen");

      emu.script.push({ respond: { precondition: { status: { code: 0 }, routeDirective: { directResponseCode: 302, directResponseBody: "moved" } } } });
      const redirected = emu.request(REQUEST, PROPERTIES);
      assert.equal(redirected.localReply?.status, 302);
      assert.equal(redirected.localReply?.body, "moved");
    });

    it("skips the check when the service disables check calls", () => {
      const emu = new FilterEmulator(pluginConfig({ disableCheckCalls: true }), wasm);
      assert.equal(emu.request(REQUEST, PROPERTIES).action, Action.Continue);
      assert.equal(emu.calls.length, 0);
    });

    it("sends attributesForHubProxy as x-mesh-attributes metadata on Check and Report, for the proxy in front of the hub", () => {
      const transport = {
        disableReportBatch: true,
        attributesForHubProxy: { attributes: { "source.uid": { stringValue: "kubernetes://orders-v1.shop" }, "source.ip": { bytesValue: "CgAABQ==" } } },
      };
      const emu = new FilterEmulator(pluginConfig({ transport }), wasm);
      emu.script.push({ respond: allow() });
      const r = emu.request(REQUEST, PROPERTIES);
      emu.vm.finishStream(r.id);
      const methods = emu.calls.map((c) => c.method);
      assert.deepEqual(methods, ["Check", "Report"]);
      for (const call of emu.calls) {
        const values = call.metadata.filter(([k]) => k === "x-mesh-attributes").map(([, v]) => v);
        assert.equal(values.length, 1, call.method);
        assert.deepEqual(decodeForwardHeader(values[0]), {
          "source.ip": { bytesValue: "CgAABQ==" },
          "source.uid": { stringValue: "kubernetes://orders-v1.shop" },
        });
      }
    });

    it("sends no x-mesh-attributes metadata without attributesForHubProxy", () => {
      const emu = new FilterEmulator(pluginConfig(), wasm);
      emu.request(REQUEST, PROPERTIES);
      assert.equal(
        emu.calls[0].metadata.some(([k]) => k === "x-mesh-attributes"),
        false,
      );
    });

    it("removes a client-supplied x-mesh-attributes header and sets its own", () => {
      const emu = new FilterEmulator(pluginConfig({ disableCheckCalls: true }), wasm);
      const r = emu.request({ ...REQUEST, "x-mesh-attributes": "Zm9yZ2Vk" }, PROPERTIES);
      const values = emu
        .requestHeaders(r.id)
        .filter(([k]) => k === "x-mesh-attributes")
        .map(([, v]) => v);
      assert.equal(values.length, 1);
      assert.notEqual(values[0], "Zm9yZ2Vk");
    });
  });
}
