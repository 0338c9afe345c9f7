// Loaded into a daemon under test with NODE_OPTIONS="--import <this file>"
// (test/e2e/safety_net.test.ts): an upstream request whose head carries
// `x-inject-fault: uncaught` throws inside Node's delivery of its response,
// before the proxy's response callback runs. That is the shape of the bug
// issue 25 found (a throw inside the response callback, which ended the
// agent): a stand-in for any bug in a request path, which the process-wide
// safety net must contain. Nothing else is changed.
import { ClientRequest } from "node:http";

const emit = ClientRequest.prototype.emit;
ClientRequest.prototype.emit = function (event, ...args) {
  if (event === "response" && typeof this._header === "string" && /\r\nx-inject-fault: uncaught\r\n/i.test(this._header)) {
    throw new Error("injected fault in a request path");
  }
  return emit.call(this, event, ...args);
};
