// Loaded into a daemon under test with NODE_OPTIONS="--import <this file>"
// (test/e2e/safety_net.test.ts): an upstream request whose head carries
// `x-inject-fault: uncaught` throws inside the client's delivery of its
// response, before the proxy's response callback runs. That is the shape of
// the bug issue 25 found (a throw inside the response callback, which ended
// the agent): a stand-in for any bug in a request path, which the
// process-wide safety net must contain. Nothing else is changed.
//
// Two clients carry upstream requests: node:http's ClientRequest (mutual
// TLS upstreams) and the agent's own HTTP/1.1 client (host/wire/h1, plain
// upstreams), which runs each exchange's callbacks through its
// AsyncResource: the fault is injected in the first such call made while
// the response bytes of a marked socket are delivered.
import { AsyncResource } from "node:async_hooks";
import { ClientRequest } from "node:http";
import { Socket } from "node:net";

const FAULT = /\r\nx-inject-fault: uncaught\r\n/i;
const injected = () => new Error("injected fault in a request path");

const emit = ClientRequest.prototype.emit;
ClientRequest.prototype.emit = function (event, ...args) {
  if (event === "response" && typeof this._header === "string" && FAULT.test(this._header)) throw injected();
  return emit.call(this, event, ...args);
};

const marked = new WeakSet();
const write = Socket.prototype.write;
Socket.prototype.write = function (chunk, ...rest) {
  if (typeof chunk === "string" && FAULT.test(chunk)) marked.add(this);
  return write.call(this, chunk, ...rest);
};
let armed = false;
const socketEmit = Socket.prototype.emit;
Socket.prototype.emit = function (event, ...args) {
  if (event !== "data" || !marked.has(this)) return socketEmit.call(this, event, ...args);
  marked.delete(this);
  armed = true;
  try {
    return socketEmit.call(this, event, ...args);
  } finally {
    armed = false;
  }
};
const run = AsyncResource.prototype.runInAsyncScope;
AsyncResource.prototype.runInAsyncScope = function (fn, thisArg, ...args) {
  if (!armed) return run.call(this, fn, thisArg, ...args);
  armed = false;
  return run.call(this, () => {
    throw injected();
  });
};
