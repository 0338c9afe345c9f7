import { AsyncResource } from "node:async_hooks";

/**
 * Node 20 to 24 give every function `AsyncResource#bind` returns an
 * `asyncResource` accessor wrapped in `util.deprecate` (DEP0172). Each
 * wrapper's prototype is set to the accessor, a fresh closure per call, so
 * every bind makes a new hidden class; V8 keeps hidden classes in its old
 * generation, and through the closure's context the bound function and all
 * it reaches (for `ClientHttp2Session#request`, which binds once per
 * request: the stream, its listeners, the call's buffers) survive every
 * minor GC until the next full one. In the sidecar that was every hub
 * call: about 120 bytes per request promoted and a mark-compact every few
 * seconds under load; with a plain property 10 to 12, and no mark-compact
 * (docs/benchmarks.md, "The module's work in the agent").
 *
 * `installPlainAsyncResourceBind` (once per process, in a program that makes such calls) replaces
 * `bind` with the same function but an ordinary `asyncResource` property
 * (same value, no deprecation warning). A Node whose bind has no such
 * accessor is left alone.
 */
export function installPlainAsyncResourceBind(): boolean {
  const probe = Object.getOwnPropertyDescriptor(
    new AsyncResource("probe").bind(() => {}),
    "asyncResource",
  );
  if (!probe?.get) return false;
  AsyncResource.prototype.bind = plainBind;
  return true;
}

// The same function Node's bind makes: `fn` run in the resource's scope with
// the caller's `this`, or with `thisArg` when given; `length` is `fn`'s.
function plainBind<Func extends (...args: any[]) => any>(this: AsyncResource, fn: Func, thisArg?: ThisParameterType<Func>): Func {
  if (typeof fn !== "function") throw new TypeError(`The "fn" argument must be of type function. Received ${fn === null ? "null" : typeof fn}`);
  const resource = this;
  const bound =
    thisArg === undefined
      ? function (this: unknown, ...args: unknown[]) {
          return resource.runInAsyncScope(fn, this, ...args);
        }
      : resource.runInAsyncScope.bind(resource, fn, thisArg);
  Object.defineProperties(bound, {
    length: { configurable: true, enumerable: false, value: fn.length, writable: false },
    asyncResource: { configurable: true, enumerable: true, value: resource, writable: true },
  });
  return bound as unknown as Func;
}
