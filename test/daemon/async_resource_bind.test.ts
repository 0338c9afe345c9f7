import assert from "node:assert/strict";
import { AsyncResource } from "node:async_hooks";
import { spawnSync } from "node:child_process";
import { test } from "node:test";

// What a bound function does, observed in a child process (the replacement is process-wide):
// the async scope it runs in, its `this`, arguments and result, its length and asyncResource, a bad argument.
// The stores' names are constants because test/deploy/system_tools.test.ts takes a literal
// given to a call named `run` for a program the tests start.
const scenario = (install: boolean) => {
  const code = `
    import { AsyncLocalStorage, AsyncResource, executionAsyncId } from "node:async_hooks";
    import { installPlainAsyncResourceBind } from "./host/daemon/async_resource_bind.ts";
    const installed = ${install} ? installPlainAsyncResourceBind() : false;
    const store = new AsyncLocalStorage();
    const [OUTER, INNER, STATIC, OTHER] = ["outer", "inner", "static", "other"];
    const resource = store.run(OUTER, () => new AsyncResource("test"));
    const seen = [];
    function fn(a, b) { seen.push([store.getStore(), executionAsyncId() === resource.asyncId(), this?.name ?? null, a, b]); return a + b; }
    const bound = resource.bind(fn);
    const withThis = resource.bind(fn, { name: "given" });
    const results = store.run(INNER, () => [bound.call({ name: "caller" }, 1, 2), withThis.call({ name: "caller" }, 3, 4)]);
    const staticBound = store.run(STATIC, () => AsyncResource.bind(fn));
    store.run(OTHER, () => staticBound(5, 6));
    let threw = "";
    try { resource.bind(42); } catch (e) { threw = e.constructor.name; }
    process.stdout.write(JSON.stringify({ installed, results, seen, length: bound.length, resource: bound.asyncResource === resource, threw }));
  `;
  const r = spawnSync(process.execPath, ["--no-deprecation", "--import", "tsx", "--input-type=module", "-e", code], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as Record<string, unknown>;
};

test("the plain AsyncResource#bind behaves as Node's", () => {
  const node = scenario(false);
  const plain = scenario(true);
  assert.equal(plain.installed, true, "this Node's bind has the deprecated accessor the plain one replaces");
  assert.deepEqual({ ...plain, installed: false }, node);
  // And what that is: run in the resource's scope, with the caller's `this` or the one given.
  assert.deepEqual(plain.results, [3, 7]);
  assert.deepEqual(plain.seen, [
    ["outer", true, "caller", 1, 2],
    ["outer", true, "given", 3, 4],
    ["static", false, null, 5, 6],
  ]);
  assert.equal(plain.length, 2);
  assert.equal(plain.resource, true);
  assert.equal(plain.threw, "TypeError");
});

test("Node's own bind is left as it is until a program installs the plain one", () => {
  const bound = new AsyncResource("test").bind(() => 0);
  assert.equal(typeof Object.getOwnPropertyDescriptor(bound, "asyncResource")?.get, "function");
});
