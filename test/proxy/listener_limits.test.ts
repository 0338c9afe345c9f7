import assert from "node:assert/strict";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { ListenerGuard } from "../../host/proxy/listener_limits.ts";
import { type RawClient, openRawClient } from "../support/raw_client.ts";

// The idle timeout is the guard's own sweep (not Node's keepAliveTimeout):
// a real HTTP server guarded as the connection manager guards it, real
// sockets. The deadline under test is short; waits have seconds of margin.
// A held response is released by the test, never by a timer, so no
// connection of the test goes idle before the test says so, however loaded
// the machine.

const IDLE_TIMEOUT_MS = 1_000;
const MARGIN_MS = 30_000;

const until = async (what: string, ok: () => boolean) => {
  const deadline = Date.now() + MARGIN_MS;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${MARGIN_MS} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const responses = (c: RawClient) => c.data.match(/HTTP\/1\.1 200 /g)?.length ?? 0;

describe("ListenerGuard's idle timeout", () => {
  const guard = new ListenerGuard({ headerReadTimeoutMs: 30_000, idleTimeoutMs: IDLE_TIMEOUT_MS, maxConnections: 0, maxConcurrentRequests: 0 });
  let server: Server;
  let port: number;
  const clients: RawClient[] = [];
  const held: Array<() => void> = [];

  before(async () => {
    server = createServer(guard.httpServerOptions(), (req, res) => {
      guard.admitRequest(req);
      res.on("close", () => guard.requestDone(req));
      if (req.url === "/hold") held.push(() => res.end("ok"));
      else res.end("ok");
    });
    guard.guardHttp(server, false);
    guard.guardAccepts(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    for (const release of held.splice(0)) release();
    for (const c of clients) c.socket.destroy();
    await new Promise((r) => server.close(r));
  });

  it("closes a kept-alive connection left without a request, counted, and sends no Keep-Alive header", async () => {
    const before = guard.stats.idleTimeouts;
    const c = await openRawClient(port);
    clients.push(c);
    c.socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    await until("idle connection closed", () => c.isClosed);
    assert.equal(responses(c), 1);
    assert.doesNotMatch(c.data, /keep-alive: timeout/i);
    assert.equal(guard.stats.idleTimeouts - before, 1);
  });

  it("leaves open a connection whose request is in flight, or whose next request has begun, for many idle timeouts", async () => {
    const before = guard.stats.idleTimeouts;
    const busy = await openRawClient(port);
    const starting = await openRawClient(port);
    clients.push(busy, starting);
    busy.socket.write("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n");
    starting.socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    await until("first response and the held request", () => responses(starting) === 1 && held.length === 1);
    // The next request's first bytes: from here it is the header read timeout's, not the idle timeout's.
    starting.socket.write("GET / HTTP/1.1\r\n");
    await sleep(IDLE_TIMEOUT_MS * 4);
    assert.equal(busy.isClosed, false, "a connection with a request in flight is not idle");
    assert.equal(starting.isClosed, false, "a connection sending its next request is not idle");
    assert.equal(guard.stats.idleTimeouts - before, 0);
    starting.socket.write("Host: x\r\n\r\n");
    for (const release of held.splice(0)) release();
    await until("the held and the second response", () => responses(busy) === 1 && responses(starting) === 2);
    // Both idle now: closed in turn.
    await until("both closed once idle", () => busy.isClosed && starting.isClosed);
    assert.equal(guard.stats.idleTimeouts - before, 2);
  });
});
