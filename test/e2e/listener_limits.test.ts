import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type LocalMesh, startLocalMesh } from "../../host/demo/local_mesh.ts";
import { type RawClient, openRawClient } from "../support/raw_client.ts";
import { HUB_RULES, sidecarConfig, stats, waitFor } from "./sidecar_support.ts";

// Issue 15 item 4: a real sidecar process with small limits; slow clients,
// connection floods and request floods are cut at those limits while
// legitimate requests keep succeeding. Counts are bounded; the only times
// asserted are the deadlines under test, with tens of seconds of margin.

const HEADER_READ_TIMEOUT_S = 2;
const IDLE_TIMEOUT_S = 3;
const MAX_CONNECTIONS = 40;
const MAX_REQUESTS = 8;
const MARGIN_MS = 60_000;

/** One request on a fresh connection; the status, or "closed". */
async function request(port: number, path = "/pets/7"): Promise<number | "closed"> {
  const c = await openRawClient(port, `GET ${path} HTTP/1.1\r\nHost: petstore\r\nConnection: close\r\n\r\n`);
  await c.closed;
  const m = /^HTTP\/1\.1 (\d{3})/.exec(c.data);
  return m ? Number(m[1]) : "closed";
}

const withinDeadline = (what: string, p: Promise<unknown>) =>
  Promise.race([
    p,
    new Promise((_, reject) => {
      setTimeout(() => reject(new Error(`${what}: not within ${MARGIN_MS} ms`)), MARGIN_MS).unref();
    }),
  ]);

describe("listener limits (issue 15)", { timeout: 600_000 }, () => {
  let mesh: LocalMesh;
  let port: number;
  const clients: RawClient[] = [];
  const counter = async (name: string) => (await stats(mesh.adminUrl)).get(`listener.inbound.${name}`) ?? 0;

  before(async () => {
    mesh = await startLocalMesh({
      hubConfig: HUB_RULES,
      sidecarConfig: sidecarConfig("FAIL_OPEN"),
      agentArgs: [
        "--headerReadTimeout",
        `${HEADER_READ_TIMEOUT_S}s`,
        "--idleTimeout",
        `${IDLE_TIMEOUT_S}s`,
        "--maxConnections",
        String(MAX_CONNECTIONS),
        "--maxConcurrentRequests",
        String(MAX_REQUESTS),
      ],
    });
    port = mesh.sidecar.listening.inbound;
  });
  after(async () => {
    for (const c of clients) c.socket.destroy();
    await mesh?.stop();
  });

  it("slowloris: connections that trickle their headers get 408 at the header read timeout; others are served meanwhile", async () => {
    const before = await counter("header_timeouts");
    const slow = await Promise.all(Array.from({ length: 30 }, () => openRawClient(port, "GET /pets/7 HTTP/1.1\r\nHost: petstore\r\n")));
    clients.push(...slow);
    // One more header line every 500 ms: activity, but never the end of the headers.
    const trickle = setInterval(() => {
      for (const c of slow) if (!c.isClosed) c.socket.write(`X-Slow-${Date.now()}: 1\r\n`);
    }, 500);
    try {
      for (let i = 0; i < 5; i++) assert.equal(await request(port), 200, "a legitimate request during the slowloris");
      await withinDeadline("every slow connection closed", Promise.all(slow.map((c) => c.closed)));
    } finally {
      clearInterval(trickle);
    }
    for (const c of slow) assert.match(c.data, /^HTTP\/1\.1 408 /, "answered 408 Request Timeout");
    assert.equal((await counter("header_timeouts")) - before, slow.length);
    assert.equal(mesh.app.seen.filter((s) => Object.keys(s.headers).some((h) => h.startsWith("x-slow-"))).length, 0, "no slow request reached the app");
    assert.equal(await request(port), 200);
  });

  it("a silent connection is closed at the header read timeout too", async () => {
    const c = await openRawClient(port);
    clients.push(c);
    await withinDeadline("silent connection closed", c.closed);
    assert.match(c.data, /^HTTP\/1\.1 408 /);
  });

  it("connection flood: never more than maxConnections open; idle ones make room, so a new client still gets in", async () => {
    const cutCount = async () => (await counter("connections_refused")) + (await counter("connections_evicted")) + (await counter("header_timeouts"));
    const cutBefore = await cutCount();
    const flood: RawClient[] = [];
    for (let i = 0; i < 120; i++) {
      flood.push(await openRawClient(port));
      if (i % 20 === 19) assert.ok((await counter("connections")) <= MAX_CONNECTIONS + 1, "open connections stay at the limit");
    }
    clients.push(...flood);
    assert.equal(await request(port), 200, "a legitimate client during the flood");
    // Each flood connection beyond the limit was evicted (or, on a slow machine, already timed out).
    const cut = (await cutCount()) - cutBefore;
    assert.ok(cut >= 120 + 1 - MAX_CONNECTIONS, `${cut} connections cut`);
    assert.ok((await counter("connections_evicted")) > 0, "idle connections made room");
    await withinDeadline("the rest closed at the header read timeout", Promise.all(flood.map((c) => c.closed)));
    assert.equal(await waitFor("no connection left open", async () => ((await counter("connections")) === 0 ? true : undefined), MARGIN_MS), true);
  });

  it("request flood: requests over maxConcurrentRequests get 503 at once; those admitted complete", async () => {
    const before = await counter("requests_refused");
    // The app holds each answer 15 s, so the first MAX_REQUESTS are still in flight when the rest arrive.
    const statuses = await Promise.all(Array.from({ length: 20 }, () => request(port, "/pets/7?delay=15000")));
    const ok = statuses.filter((s) => s === 200).length;
    const refused = statuses.filter((s) => s === 503).length;
    assert.equal(ok + refused, 20, `statuses: ${statuses.join(",")}`);
    assert.equal(ok, MAX_REQUESTS);
    assert.equal((await counter("requests_refused")) - before, refused);
    assert.equal(await request(port), 200, "served again once the flood is over");
  });

  it("a kept-alive connection is closed after the idle timeout", async () => {
    const before = await counter("idle_timeouts");
    const c = await openRawClient(port, "GET /pets/7 HTTP/1.1\r\nHost: petstore\r\n\r\n");
    clients.push(c);
    await withinDeadline("idle connection closed", c.closed);
    assert.match(c.data, /^HTTP\/1\.1 200 /);
    assert.equal((await counter("idle_timeouts")) - before, 1);
  });
});
