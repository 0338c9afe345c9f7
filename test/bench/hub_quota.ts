// The hub's quota stores side by side in one run: a `hubs server` with
// memory quotas and one with --quotaStoreURL on a real redis-server
// (loopback), checks that each allocate 1 of a quota, in interleaved rounds;
// then each store alone in this process: allocations per second and the p99
// of one allocation. Summary line: `hub: redis/memory quota throughput = R`
// (checks/s with Redis over checks/s with memory; the aim is R ≥ 0.5 and a
// p99 allocation ≤ 5 ms on loopback, issue 27).
// Run alone: node --import tsx test/bench/hub_quota.ts (after node build/build.mjs)
import { pathToFileURL } from "node:url";
import { Registry } from "prom-client";
import { MemQuotaStore, type AllocateRequest, type QuotaStore } from "../../host/hubs/quota_store.ts";
import { QuotaStoreMetrics } from "../../host/hubs/quota_store_metrics.ts";
import { parseQuotaStoreURL } from "../../host/hubs/quota_store_url.ts";
import { RedisQuotaStore } from "../../host/hubs/redis_quota_store.ts";
import { Logger } from "../../host/telemetry/logger.ts";
import { messageType } from "../../host/wire/protos.ts";
import { checkRequest, startHub, tempDir, writeConfig, type HubClient, type HubProcess } from "../hubs/support/hub_process.ts";
import { startRedis } from "../support/redis.ts";
import { median } from "./stats.ts";

const ROUNDS = 3;
const ROUND_SECONDS = 2;
const CONCURRENCY = Number(process.env.HUB_BENCH_CONCURRENCY ?? 8);
const IN_PROCESS_ALLOCATIONS = 20_000;

const CONFIG = `apiVersion: config.mesh.io/v1alpha2
kind: HubQuota
metadata: {name: requests}
spec: {maxAmount: 1000000000, validDuration: 3600s}
---
apiVersion: config.mesh.io/v1alpha2
kind: HubQuota
metadata: {name: rolling}
spec: {maxAmount: 1000000000, validDuration: 3600s, rateLimitAlgorithm: ROLLING_WINDOW, bucketDuration: 1s}
`;

async function checksFor(client: HubClient, payloads: Buffer[], seconds: number): Promise<number> {
  let done = 0;
  const deadline = performance.now() + seconds * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      const r = await client.callRaw("Check", payloads[done % payloads.length]);
      if (r.code !== 0) throw new Error(`Check failed: ${r.details}`);
      done++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return done / seconds;
}

/** `n` allocations, CONCURRENCY outstanding: allocations per second and the p99 of one, in ms. */
async function allocations(store: QuotaStore, algorithm: AllocateRequest["algorithm"], n: number): Promise<{ perSecond: number; p99Ms: number }> {
  const took: number[] = [];
  let next = 0;
  const began = performance.now();
  const worker = async () => {
    while (next < n) {
      const key = `bench-${next++ % 64}`;
      const t = performance.now();
      await store.allocate({ quotaName: key, key, algorithm, maxAmount: 1e9, windowMs: 3_600_000, bucketMs: 1000, amount: 1, bestEffort: true });
      took.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - began) / 1000;
  took.sort((a, b) => a - b);
  return { perSecond: n / seconds, p99Ms: took[Math.floor(took.length * 0.99)] };
}

export async function runHubQuotaBench(): Promise<string[]> {
  const redis = await startRedis();
  const hubs: Array<{ name: "memory" | "redis"; hub: HubProcess; rates: number[] }> = [];
  let redisStore: RedisQuotaStore | undefined;
  try {
    const dir = tempDir("hubs-quota-bench-");
    writeConfig(dir, "config.yaml", CONFIG);
    const args = ["--configStoreURL", `fs://${dir}`, "--log_output_level", "default:warn"];
    hubs.push({ name: "memory", hub: await startHub(args), rates: [] });
    hubs.push({ name: "redis", hub: await startHub([...args, "--quotaStoreURL", redis.url, "--quotaStoreFailureMode", "deny"]), rates: [] });
    const type = messageType("mesh.hub.v1.CheckRequest");
    const payloads = Array.from({ length: 64 }, (_, i) =>
      Buffer.from(type.encode(type.fromObject(checkRequest({ "request.path": `/items/${i}`, "source.user": `u${i % 8}` }, { [i % 2 ? "rolling" : "requests"]: { amount: 1, bestEffort: true } }))).finish()),
    );
    for (const h of hubs) await checksFor(h.hub.client, payloads, 1); // warm-up
    for (let r = 0; r < ROUNDS; r++) for (const h of hubs) h.rates.push(await checksFor(h.hub.client, payloads, ROUND_SECONDS));

    const location = parseQuotaStoreURL(redis.url);
    const log = new Logger(["adapters"], { asJson: false, callerScopes: new Set(), outputLevels: new Map([["default", "none"]] as const), stacktraceLevels: new Map(), targets: [] }).scope("adapters");
    redisStore = new RedisQuotaStore({ location: location as Extract<typeof location, { kind: "redis" }>, timeoutMs: 1000, failureMode: "deny", metrics: new QuotaStoreMetrics(new Registry()), log });
    if (!(await redisStore.waitUntilReady(30_000))) throw new Error("redis-server did not answer");
    const memory = new MemQuotaStore();
    await allocations(redisStore, "FIXED_WINDOW", 2000); // warm-up (scripts loaded)
    const rows: Array<[string, { perSecond: number; p99Ms: number }, { perSecond: number; p99Ms: number }]> = [];
    for (const algorithm of ["FIXED_WINDOW", "ROLLING_WINDOW"] as const) {
      rows.push([algorithm, await allocations(memory, algorithm, IN_PROCESS_ALLOCATIONS), await allocations(redisStore, algorithm, IN_PROCESS_ALLOCATIONS)]);
    }
    const [mem, red] = hubs.map((h) => median(h.rates));
    const f = (n: number, digits = 0) => n.toFixed(digits).padStart(10);
    return [
      `hub quota stores (hubs server processes on loopback, ${CONCURRENCY} calls in flight, each Check allocating 1; medians of ${ROUNDS} interleaved ${ROUND_SECONDS} s rounds)`,
      `                                         memory       redis`,
      `  checks (= quota allocations)/s     ${f(mem)}  ${f(red)}`,
      ...rows.flatMap(([algorithm, m, r]) => [
        `  ${algorithm.padEnd(14)} allocations/s, in process ${f(m.perSecond)}  ${f(r.perSecond)}`,
        `  ${algorithm.padEnd(14)} p99 allocation, ms       ${f(m.p99Ms, 3)}  ${f(r.p99Ms, 3)}`,
      ]),
      `hub: redis/memory quota throughput = ${(red / mem).toFixed(2)}`,
    ];
  } finally {
    await redisStore?.close();
    for (const h of hubs) await h.hub.stop();
    await redis.stop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log((await runHubQuotaBench()).join("\n"));
}
