// HubTransport's retry policy on a scripted in-process hub (real gRPC on
// loopback) with a fake clock and random source: attempts, waits, jitter
// bounds, which codes are retried, metadata and bytes on the wire.
import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { TIMEOUT_PREFIX } from "../../host/hub/attempt_status.ts";
import { parseClusters } from "../../host/hub/clusters.ts";
import { type FailedAttempt, HubTransport } from "../../host/hub/transport.ts";
import { GRPC_CODES } from "../../host/wire/status_codes.ts";
import { ALMOST_ONE, FakeClock, sequence } from "./support/fake_clock.ts";
import { grpcCall, retryPolicy, ScriptedHub } from "./support/peers.ts";

const UNAVAILABLE = { fail: { code: GRPC_CODES.UNAVAILABLE, details: "hub is overloaded" } };

describe("HubTransport retries (fake clock)", () => {
  let hub: ScriptedHub;
  let clock: FakeClock;
  let transport: HubTransport;
  let failed: FailedAttempt[];
  const open: HubTransport[] = [];
  const make = (random = sequence(0.5)) => {
    clock = new FakeClock();
    failed = [];
    transport = new HubTransport({
      clusters: parseClusters([`hub_server=${hub.target}`]),
      clock,
      random,
      onAttemptFailed: (a) => failed.push(a),
    });
    open.push(transport);
    return transport;
  };

  before(async () => {
    hub = await ScriptedHub.start();
  });
  beforeEach(() => {
    hub.script = [];
    hub.received.length = 0;
  });
  after(() => {
    for (const t of open) t.close();
    hub.close();
  });

  for (const maxRetry of [0, 1, 2, 3]) {
    it(`maxRetry ${maxRetry}: ${maxRetry + 1} attempts, ${maxRetry} waits, then the last failure`, async () => {
      make(sequence(0));
      hub.script = Array.from({ length: 10 }, () => UNAVAILABLE);
      const result = await transport.call(grpcCall({ metadata: [retryPolicy(maxRetry)] }));
      assert.deepEqual(result, { ok: false, code: GRPC_CODES.UNAVAILABLE, message: "hub is overloaded", attempts: maxRetry + 1 });
      assert.equal(hub.received.length, maxRetry + 1);
      assert.deepEqual(clock.sleeps, Array(maxRetry).fill(80));
      assert.equal(failed.length, maxRetry + 1);
      assert.deepEqual(
        failed.map((f) => f.retryInMs),
        [...Array(maxRetry).fill(80), undefined],
      );
      assert.equal(clock.pending(), 0, "every deadline timer is cancelled");
    });

    it(`maxRetry ${maxRetry}: a success on the last attempt is delivered`, async () => {
      make();
      hub.script = [...Array.from({ length: maxRetry }, () => UNAVAILABLE), { respond: new Uint8Array([8, 1]) }];
      const result = await transport.call(grpcCall({ metadata: [retryPolicy(maxRetry)] }));
      assert.deepEqual(result, { ok: true, message: new Uint8Array([8, 1]), attempts: maxRetry + 1 });
      assert.equal(clock.sleeps.length, maxRetry);
    });
  }

  it("jitter: 80 ms exactly, then 80–160, 80–320, 80–640, then capped at 1000", async () => {
    hub.script = Array.from({ length: 12 }, () => UNAVAILABLE);
    make(sequence(0));
    await transport.call(grpcCall({ metadata: [retryPolicy(5)] }));
    assert.deepEqual(clock.sleeps, [80, 80, 80, 80, 80], "floor of every range is base");
    hub.script = Array.from({ length: 12 }, () => UNAVAILABLE);
    make(sequence(ALMOST_ONE));
    await transport.call(grpcCall({ metadata: [retryPolicy(5)] }));
    assert.deepEqual(clock.sleeps, [80, 160, 320, 640, 1000], "top of every range, capped at max");
  });

  it("jitter draws are uniform integers inside the range", async () => {
    hub.script = Array.from({ length: 12 }, () => UNAVAILABLE);
    make(sequence(0.5, 0.5, 0.5, 0.25));
    await transport.call(grpcCall({ metadata: [retryPolicy(4, 100, 500)] }));
    // [100,100], [100,200], [100,400], [100,500]
    assert.deepEqual(clock.sleeps, [100, 150, 250, 200]);
  });

  const final = [
    ["INVALID_ARGUMENT", GRPC_CODES.INVALID_ARGUMENT, "Request could not be processed due to invalid attributes"],
    ["PERMISSION_DENIED", GRPC_CODES.PERMISSION_DENIED, "no"],
    ["UNAUTHENTICATED", GRPC_CODES.UNAUTHENTICATED, "who are you"],
    ["NOT_FOUND", GRPC_CODES.NOT_FOUND, "nothing here"],
    ["RESOURCE_EXHAUSTED", GRPC_CODES.RESOURCE_EXHAUSTED, "message too large"],
    ["FAILED_PRECONDITION", GRPC_CODES.FAILED_PRECONDITION, "not now"],
    ["UNIMPLEMENTED", GRPC_CODES.UNIMPLEMENTED, "no such method"],
  ] as const;
  for (const [name, code, details] of final) {
    it(`${name} is the hub's answer: returned at once, not retried`, async () => {
      make();
      hub.script = [{ fail: { code, details } }, UNAVAILABLE, UNAVAILABLE];
      const result = await transport.call(grpcCall({ metadata: [retryPolicy(3)] }));
      assert.deepEqual(result, { ok: false, code, message: details, attempts: 1 });
      assert.deepEqual(clock.sleeps, []);
    });
  }

  for (const [name, code] of [
    ["UNKNOWN", GRPC_CODES.UNKNOWN],
    ["INTERNAL", GRPC_CODES.INTERNAL],
    ["ABORTED", GRPC_CODES.ABORTED],
    ["DEADLINE_EXCEEDED", GRPC_CODES.DEADLINE_EXCEEDED],
  ] as const) {
    it(`${name} from the hub is retried`, async () => {
      make();
      hub.script = [{ fail: { code, details: "transient" } }, { echo: true }];
      const result = await transport.call(grpcCall({ metadata: [retryPolicy(1)] }));
      assert.equal(result.ok, true);
      assert.equal(result.attempts, 2);
    });
  }

  it("a status the hub sent keeps its message (no connect-error prefix)", async () => {
    make();
    hub.script = [UNAVAILABLE];
    const result = await transport.call(grpcCall());
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.message, "hub is overloaded");
  });

  it("every attempt sends the same bytes (same deduplication id) and the retry policy is not forwarded", async () => {
    make();
    hub.script = [UNAVAILABLE, UNAVAILABLE, { echo: true }];
    const message = new Uint8Array([0x1a, 0x05, 0x72, 0x2d, 0x31, 0x2d, 0x37]);
    const result = await transport.call(grpcCall({ message, metadata: [retryPolicy(2), ["x-request-id", "abc"], ["x-trace-bin", "\x01\x02"]] }));
    assert.deepEqual(result, { ok: true, message, attempts: 3 });
    assert.equal(hub.received.length, 3);
    for (const r of hub.received) {
      assert.deepEqual(new Uint8Array(r.message), message);
      assert.equal(r.metadata["x-mesh-retry-policy"], undefined);
      assert.equal(r.metadata["x-request-id"], "abc");
      assert.deepEqual(r.metadata["x-trace-bin"], Buffer.from([1, 2]));
    }
  });

  it("calls of different methods and metadata on one transport each carry their own, however they alternate", async () => {
    make();
    const calls = [
      grpcCall({ metadata: [["x-request-id", "a"]] }),
      grpcCall({ metadata: [["x-request-id", "b"]] }),
      grpcCall({ method: "Report", metadata: [["x-request-id", "a"]] }),
      grpcCall({
        metadata: [
          ["x-request-id", "a"],
          ["x-trace-bin", "\x01"],
        ],
      }),
      grpcCall({ metadata: [] }),
      grpcCall({ metadata: [["x-request-id", "a"]], timeoutMs: 1234 }),
      grpcCall({ metadata: [["x-request-id", "b"]] }),
      grpcCall({ metadata: [["x-request-id", "bad\nvalue"]] }),
      grpcCall({ metadata: [["x-request-id", "a"]] }),
    ];
    const results = [];
    for (const call of calls) results.push(await transport.call(call));
    assert.deepEqual(
      results.map((r) => r.ok),
      [true, true, true, true, true, true, true, false, true],
    );
    assert.match(!results[7].ok ? results[7].message : "", /hub call metadata refused: metadata value of "x-request-id"/);
    assert.deepEqual(
      hub.received.map((r) => [r.method, r.metadata["x-request-id"], r.metadata["x-trace-bin"]]),
      [
        ["Check", "a", undefined],
        ["Check", "b", undefined],
        ["Report", "a", undefined],
        ["Check", "a", Buffer.from([1])],
        ["Check", undefined, undefined],
        ["Check", "a", undefined],
        ["Check", "b", undefined],
        ["Check", "a", undefined],
      ],
    );
  });

  it("Report goes to /mesh.hub.v1.Hub/Report", async () => {
    make();
    await transport.call(grpcCall({ method: "Report" }));
    assert.equal(hub.received[0].method, "Report");
  });

  it("an unknown cluster fails fast with UNAVAILABLE, naming the cluster and the flag", async () => {
    make();
    const result = await transport.call(grpcCall({ cluster: "policy_hub", metadata: [retryPolicy(3)] }));
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.code, GRPC_CODES.UNAVAILABLE);
    assert.match(!result.ok ? result.message : "", /unknown cluster "policy_hub" \(configured: hub_server\); pass --cluster policy_hub=HOST:PORT/);
    assert.equal(result.attempts, 0);
    assert.equal(hub.received.length, 0);
    assert.deepEqual(clock.sleeps, []);
  });

  it("each attempt gets its own deadline timer of timeoutMs; expiry is an upstream request timeout, retried", async () => {
    make();
    hub.script = [{ hang: true }, { hang: true }];
    const pending = transport.call(grpcCall({ timeoutMs: 250, metadata: [retryPolicy(1)] }));
    await waitUntil(() => hub.received.length === 1 && clock.pending() === 1);
    clock.advance(250);
    await waitUntil(() => hub.received.length === 2 && clock.pending() === 1);
    clock.advance(250);
    const result = await pending;
    assert.deepEqual(result, { ok: false, code: GRPC_CODES.UNAVAILABLE, message: TIMEOUT_PREFIX, attempts: 2 });
    assert.deepEqual(clock.deadlines, [250, 250]);
    assert.deepEqual(clock.sleeps, [80]);
    assert.deepEqual(
      failed.map((f) => [f.durationMs, f.retryInMs]),
      [
        [250, 80],
        [250, undefined],
      ],
    );
  });

  it("timeoutMs 0 means the 5000 ms default", async () => {
    make();
    await transport.call(grpcCall({ timeoutMs: 0 }));
    assert.deepEqual(clock.deadlines, [5000]);
  });

  it("close() ends calls in flight with CANCELLED and refuses new ones", async () => {
    make();
    hub.script = [{ hang: true }];
    const pending = transport.call(grpcCall({ metadata: [retryPolicy(3)] }));
    await waitUntil(() => hub.received.length === 1);
    transport.close();
    assert.deepEqual(await pending, { ok: false, code: GRPC_CODES.CANCELLED, message: "hub transport closed", attempts: 1 });
    const later = await transport.call(grpcCall());
    assert.equal(later.ok, false);
    assert.equal(later.attempts, 0);
  });
});

async function waitUntil(ok: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error("condition not reached");
    await new Promise((r) => setTimeout(r, 5));
  }
}
