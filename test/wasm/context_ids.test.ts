import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LAST_CONTEXT_ID, ProxyWasmVm } from "../../host/wasm/abi_host.ts";
import { Action, type GrpcCall } from "../../host/wasm/abi_types.ts";
import { BUILDS, pluginConfig, requestToService } from "./emulator_support.ts";

// The ABI passes context ids as i32: a long-lived sidecar gives out more ids
// than that, so numbering starts over at 1 instead of reaching ids the
// module would read as negative.
describe("context ids", () => {
  for (const [build, wasm] of BUILDS) {
    it(`${build}: numbering goes on at 1 after the largest i32, and the module serves those requests`, () => {
      const calls: GrpcCall[] = [];
      const vm = new ProxyWasmVm(
        wasm,
        { log: () => {}, now: () => 1_700_000_000_000_000_000n, grpcCall: (c) => calls.push(c), tickPeriod: () => {} },
        LAST_CONTEXT_ID - 1,
      );
      const { rootId, accepted } = vm.startRoot(JSON.stringify(pluginConfig()));
      assert.ok(accepted);
      assert.equal(rootId, LAST_CONTEXT_ID - 1);
      const ids: number[] = [];
      for (const path of ["/orders/1", "/orders/2", "/orders/3"]) {
        const { id, action } = requestToService(vm, rootId, path);
        ids.push(id);
        // Each request waits for its Check: the module filed it under its own id.
        assert.equal(action, Action.Pause);
      }
      assert.deepEqual(ids, [LAST_CONTEXT_ID, 1, 2]);
      assert.equal(calls.length, 3, "one Check per request, whatever its id");
      for (const id of ids) vm.finishStream(id);
      assert.equal(vm.upcomingContextId, 3);
      assert.equal(vm.failed, false);
    });
  }
});
