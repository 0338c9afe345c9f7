// `hubs server --quotaStoreURL redis://…` against a real redis-server: two
// replicas share one quota; when Redis is killed, paused or back, every Check
// still answers within the bound, as --quotaStoreFailureMode says, and the
// hub shows it (/healthz, a log line, counters) without restarting.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startRedis, type RedisServer } from "../support/redis.ts";
import { checkRequest, metricValue, metricsText, startHub, tempDir, waitFor, writeConfig, type HubProcess } from "./support/hub_process.ts";

const RULES = `apiVersion: config.mesh.io/v1alpha2
kind: HubQuota
metadata: {name: fixed}
spec: {maxAmount: 5, validDuration: 3600s}
---
apiVersion: config.mesh.io/v1alpha2
kind: HubQuota
metadata: {name: rolling}
spec:
  maxAmount: 5
  validDuration: 3600s
  rateLimitAlgorithm: ROLLING_WINDOW
  bucketDuration: 60s
  overrides:
  - dimensions: {source.user: vip}
    maxAmount: 7
`;

/** The store's timeout in these tests, and the margin a loaded machine gets on top of it. */
const STORE_TIMEOUT_MS = 300;
const MARGIN_MS = 5000;

async function healthz(hub: HubProcess): Promise<string> {
  return (await fetch(`${hub.monitoringUrl}/healthz`)).text();
}

/** One Check asking `amount` of `quota`; also how long the answer took. */
async function ask(hub: HubProcess, quota: string, amount = 1, user = "") {
  const began = Date.now();
  const r = await hub.client.check(checkRequest({ "request.path": "/", ...(user ? { "source.user": user } : {}) }, { [quota]: { amount } }));
  assert.equal(r.code, 0, r.details);
  const q = r.response!.quotas![quota];
  return { granted: q.grantedAmount ?? 0, status: q.status, tookMs: Date.now() - began };
}

for (const mode of ["deny", "allow"] as const) {
  describe(`hubs server: Redis quota store, --quotaStoreFailureMode ${mode}`, () => {
    let redis: RedisServer;
    let hubs: HubProcess[] = [];
    before(async () => {
      redis = await startRedis();
      const dir = tempDir();
      writeConfig(dir, "quotas.yaml", RULES);
      const args = ["--configStoreURL", `fs://${dir}`, "--quotaStoreURL", `${redis.url}/3`, "--quotaStoreTimeout", `${STORE_TIMEOUT_MS}ms`, "--quotaStoreFailureMode", mode];
      hubs = await Promise.all([startHub(args), startHub(args)]);
    });
    after(async () => {
      await Promise.all(hubs.map((h) => h.stop()));
      await redis?.stop();
    });

    it("two replicas draw from one quota, per algorithm and per override", async () => {
      const granted = { fixed: 0, rolling: 0, vip: 0 };
      for (let i = 0; i < 10; i++) {
        granted.fixed += (await ask(hubs[i % 2], "fixed")).granted;
        granted.rolling += (await ask(hubs[i % 2], "rolling")).granted;
        granted.vip += (await ask(hubs[i % 2], "rolling", 1, "vip")).granted;
      }
      assert.deepEqual(granted, { fixed: 5, rolling: 5, vip: 7 });
      assert.match(await healthz(hubs[0]), /^ok\nquota store redis:\/\/127\.0\.0\.1:\d+\/3: ok\n$/);
      assert.ok((await redis.command("KEYS", "*")).startsWith("*0"), "database 0 untouched: the hubs use database 3");
    });

    it(`Redis killed: every Check answers within the store's bound, ${mode === "deny" ? "granting nothing" : "granting what was asked"}`, async () => {
      await redis.kill();
      for (const hub of hubs) {
        for (let i = 0; i < 3; i++) {
          const a = await ask(hub, "fixed", 2);
          assert.ok(a.tookMs < STORE_TIMEOUT_MS + MARGIN_MS, `answered in ${a.tookMs} ms`);
          if (mode === "deny") {
            assert.equal(a.granted, 0);
            assert.equal(a.status?.code, 8, "RESOURCE_EXHAUSTED, never UNAVAILABLE (which clients take as a pass)");
            assert.match(a.status?.message ?? "", /^quota store unavailable \(.*\): denied by --quotaStoreFailureMode deny$/);
          } else {
            assert.equal(a.granted, 2);
            assert.equal(a.status, undefined);
          }
        }
        const health = await waitFor("/healthz to tell", async () => {
          const text = await healthz(hub);
          return text.includes("unavailable") ? text : undefined;
        });
        assert.match(health, new RegExp(`^ok\\nquota store redis://127\\.0\\.0\\.1:\\d+/3: unavailable since .*; allocations answered by --quotaStoreFailureMode ${mode}\\n$`));
        const text = await metricsText(hub);
        assert.ok(metricValue(text, 'hub_quota_store_errors_total{reason="unavailable"}')! >= 1, text);
        assert.equal(metricValue(text, `hub_quota_store_failure_answers_total{result="${mode === "deny" ? "denied" : "allowed"}"}`), 3);
        assert.equal(metricValue(text, "hub_quota_store_up"), 0);
        assert.match(hub.output(), /quota store redis:\/\/127\.0\.0\.1:\d+\/3: connection lost/);
      }
    });

    it("Redis back (empty: no persistence): the replicas reconnect by themselves and enforce again", async () => {
      await redis.restart();
      for (const hub of hubs) await waitFor("the replica to reconnect", async () => /: ok\n$/.test(await healthz(hub)));
      let granted = 0;
      for (let i = 0; i < 8; i++) granted += (await ask(hubs[i % 2], "fixed")).granted;
      assert.equal(granted, 5, "a new window of 5, shared again");
      for (const hub of hubs) {
        assert.equal(metricValue(await metricsText(hub), "hub_quota_store_up"), 1);
        assert.match(hub.output(), /quota store redis:\/\/127\.0\.0\.1:\d+\/3: connected again after/);
        assert.equal(hub.proc.exitCode, null, "never restarted");
      }
    });

    it("Redis paused (accepts, never answers): a Check answers after --quotaStoreTimeout as the mode says", async () => {
      redis.pause();
      try {
        const a = await ask(hubs[0], "rolling", 1, "nobody");
        assert.ok(a.tookMs < STORE_TIMEOUT_MS + MARGIN_MS, `answered in ${a.tookMs} ms`);
        assert.equal(a.granted, mode === "deny" ? 0 : 1);
        assert.ok(metricValue(await metricsText(hubs[0]), 'hub_quota_store_errors_total{reason="timeout"}')! >= 1);
      } finally {
        redis.resume();
      }
      await waitFor("answers from Redis again", async () => (await ask(hubs[0], "fixed")).status === undefined && /: ok\n$/.test(await healthz(hubs[0])) ? true : undefined);
    });
  });
}
