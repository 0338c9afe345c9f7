// HubTransport against real sockets and the real clock: a refused port, a
// hub that accepts and never answers, a Unix socket. Each failure must come
// after exactly 1 + maxRetry attempts, with the message prefix the module
// classifies by, within a bounded time.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { CONNECT_ERROR_PREFIX, TIMEOUT_PREFIX } from "../../host/hub/attempt_status.ts";
import { parseClusters } from "../../host/hub/clusters.ts";
import { type FailedAttempt, HubTransport } from "../../host/hub/transport.ts";
import { GRPC_CODES } from "../../host/wire/status_codes.ts";
import { closedPort, grpcCall, retryPolicy, ScriptedHub, startSilentServer } from "./support/peers.ts";
import { tempDir } from "../support/processes.ts";

describe("HubTransport on loopback sockets", () => {
  const cleanups: Array<() => unknown> = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it("connection refused: 1 + maxRetry attempts, connect-error prefix, bounded time", async () => {
    const port = await closedPort();
    const failed: FailedAttempt[] = [];
    const transport = new HubTransport({ clusters: parseClusters([`hub_server=127.0.0.1:${port}`]), onAttemptFailed: (a) => failed.push(a) });
    cleanups.push(() => transport.close());
    const started = performance.now();
    const result = await transport.call(grpcCall({ metadata: [retryPolicy(2, 50, 100)] }));
    const elapsed = performance.now() - started;
    assert.equal(result.ok, false);
    assert.equal(result.attempts, 3);
    assert.equal(!result.ok && result.code, GRPC_CODES.UNAVAILABLE);
    assert.ok(!result.ok && result.message.startsWith(`${CONNECT_ERROR_PREFIX}. reset reason: connection failure`), !result.ok ? result.message : "");
    assert.match(!result.ok ? result.message : "", /ECONNREFUSED|No connection established/);
    assert.equal(failed.length, 3);
    const waited = failed.reduce((sum, f) => sum + (f.retryInMs ?? 0), 0);
    assert.ok(waited >= 100 && waited <= 150, `waits ${waited}`);
    assert.ok(elapsed >= waited - 5 && elapsed < waited + 5000, `took ${elapsed} ms (a loaded machine gets 5 s of margin)`);
  });

  it("a silent hub (accepts, never answers), timeoutMs 200: timeout prefix after 1 + maxRetry attempts, bounded time", async () => {
    const silent = await startSilentServer();
    cleanups.push(() => silent.close());
    const transport = new HubTransport({ clusters: parseClusters([`hub_server=127.0.0.1:${silent.port}`]) });
    cleanups.push(() => transport.close());
    const started = performance.now();
    const result = await transport.call(grpcCall({ timeoutMs: 200, metadata: [retryPolicy(1, 50, 50)] }));
    const elapsed = performance.now() - started;
    assert.deepEqual(result, { ok: false, code: GRPC_CODES.UNAVAILABLE, message: TIMEOUT_PREFIX, attempts: 2 });
    assert.ok(silent.accepted() >= 1, "the transport did connect");
    // 2 × 200 ms + 50 ms wait, plus 5 s of margin for a loaded machine
    assert.ok(elapsed >= 440 && elapsed < 5450, `took ${elapsed} ms`);
  });

  it("answers over a Unix domain socket cluster", async () => {
    const path = join(tempDir("hub-unix-"), "hub.sock");
    const hub = await ScriptedHub.start(`unix://${path}`);
    cleanups.push(() => hub.close());
    const transport = new HubTransport({ clusters: parseClusters([`hub_server=unix://${path}`]) });
    cleanups.push(() => transport.close());
    const message = new Uint8Array([1, 2, 3]);
    assert.deepEqual(await transport.call(grpcCall({ message })), { ok: true, message, attempts: 1 });
  });

  it("one channel per cluster, reused across calls", async () => {
    const a = await ScriptedHub.start();
    const b = await ScriptedHub.start();
    cleanups.push(
      () => a.close(),
      () => b.close(),
    );
    const transport = new HubTransport({ clusters: parseClusters([`checks=${a.target}`, `reports=${b.target}`]) });
    cleanups.push(() => transport.close());
    for (let i = 0; i < 3; i++) {
      assert.equal((await transport.call(grpcCall({ cluster: "checks" }))).ok, true);
      assert.equal((await transport.call(grpcCall({ cluster: "reports", method: "Report" }))).ok, true);
    }
    assert.equal(a.received.length, 3);
    assert.deepEqual(
      b.received.map((r) => r.method),
      ["Report", "Report", "Report"],
    );
    const peers = new Set([...a.received, ...b.received].map((r) => r.peer));
    assert.equal(peers.size, 2, `one connection per cluster: ${[...peers]}`);
  });

  it("a cluster of several hubs: calls take them round robin, one connection each; a retry goes to the next", async () => {
    const hubs = await Promise.all([ScriptedHub.start(), ScriptedHub.start(), ScriptedHub.start()]);
    cleanups.push(...hubs.map((h) => () => h.close()));
    const transport = new HubTransport({ clusters: parseClusters([`hub_server=${hubs.map((h) => h.target).join(",")}`]) });
    cleanups.push(() => transport.close());
    for (let i = 0; i < 9; i++) assert.equal((await transport.call(grpcCall())).ok, true);
    assert.deepEqual(
      hubs.map((h) => h.received.length),
      [3, 3, 3],
    );
    for (const h of hubs) assert.equal(new Set(h.received.map((r) => r.peer)).size, 1, "one connection per hub, reused");

    hubs[0].script.push({ fail: { code: GRPC_CODES.UNAVAILABLE, details: "replica draining" } });
    const retried = await transport.call(grpcCall({ metadata: [retryPolicy(1, 1, 1)] }));
    assert.deepEqual([retried.ok, retried.attempts], [true, 2]);
    assert.deepEqual(
      hubs.map((h) => h.received.length),
      [4, 4, 3],
      "the retry went to the second hub",
    );
  });
});
