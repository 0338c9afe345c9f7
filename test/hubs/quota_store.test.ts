// The two quota stores, memory and Redis (a real redis-server), driven by
// the same injected clock through the same sequences: both must give the
// same answers (upstream redisquota's windows), and Redis must never
// over-grant to several replicas at once.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Registry } from "prom-client";
import type { RateLimitAlgorithm } from "../../host/config/resources/hub_rules.ts";
import { DEDUPLICATION_WINDOW_MS, MemQuotaStore, type AllocateRequest, type QuotaStore } from "../../host/hubs/quota_store.ts";
import { QuotaStoreMetrics } from "../../host/hubs/quota_store_metrics.ts";
import { parseQuotaStoreURL } from "../../host/hubs/quota_store_url.ts";
import { RedisQuotaStore } from "../../host/hubs/redis_quota_store.ts";
import { Logger } from "../../host/telemetry/logger.ts";
import { startRedis, type RedisServer } from "../support/redis.ts";

const quietLog = new Logger(["adapters"], { asJson: false, callerScopes: new Set(), outputLevels: new Map([["default", "none"]] as const), stacktraceLevels: new Map(), targets: [] }).scope("adapters");

let redis: RedisServer;
const redisStores: RedisQuotaStore[] = [];
before(async () => {
  redis = await startRedis();
});
after(async () => {
  await Promise.all(redisStores.map((s) => s.close()));
  await redis?.stop();
});

async function redisStore(now: () => number, failureMode: "allow" | "deny" = "deny", timeoutMs = 2000): Promise<{ store: RedisQuotaStore; metrics: QuotaStoreMetrics; registry: Registry }> {
  const registry = new Registry();
  const metrics = new QuotaStoreMetrics(registry);
  const location = parseQuotaStoreURL(redis.url);
  assert.equal(location.kind, "redis");
  const store = new RedisQuotaStore({ location: location as Extract<typeof location, { kind: "redis" }>, timeoutMs, failureMode, metrics, log: quietLog, now });
  redisStores.push(store);
  assert.ok(await store.waitUntilReady(30_000), "connected to redis-server");
  return { store, metrics, registry };
}

let keySerial = 0;
/** A store under test with a clock it owns, and `take` naming a fresh counter per scenario. */
async function scenario(kind: "memory" | "redis", algorithm: RateLimitAlgorithm, maxAmount = 10, windowMs = 1000, bucketMs = 100) {
  const clock = { now: 1_700_000_000_000 };
  const store: QuotaStore = kind === "memory" ? new MemQuotaStore(() => clock.now) : (await redisStore(() => clock.now)).store;
  const key = `q${++keySerial}-${kind}`;
  const take = async (amount: number, bestEffort = false, deduplicationId = "", max = maxAmount) => {
    const req: AllocateRequest = { quotaName: key, key, algorithm, maxAmount: max, windowMs, bucketMs, amount, bestEffort, deduplicationId };
    const a = await store.allocate(req);
    return [a.granted, a.validDurationMs] as const;
  };
  return { clock, store, take, key };
}

for (const kind of ["memory", "redis"] as const) {
  describe(`${kind} quota store: FIXED_WINDOW`, () => {
    it("all or nothing, then best effort: what is left; valid for what is left of the window", async () => {
      const { clock, take } = await scenario(kind, "FIXED_WINDOW");
      assert.deepEqual(await take(4), [4, 1000]);
      clock.now += 300;
      assert.deepEqual(await take(4), [4, 700]);
      assert.deepEqual(await take(4), [0, 0], "all or nothing: 2 left, 4 asked");
      assert.deepEqual(await take(7, true), [2, 700], "best effort: what is left");
      assert.deepEqual(await take(1, true), [0, 0]);
    });

    it("the window starts at the first allocation after the last one ended, not on the clock's boundaries", async () => {
      const { clock, take } = await scenario(kind, "FIXED_WINDOW");
      clock.now += 250;
      assert.deepEqual(await take(10), [10, 1000]);
      clock.now += 999;
      assert.deepEqual(await take(1), [0, 0], "1 ms before the end: still full");
      clock.now += 1;
      assert.deepEqual(await take(10), [10, 1000], "a new window of its own");
    });

    it("deduplicates a retry of the same call for 10 s: the same answer, charged once", async () => {
      const { clock, take } = await scenario(kind, "FIXED_WINDOW");
      assert.deepEqual(await take(6, false, "call-1"), [6, 1000]);
      clock.now += 100;
      assert.deepEqual(await take(6, false, "call-1"), [6, 900], "the same grant, valid as long as it was");
      assert.deepEqual(await take(6, false, "call-2"), [0, 0]);
      clock.now += DEDUPLICATION_WINDOW_MS;
      assert.deepEqual(await take(6, false, "call-1"), [6, 1000], "after 10 s the id is new again (and the window too)");
    });

    it("a lowered maximum applies at once; zero grants nothing", async () => {
      const { take } = await scenario(kind, "FIXED_WINDOW");
      assert.deepEqual(await take(8), [8, 1000]);
      assert.deepEqual(await take(1, true, "", 5), [0, 0]);
      assert.deepEqual(await take(0), [0, 0]);
      assert.deepEqual(await take(2, false, "", 10), [2, 1000]);
    });
  });

  describe(`${kind} quota store: ROLLING_WINDOW`, () => {
    it("tokens leave the window one window after their bucket opened", async () => {
      const { clock, take } = await scenario(kind, "ROLLING_WINDOW", 10, 1000, 100);
      assert.deepEqual(await take(5), [5, 1000], "a rolling grant is valid for the whole window");
      clock.now += 500;
      assert.deepEqual(await take(5), [5, 1000]);
      assert.deepEqual(await take(1), [0, 0]);
      clock.now += 499;
      assert.deepEqual(await take(1), [0, 0], "the first 5 are 999 ms old: still in");
      clock.now += 1;
      assert.deepEqual(await take(6, true), [5, 1000], "the first bucket left; the second is still in");
      clock.now += 500;
      assert.deepEqual(await take(10, true), [5, 1000], "the second left, the third (5 at 1000 ms) is in");
    });

    it("precision is the bucket: tokens of one bucket leave together", async () => {
      const { clock, take } = await scenario(kind, "ROLLING_WINDOW", 4, 1000, 400);
      assert.deepEqual(await take(2), [2, 1000]);
      clock.now += 300;
      assert.deepEqual(await take(2), [2, 1000], "same bucket (opened at 0)");
      clock.now += 700;
      assert.deepEqual(await take(4), [4, 1000], "both left at 1000 ms, with their bucket");
    });

    it("deduplicates retries too", async () => {
      const { take } = await scenario(kind, "ROLLING_WINDOW", 3, 1000, 100);
      assert.deepEqual(await take(3, false, "x"), [3, 1000]);
      assert.deepEqual(await take(3, false, "x"), [3, 1000]);
      assert.deepEqual(await take(1), [0, 0]);
    });
  });
}

describe("redis quota store: shared by replicas", () => {
  it("three replicas asking at once never over-grant: exactly maxAmount in all", async () => {
    const now = () => Date.now();
    const replicas = await Promise.all([redisStore(now), redisStore(now), redisStore(now)]);
    for (const algorithm of ["FIXED_WINDOW", "ROLLING_WINDOW"] as const) {
      const key = `shared-${algorithm}`;
      const asks: Array<Promise<{ granted: number }>> = [];
      for (let i = 0; i < 300; i++) {
        const { store } = replicas[i % 3];
        asks.push(Promise.resolve(store.allocate({ quotaName: key, key, algorithm, maxAmount: 100, windowMs: 3_600_000, bucketMs: 60_000, amount: 1, bestEffort: i % 2 === 0 })));
      }
      const granted = (await Promise.all(asks)).reduce((n, a) => n + a.granted, 0);
      assert.equal(granted, 100, algorithm);
    }
  });

  it("keys expire on their own: the counter with its window, the deduplication record after 10 s", async () => {
    const { store } = await redisStore(() => Date.now());
    await store.allocate({ quotaName: "exp", key: "exp", algorithm: "ROLLING_WINDOW", maxAmount: 5, windowMs: 60_000, bucketMs: 1, amount: 1, bestEffort: false, deduplicationId: "d1" });
    await new Promise((r) => setTimeout(r, 5));
    await store.allocate({ quotaName: "exp", key: "exp", algorithm: "ROLLING_WINDOW", maxAmount: 5, windowMs: 60_000, bucketMs: 1, amount: 1, bestEffort: false });
    const ttl = async (key: string) => Number((await redis.command("PTTL", key)).replace(/^:/, ""));
    for (const key of ["mesh-hub:quota:exp;rolling.meta", "mesh-hub:quota:exp;rolling.data"]) {
      const t = await ttl(key);
      assert.ok(t > 0 && t <= 60_000, `${key}: PTTL ${t}`);
    }
    const d = await ttl("mesh-hub:dedup:d1-exp;rolling");
    assert.ok(d > 0 && d <= DEDUPLICATION_WINDOW_MS, `dedup PTTL ${d}`);
  });

  it("scripts lost by Redis (SCRIPT FLUSH, a restart) are loaded again without a failed allocation", async () => {
    const { store, metrics } = await redisStore(() => Date.now());
    const ask = () => store.allocate({ quotaName: "flush", key: "flush", algorithm: "FIXED_WINDOW", maxAmount: 5, windowMs: 60_000, bucketMs: 0, amount: 1, bestEffort: false });
    assert.equal((await ask()).granted, 1);
    await redis.command("SCRIPT", "FLUSH");
    assert.equal((await ask()).granted, 1);
    assert.equal((await metrics.errors.get()).values.reduce((n, v) => n + v.value, 0), 0);
  });
});
