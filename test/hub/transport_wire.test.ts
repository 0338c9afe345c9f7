// HubTransport's gRPC-over-HTTP/2 client against a hub that speaks the wire by
// hand (real loopback sockets): what goes on the wire, and what each way a
// hub or the network can fail becomes (status, message prefix, retried or
// not), as the gRPC HTTP/2 protocol maps it.
import assert from "node:assert/strict";
import { createServer, type Socket, connect as netConnect } from "node:net";
import { after, afterEach, describe, it } from "node:test";
import { CONNECT_ERROR_PREFIX, TIMEOUT_PREFIX } from "../../host/hub/attempt_status.ts";
import { parseClusters } from "../../host/hub/clusters.ts";
import { type FailedAttempt, HubTransport } from "../../host/hub/transport.ts";
import { GRPC_CODES } from "../../host/wire/status_codes.ts";
import { grpcCall, HUB_SERVICE, retryPolicy } from "./support/peers.ts";
import { answerOk, framed, RawHub, RST } from "./support/raw_hub.ts";

const MESSAGE = new Uint8Array([0x1a, 0x03, 0x61, 0x2d, 0x31]);

describe("HubTransport on the HTTP/2 wire", () => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  after(async () => {
    for (const c of cleanups.reverse()) await c();
  });
  const transportTo = (target: string, failed: FailedAttempt[] = [], connection?: ConstructorParameters<typeof HubTransport>[0]["connection"]) => {
    const transport = new HubTransport({ clusters: parseClusters([`hub_server=${target}`]), onAttemptFailed: (a) => failed.push(a), connection });
    cleanups.push(() => transport.close());
    return transport;
  };
  const rawHub = async (behaviour: Parameters<typeof RawHub.start>[0]) => {
    const hub = await RawHub.start(behaviour);
    cleanups.push(() => hub.close());
    return hub;
  };

  it("sends one framed message with the gRPC headers, the deadline as grpc-timeout, -bin metadata base64, no retry policy", async () => {
    const hub = await rawHub((stream) => answerOk(stream, new Uint8Array([8, 1])));
    const transport = transportTo(hub.target);
    const result = await transport.call(
      grpcCall({
        message: MESSAGE,
        timeoutMs: 1500,
        metadata: [retryPolicy(2), ["X-Request-Id", "abc"], ["x-trace-bin", "\x01\x02\xff"], ["x-multi", "a"], ["x-multi", "b"]],
      }),
    );
    assert.deepEqual(result, { ok: true, message: new Uint8Array([8, 1]), attempts: 1 });
    const { headers, body } = hub.requests[0];
    assert.equal(headers[":method"], "POST");
    assert.equal(headers[":path"], `/${HUB_SERVICE}/Check`);
    assert.equal(headers[":scheme"], "http");
    assert.equal(headers[":authority"], hub.target);
    assert.equal(headers["content-type"], "application/grpc");
    assert.equal(headers.te, "trailers");
    assert.equal(headers["grpc-timeout"], "1500m");
    assert.equal(headers["x-request-id"], "abc");
    assert.equal(headers["x-trace-bin"], Buffer.from([1, 2, 0xff]).toString("base64"));
    assert.equal(headers["x-multi"], "a, b");
    assert.equal(headers["x-mesh-retry-policy"], undefined);
    assert.deepEqual(body, framed(MESSAGE));
  });

  it("metadata gRPC does not allow fails the call before any attempt", async () => {
    const hub = await rawHub((stream) => answerOk(stream, MESSAGE));
    const transport = transportTo(hub.target);
    const result = await transport.call(grpcCall({ metadata: [["x-note", "caf\u00e9"]] }));
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.code, GRPC_CODES.INTERNAL);
    assert.match(!result.ok ? result.message : "", /^hub call metadata refused: metadata value of "x-note"/);
    assert.equal(result.attempts, 0);
    assert.equal(hub.requests.length, 0);
  });

  it("a trailers-only error is the hub's status, percent-decoded, not retried when final", async () => {
    const hub = await rawHub((stream) =>
      stream.respond(
        { ":status": 200, "content-type": "application/grpc", "grpc-status": "7", "grpc-message": "not%20you%3A%20%E2%9C%8B" },
        { endStream: true },
      ),
    );
    const failed: FailedAttempt[] = [];
    const result = await transportTo(hub.target, failed).call(grpcCall({ metadata: [retryPolicy(2, 1, 1)] }));
    assert.deepEqual(result, { ok: false, code: GRPC_CODES.PERMISSION_DENIED, message: "not you: \u270b", attempts: 1 });
  });

  it("HTTP 503 without grpc-status: UNAVAILABLE `Received HTTP status code 503`, answered (no connect-error prefix), retried", async () => {
    let n = 0;
    const hub = await rawHub((stream) => {
      if (n++ === 0) {
        stream.respond({ ":status": 503, "content-type": "text/plain" });
        stream.end("overloaded");
      } else answerOk(stream, MESSAGE);
    });
    const failed: FailedAttempt[] = [];
    const result = await transportTo(hub.target, failed).call(grpcCall({ metadata: [retryPolicy(1, 1, 1)] }));
    assert.deepEqual(result, { ok: true, message: MESSAGE, attempts: 2 });
    assert.deepEqual(failed[0].status, { code: GRPC_CODES.UNAVAILABLE, message: "Received HTTP status code 503", retryable: true });
  });

  for (const [http, code] of [
    [401, GRPC_CODES.UNAUTHENTICATED],
    [403, GRPC_CODES.PERMISSION_DENIED],
    [404, GRPC_CODES.UNIMPLEMENTED],
    [400, GRPC_CODES.INTERNAL],
    [418, GRPC_CODES.UNKNOWN],
  ] as const) {
    it(`HTTP ${http} (headers only) maps to gRPC code ${code}`, async () => {
      const hub = await rawHub((stream) => stream.respond({ ":status": http }, { endStream: true }));
      const result = await transportTo(hub.target).call(grpcCall());
      assert.deepEqual(result, { ok: false, code, message: `Received HTTP status code ${http}`, attempts: 1 });
    });
  }

  it("a stream reset before any answer (REFUSED_STREAM): connect-error prefix, retried on the same connection", async () => {
    let n = 0;
    const hub = await rawHub((stream) => (n++ === 0 ? stream.close(RST.NGHTTP2_REFUSED_STREAM) : answerOk(stream, MESSAGE)));
    const failed: FailedAttempt[] = [];
    const result = await transportTo(hub.target, failed).call(grpcCall({ metadata: [retryPolicy(1, 1, 1)] }));
    assert.deepEqual(result, { ok: true, message: MESSAGE, attempts: 2 });
    assert.equal(failed[0].status.message, `${CONNECT_ERROR_PREFIX}. reset reason: connection failure, transport failure reason: Stream refused by server`);
    assert.deepEqual(
      hub.requests.map((r) => r.connection),
      [1, 1],
    );
  });

  const CONNECT = `${CONNECT_ERROR_PREFIX}. reset reason: connection failure, transport failure reason: `;
  for (const [name, rst, code, message] of [
    ["INTERNAL_ERROR", RST.NGHTTP2_INTERNAL_ERROR, GRPC_CODES.UNAVAILABLE, `${CONNECT}Received RST_STREAM with code 2`],
    ["CANCEL", RST.NGHTTP2_CANCEL, GRPC_CODES.UNAVAILABLE, `${CONNECT}Call cancelled by the server`],
    ["ENHANCE_YOUR_CALM", RST.NGHTTP2_ENHANCE_YOUR_CALM, GRPC_CODES.RESOURCE_EXHAUSTED, "Bandwidth exhausted or memory limit exceeded"],
    ["INADEQUATE_SECURITY", RST.NGHTTP2_INADEQUATE_SECURITY, GRPC_CODES.PERMISSION_DENIED, "Protocol not secure enough"],
  ] as const) {
    it(`a stream reset with ${name} maps as the protocol says (code ${code})`, async () => {
      const hub = await rawHub((stream) => stream.close(rst));
      const result = await transportTo(hub.target).call(grpcCall());
      assert.deepEqual(result, { ok: false, code, message, attempts: 1 });
    });
  }

  it("a compressed response message is refused (identity only) and grpc-accept-encoding says so", async () => {
    const hub = await rawHub((stream) => {
      stream.respond({ ":status": 200, "content-type": "application/grpc", "grpc-encoding": "gzip" }, { waitForTrailers: true });
      stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
      stream.end(framed(MESSAGE, true));
    });
    const result = await transportTo(hub.target).call(grpcCall());
    assert.equal(hub.requests[0].headers["grpc-accept-encoding"], "identity");
    assert.deepEqual(result, {
      ok: false,
      code: GRPC_CODES.INTERNAL,
      message: "Received a compressed message; this client accepts identity encoding only",
      attempts: 1,
    });
  });

  it("OK without a message, and OK with two messages, are UNIMPLEMENTED (a unary call has exactly one)", async () => {
    let n = 0;
    const hub = await rawHub((stream) => {
      stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
      stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
      stream.end(n++ === 0 ? Buffer.alloc(0) : Buffer.concat([framed(MESSAGE), framed(MESSAGE)]));
    });
    const transport = transportTo(hub.target);
    assert.deepEqual(await transport.call(grpcCall()), { ok: false, code: GRPC_CODES.UNIMPLEMENTED, message: "No message received", attempts: 1 });
    assert.deepEqual(await transport.call(grpcCall()), { ok: false, code: GRPC_CODES.UNIMPLEMENTED, message: "Too many responses received", attempts: 1 });
  });

  it("an HTTP/2 hub that never answers: the deadline ends the attempt, the stream is cancelled on the wire, the connection is kept", async () => {
    const hub = await rawHub(() => {});
    const transport = transportTo(hub.target);
    const result = await transport.call(grpcCall({ timeoutMs: 300, metadata: [retryPolicy(1, 1, 1)] }));
    assert.deepEqual(result, { ok: false, code: GRPC_CODES.UNAVAILABLE, message: TIMEOUT_PREFIX, attempts: 2 });
    await waitUntil(() => hub.aborted === 2);
    assert.deepEqual(
      hub.requests.map((r) => r.connection),
      [1, 1],
    );
  });

  it("the hub drops the connection mid-call: UNAVAILABLE `Connection dropped` (answered), the next call connects again", async () => {
    let n = 0;
    const hub = await rawHub((stream) => {
      if (n++ > 0) return answerOk(stream, MESSAGE);
      stream.respond({ ":status": 200, "content-type": "application/grpc" });
      setTimeout(() => hub.dropConnections(), 20);
    });
    const transport = transportTo(hub.target);
    const dropped = await transport.call(grpcCall());
    assert.equal(dropped.ok, false);
    assert.equal(!dropped.ok && dropped.code, GRPC_CODES.UNAVAILABLE);
    assert.match(!dropped.ok ? dropped.message : "", /^Connection dropped/);
    assert.deepEqual(await transport.call(grpcCall()), { ok: true, message: MESSAGE, attempts: 1 });
    assert.equal(hub.accepted, 2);
  });

  it("GOAWAY: the call the hub accepted finishes; the next call opens a new connection", async () => {
    const hub = await rawHub((stream, request) => {
      if (request.connection === 1) stream.session?.goaway(RST.NGHTTP2_NO_ERROR);
      answerOk(stream, MESSAGE);
    });
    const transport = transportTo(hub.target);
    assert.deepEqual(await transport.call(grpcCall()), { ok: true, message: MESSAGE, attempts: 1 });
    assert.deepEqual(await transport.call(grpcCall()), { ok: true, message: MESSAGE, attempts: 1 });
    assert.deepEqual(
      hub.requests.map((r) => r.connection),
      [1, 2],
    );
  });

  it("a hub that goes away and comes back on the same port is used again; meanwhile calls fail fast with the last connect error", async () => {
    let hub = await RawHub.start((stream) => answerOk(stream, MESSAGE));
    const port = hub.port;
    cleanups.push(() => hub.close());
    const transport = transportTo(hub.target);
    assert.equal((await transport.call(grpcCall())).ok, true);
    await hub.close();
    const down = await transport.call(grpcCall({ metadata: [retryPolicy(1, 1, 1)] }));
    assert.equal(down.ok, false);
    assert.equal(down.attempts, 2);
    assert.match(!down.ok ? down.message : "", new RegExp(`^${CONNECT_ERROR_PREFIX}.*No connection established. Last error: Error: connect ECONNREFUSED`));
    hub = await RawHub.start((stream) => answerOk(stream, MESSAGE), undefined, port);
    const started = performance.now();
    let result = await transport.call(grpcCall());
    while (!result.ok && performance.now() - started < 60_000) {
      await new Promise((r) => setTimeout(r, 20));
      result = await transport.call(grpcCall());
    }
    assert.equal(result.ok, true);
    // The reconnection backoff is capped at 1 s; 5 s of margin for a loaded machine.
    assert.ok(performance.now() - started < 6000, `recovered after ${performance.now() - started} ms`);
  });

  it("keep-alive: a hub that vanishes without closing (no FIN, no RST) is dropped when a PING goes unanswered; the next call reconnects", async () => {
    const hub = await rawHub((stream) => answerOk(stream, MESSAGE));
    // A TCP relay in front of the hub that can freeze: bytes stop flowing both ways, the sockets stay open.
    let frozen = false;
    const relayed = new Set<Socket>();
    let clientClosed = 0;
    const relay = createServer((client) => {
      const upstream = netConnect(hub.port, "127.0.0.1");
      relayed.add(client).add(upstream);
      client.on("data", (d) => frozen || upstream.write(d));
      upstream.on("data", (d) => frozen || client.write(d));
      client.on("close", () => {
        clientClosed++;
        upstream.destroy();
      });
      upstream.on("close", () => client.destroy());
      client.on("error", () => {});
      upstream.on("error", () => {});
    });
    await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => (relayed.forEach((s) => s.destroy()), relay.close(() => resolve()))));
    const transport = transportTo(`127.0.0.1:${(relay.address() as { port: number }).port}`, [], { keepaliveTimeMs: 200, keepaliveTimeoutMs: 300 });
    assert.equal((await transport.call(grpcCall())).ok, true);
    frozen = true;
    await waitUntil(() => clientClosed === 1);
    frozen = false;
    assert.deepEqual(await transport.call(grpcCall()), { ok: true, message: MESSAGE, attempts: 1 });
    assert.equal(hub.accepted, 2, "a second connection");
  });

  it("close() cancels an attempt in flight on the wire", async () => {
    const hub = await rawHub(() => {});
    const transport = transportTo(hub.target);
    const pending = transport.call(grpcCall({ metadata: [retryPolicy(3)] }));
    await waitUntil(() => hub.requests.length === 1);
    transport.close();
    assert.deepEqual(await pending, { ok: false, code: GRPC_CODES.CANCELLED, message: "hub transport closed", attempts: 1 });
    await waitUntil(() => hub.aborted === 1 || hub.sessions.size === 0);
  });
});

async function waitUntil(ok: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error("condition not reached");
    await new Promise((r) => setTimeout(r, 5));
  }
}
