import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_LOAD_SHEDDING, LoadShedder, type LoadSheddingOptions } from "../../host/hubs/load_shedder.ts";
import { MovingAverage } from "../../host/hubs/moving_average.ts";

const shedder = (options: Partial<LoadSheddingOptions>, now: () => number) => new LoadShedder({ ...DEFAULT_LOAD_SHEDDING, ...options }, now);
const actions = (s: LoadShedder, n: number) => Array.from({ length: n }, () => s.judge().action);

describe("load shedder: rate", () => {
  it("is off at rate 0", () => {
    const s = shedder({ mode: "enforce" }, () => 0);
    assert.ok(actions(s, 1000).every((a) => a === "serve"));
  });

  it("passes the burst at once, then the rate", () => {
    let now = 0;
    const s = shedder({ mode: "enforce", maxRequestsPerSecond: 10, burstSize: 5 }, () => now);
    assert.equal(actions(s, 8).filter((a) => a === "serve").length, 5);
    now += 100;
    assert.deepEqual(actions(s, 2), ["serve", "shed"], "one token per 100 ms at 10/s");
    now += 10_000;
    assert.equal(actions(s, 8).filter((a) => a === "serve").length, 5, "the bucket never holds more than the burst");
  });

  it("burst 0 means a bucket of one, not refusing everything", () => {
    let now = 0;
    const s = shedder({ mode: "enforce", maxRequestsPerSecond: 2 }, () => now);
    assert.deepEqual(actions(s, 2), ["serve", "shed"]);
    now += 500;
    assert.equal(s.judge().action, "serve");
  });
});

describe("load shedder: modes (upstream's disabled / logonly / enforce)", () => {
  it("disabled evaluates nothing, and names the thresholds it leaves inert", () => {
    const s = shedder({ maxRequestsPerSecond: 1, averageLatencyThresholdMs: 1 }, () => 0);
    assert.ok(actions(s, 100).every((a) => a === "serve"));
    assert.deepEqual(s.inertThresholds, ["--maxRequestsPerSecond", "--averageLatencyThreshold"]);
  });

  it("logonly judges as enforce would, but the call is to be served", () => {
    const s = shedder({ mode: "logonly", maxRequestsPerSecond: 1 }, () => 0);
    const verdicts = Array.from({ length: 3 }, () => s.judge());
    assert.deepEqual(
      verdicts.map((v) => v.action),
      ["serve", "log", "log"],
    );
    assert.deepEqual(verdicts[1], { action: "log", evaluator: "rateLimit", reason: "more than 1 requests per second (burst 0)" });
    assert.deepEqual(s.inertThresholds, []);
  });
});

describe("load shedder: latency", () => {
  it("sheds once the moving average of call durations reaches the threshold, above the enforcement rate", () => {
    let now = 0;
    const s = shedder({ mode: "enforce", averageLatencyThresholdMs: 100, latencyEnforcementThreshold: 0 }, () => now);
    assert.equal(s.judge().action, "serve", "no sample yet: the average is 0");
    s.observe(400); // a 400 ms call ends at t=0
    now = 1000; // one half-life later the average is half way from 0 to 400
    const v = s.judge();
    assert.deepEqual(v, { action: "shed", evaluator: "grpcResponseLatency", reason: "observed average latency 0.200000s exceeds the threshold 0.100000s" });
    for (let i = 0; i < 20; i++) s.observe(1); // fast calls pull the average down
    now = 5000;
    assert.equal(s.judge().action, "serve");
  });

  it("below --latencyEnforcementThreshold calls per second latency never sheds", () => {
    let now = 0;
    const s = shedder({ mode: "enforce", averageLatencyThresholdMs: 1, latencyEnforcementThreshold: 3 }, () => now);
    s.observe(1000);
    now = 1000;
    assert.deepEqual(actions(s, 5), ["serve", "serve", "serve", "shed", "shed"], "a bucket of 3 calls");
    now += 1000;
    assert.deepEqual(actions(s, 4), ["serve", "serve", "serve", "shed"], "refilled at 3 per second");
  });

  it("--latencySamplesPerSecond limits the samples that reach the average", () => {
    let now = 0;
    const s = shedder({ mode: "enforce", averageLatencyThresholdMs: 50, latencyEnforcementThreshold: 0, latencySamplesPerSecond: 1 }, () => now);
    s.observe(1); // sampled (the bucket starts with one)
    s.observe(10_000); // not sampled: no second sample within the second
    now = 10_000;
    assert.equal(s.judge().action, "serve");
  });

  it("the average halves its distance to the last sample each half-life", () => {
    const m = new MovingAverage(2000, 0, 0);
    m.add(8, 0);
    assert.equal(m.valueAt(0), 0);
    assert.ok(Math.abs(m.valueAt(2000) - 4) < 1e-9);
    assert.ok(Math.abs(m.valueAt(4000) - 6) < 1e-9);
    m.add(0, 4000);
    assert.ok(Math.abs(m.valueAt(6000) - 3) < 1e-9);
  });
});
