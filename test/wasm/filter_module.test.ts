// The embedding API (host/wasm/filter_module.ts over assembly/embed/exports.ts):
// a handle answers only while its configuration is held.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { DEBUG_WASM, FilterModule, RELEASE_WASM, type RequestInput } from "../../host/wasm/filter_module.ts";

const REQUEST: RequestInput = {
  headers: [
    [":method", "GET"],
    [":path", "/a"],
    [":authority", "web"],
  ],
  properties: [],
  timeNanos: 1n,
};

for (const [label, path] of [
  ["release", RELEASE_WASM],
  ["debug", DEBUG_WASM],
] as const) {
  describe(`FilterModule (${label} build)`, () => {
    it("a released handle, and handle 0 (no configuration), evaluate to an empty result", () => {
      const filter = FilterModule.load(path);
      const configured = filter.configure("{}");
      assert.ok("handle" in configured, JSON.stringify(configured));
      assert.ok(filter.evaluate(configured.handle, REQUEST, false).length > 0, "a held configuration evaluates");
      filter.release(configured.handle);
      assert.equal(filter.evaluate(configured.handle, REQUEST, false).length, 0);
      assert.equal(filter.evaluate(0, REQUEST, false).length, 0);
    });
  });
}
