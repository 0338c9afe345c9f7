// DestinationRule connectionPool and outlierDetection as the data path
// applies them (host/proxy/cluster/connection_pool.ts, outlier_detection.ts): the
// state machines alone, time injected. End to end: test/e2e/circuit_breaking.test.ts.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConnectionPools, OVERFLOW_REPLY } from "../../host/proxy/cluster/connection_pool.ts";
import { type OutlierEvent, OutlierDetector } from "../../host/proxy/cluster/outlier_detection.ts";

describe("connection pool limits (Envoy circuit breakers for HTTP/1.1)", () => {
  it("maxConnections requests go at once, http1MaxPendingRequests wait, the next one overflows", async () => {
    const pools = new ConnectionPools();
    const limits = { maxConnections: 1, http1MaxPendingRequests: 1 };
    const first = pools.admit("c", limits);
    const second = pools.admit("c", limits);
    assert.ok(first instanceof Promise && second instanceof Promise);
    assert.equal(pools.admit("c", limits), "overflow");
    assert.deepEqual(pools.snapshot().c, { active: 1, pending: 1, overflows: 1 });
    let secondGranted = false;
    void second.then(() => (secondGranted = true));
    await Promise.resolve();
    assert.equal(secondGranted, false, "the pending request waits for the slot");
    (await first)();
    await second;
    assert.equal(secondGranted, true);
    assert.deepEqual(pools.snapshot().c, { active: 1, pending: 0, overflows: 1 });
    (await second)();
    assert.deepEqual(pools.snapshot().c, { active: 0, pending: 0, overflows: 1 });
  });

  it("clusters are counted apart; a release given twice frees one slot", async () => {
    const pools = new ConnectionPools();
    const limits = { maxConnections: 1, http1MaxPendingRequests: 0 };
    const a = pools.admit("a", limits);
    assert.ok(a instanceof Promise);
    assert.ok(pools.admit("b", limits) instanceof Promise);
    assert.equal(pools.admit("a", limits), "overflow");
    const release = await a;
    release();
    release();
    assert.equal(pools.snapshot().a.active, 0);
  });

  it("the overflow answer is Envoy's: 503 with x-envoy-overloaded", () => {
    assert.equal(OVERFLOW_REPLY.status, 503);
    assert.deepEqual(OVERFLOW_REPLY.headers, [["x-envoy-overloaded", "true"]]);
    assert.match(OVERFLOW_REPLY.body, /reset reason: overflow$/);
  });
});

describe("outlier detection", () => {
  const clock = () => {
    let t = 1_000_000;
    return { now: () => t, advance: (ms: number) => (t += ms) };
  };

  it("consecutive5xxErrors eject for baseEjectionTime times the number of ejections; a success resets the count", () => {
    const c = clock();
    const d = new OutlierDetector({ now: c.now });
    const policy = { consecutive5xxErrors: 2, baseEjectionTimeMs: 1000, maxEjectionPercent: 100 };
    assert.equal(d.record("c", "e1", 2, policy, 500), false);
    assert.equal(d.record("c", "e1", 2, policy, 200), false, "a success resets");
    assert.equal(d.record("c", "e1", 2, policy, 500), false);
    assert.equal(d.record("c", "e1", 2, policy, "connect-failure"), true, "a connection failure counts as a 5xx");
    assert.equal(d.ejected("c", "e1"), true);
    assert.equal(d.ejected("c", "e2"), false);
    c.advance(999);
    assert.equal(d.ejected("c", "e1"), true);
    c.advance(1);
    assert.equal(d.ejected("c", "e1"), false, "back after baseEjectionTime");
    d.record("c", "e1", 2, policy, 503);
    assert.equal(d.record("c", "e1", 2, policy, 503), true);
    c.advance(1999);
    assert.equal(d.ejected("c", "e1"), true, "the second ejection lasts twice as long");
    c.advance(1);
    assert.equal(d.ejected("c", "e1"), false);
  });

  it("consecutiveGatewayErrors count only 502, 503 and 504; upstream's default 5xx threshold is 5", () => {
    const d = new OutlierDetector({ now: () => 0 });
    const policy = { consecutiveGatewayErrors: 2, maxEjectionPercent: 100 };
    d.record("c", "e", 1, policy, 502);
    assert.equal(d.record("c", "e", 1, policy, 500), false, "a 500 breaks the gateway-error run");
    d.record("c", "e", 1, policy, 504);
    assert.equal(d.record("c", "e", 1, policy, 503), true);
    const byDefault = new OutlierDetector({ now: () => 0 });
    for (let i = 0; i < 4; i++) assert.equal(byDefault.record("c", "e", 1, { maxEjectionPercent: 100 }, 500), false);
    assert.equal(byDefault.record("c", "e", 1, { maxEjectionPercent: 100 }, 500), true);
  });

  it("maxEjectionPercent caps how many endpoints are out; without a policy nothing is recorded", () => {
    const d = new OutlierDetector({ now: () => 0 });
    const policy = { consecutive5xxErrors: 1, maxEjectionPercent: 50 };
    assert.equal(d.record("c", "e1", 4, policy, 500), true);
    assert.equal(d.record("c", "e2", 4, policy, 500), true);
    assert.equal(d.record("c", "e3", 4, policy, 500), false, "50% of 4 endpoints are already out");
    assert.equal(d.ejected("c", "e3"), false);
    assert.equal(d.record("c", "e4", 4, undefined, 500), false);
    // Upstream's default 10%: the first endpoint of even a one-endpoint cluster can go (0% < 10%).
    assert.equal(new OutlierDetector({ now: () => 0 }).record("c", "only", 1, { consecutive5xxErrors: 1 }, 500), true);
  });
  it("tells every ejection and return (--outlierLogPath): the detector, the count, seconds since the last action", () => {
    const c = clock();
    const events: OutlierEvent[] = [];
    const timers: Array<{ fn: () => void; at: number }> = [];
    const d = new OutlierDetector({
      now: c.now,
      onEvent: (e) => events.push(e),
      schedule: (fn, ms) => (timers.push({ fn, at: c.now() + ms }), { cancel: () => undefined }),
    });
    const policy = { consecutiveGatewayErrors: 1, consecutive5xxErrors: 3, baseEjectionTimeMs: 2000, maxEjectionPercent: 100 };
    const start = c.now();
    assert.equal(d.record("outbound|80||a", "10.0.0.1:80", 1, policy, 502), true);
    assert.deepEqual(events, [
      { action: "EJECT", type: "CONSECUTIVE_GATEWAY_FAILURE", cluster: "outbound|80||a", endpoint: "10.0.0.1:80", numEjections: 1, enforced: true, at: start },
    ]);
    assert.equal(timers[0].at, start + 2000, "the return is scheduled for the end of the ejection");
    c.advance(2500);
    timers[0].fn();
    assert.deepEqual(events[1], {
      action: "UNEJECT",
      cluster: "outbound|80||a",
      endpoint: "10.0.0.1:80",
      numEjections: 1,
      enforced: false,
      at: start + 2000,
      secsSinceLastAction: 2,
    });
    timers[0].fn();
    assert.equal(events.length, 2, "a return is told once");
    c.advance(3000);
    d.record("outbound|80||a", "10.0.0.1:80", 1, policy, 500);
    d.record("outbound|80||a", "10.0.0.1:80", 1, policy, 500);
    assert.equal(d.record("outbound|80||a", "10.0.0.1:80", 1, policy, 500), true);
    assert.equal(events[2].type, "CONSECUTIVE_5XX");
    assert.equal(events[2].numEjections, 2);
    assert.equal(events[2].secsSinceLastAction, 3, "seconds since it returned");
  });
});
