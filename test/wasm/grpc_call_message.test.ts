import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ProxyWasmVm } from "../../host/wasm/abi_host.ts";
import type { GrpcCall } from "../../host/wasm/abi_types.ts";
import { messageType } from "../../host/wire/protos.ts";
import { BUILDS, pluginConfig, requestToService } from "./emulator_support.ts";

// A hub call's message is handed to the embedder, which sends it later (after
// a connection is made, again on a retry): it must be the embedder's own
// bytes, not a view of module memory the module goes on to reuse.
describe("proxy_grpc_call hands the embedder its own copy of the message", () => {
  for (const [build, wasm] of BUILDS) {
    it(`${build}: a held Check still decodes to its request after the module made many more`, () => {
      const calls: GrpcCall[] = [];
      const vm = new ProxyWasmVm(wasm, { log: () => {}, now: () => 1_700_000_000_000_000_000n, grpcCall: (c) => calls.push(c), tickPeriod: () => {} });
      const { rootId, accepted } = vm.startRoot(JSON.stringify(pluginConfig()));
      assert.ok(accepted);
      const request = (path: string) => requestToService(vm, rootId, path);
      request("/orders/first");
      assert.equal(calls.length, 1);
      const first = calls[0];
      const sent = Buffer.from(first.message);
      for (let i = 0; i < 200; i++) request(`/orders/${i}-${"x".repeat(i % 40)}`);
      assert.ok(calls.length > 1, "the later requests made hub calls too");
      assert.deepEqual(Buffer.from(first.message), sent, "the first Check's bytes changed under the embedder");
      const words = messageType("mesh.hub.v1.CheckRequest").toObject(messageType("mesh.hub.v1.CheckRequest").decode(first.message)) as {
        attributes: { words: string[] };
      };
      assert.ok(words.attributes.words.includes("/orders/first"));
    });
  }
});
