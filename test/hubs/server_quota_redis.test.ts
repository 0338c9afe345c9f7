// `hubs server --quotaStoreURL redis://…` against a real redis-server: two
// replicas share one quota; when Redis is killed, paused or back, every Check
// still answers within the bound, as --quotaStoreFailureMode says, and the
// hub shows it (/healthz, a log line, counters) without restarting.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { exportPrivateKeyPem, generateKeyPair, signingAlgorithmOf } from "../../host/anchor/keys.ts";
import { x509 } from "../../host/anchor/x509.ts";
import { parseQuotaStoreURL } from "../../host/hubs/quota_store_url.ts";
import { startDaemon } from "../support/processes.ts";
import { runProcess } from "../support/processes.ts";
import { startRedis, type RedisServer } from "../support/redis.ts";
import { checkRequest, HubClient, HUBS_BIN, metricValue, metricsText, startHub, tempDir, waitFor, writeConfig, type HubProcess } from "./support/hub_process.ts";

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

describe("hubs server --quotaStoreURL and its companions: refused values", () => {
  it("reads redis:// and rediss:// URLs: host, port (6379), database (0), credentials kept out of descriptions", () => {
    assert.deepEqual(parseQuotaStoreURL(""), { kind: "memory" });
    const r = parseQuotaStoreURL("rediss://hub:s3cret@redis.mesh-system:6380/2");
    assert.deepEqual(r.kind === "redis" && [r.tls, r.host, r.port, r.db, r.description], [true, "redis.mesh-system", 6380, 2, "rediss://redis.mesh-system:6380/2"]);
    const d = parseQuotaStoreURL("redis://10.0.0.5");
    assert.deepEqual(d.kind === "redis" && [d.tls, d.port, d.db], [false, 6379, 0]);
  });

  for (const [args, message] of [
    [["--quotaStoreURL", "memcached://127.0.0.1:11211"], /--quotaStoreURL "memcached:\/\/127\.0\.0\.1:11211": scheme memcached is not supported \(expected redis:\/\/\[\[USER\]:PASSWORD@\]HOST\[:PORT\]\[\/DB\] or rediss:\/\/… \(TLS\), or empty for the memory store\)/],
    [["--quotaStoreURL", "redis://127.0.0.1:6379/cache"], /database "cache" is not a number/],
    [["--quotaStoreURL", "127.0.0.1:6379"], /--quotaStoreURL "127\.0\.0\.1:6379": /],
    [["--quotaStoreFailureMode", "maybe"], /--quotaStoreFailureMode.*maybe/],
    [["--quotaStoreTimeout", "0s"], /--quotaStoreTimeout: expected a positive duration/],
  ] as const) {
    it(`${args.join(" ")}: exit 2 naming the flag`, async () => {
      const r = await runProcess(process.execPath, [HUBS_BIN, "server", "--address", "tcp://127.0.0.1:0", "--monitoringPort", "0", "--ctrlz_port", "0", ...args]);
      assert.equal(r.status, 2, r.stdout + r.stderr);
      assert.match(r.stderr + r.stdout, message);
    });
  }
});

/** A CA and a certificate for 127.0.0.1 it signed, as PEM files in `dir`. */
async function tlsFiles(dir: string): Promise<{ caFile: string; certFile: string; keyFile: string }> {
  const caKeys = await generateKeyPair("ECDSA");
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    name: "CN=quota store test CA",
    keys: caKeys,
    signingAlgorithm: signingAlgorithmOf(caKeys.privateKey),
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 3_600_000),
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true)],
  });
  const keys = await generateKeyPair("ECDSA");
  const cert = await x509.X509CertificateGenerator.create({
    subject: "CN=redis",
    issuer: ca.subject,
    publicKey: keys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: signingAlgorithmOf(caKeys.privateKey),
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 3_600_000),
    extensions: [new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]), new x509.SubjectAlternativeNameExtension([{ type: "ip", value: "127.0.0.1" }])],
  });
  const files = { caFile: join(dir, "ca.pem"), certFile: join(dir, "redis.pem"), keyFile: join(dir, "redis-key.pem") };
  writeFileSync(files.caFile, ca.toString("pem"));
  writeFileSync(files.certFile, cert.toString("pem"));
  writeFileSync(files.keyFile, await exportPrivateKeyPem(keys.privateKey, true));
  return files;
}

describe("hubs server --quotaStoreURL rediss://: Redis over TLS", () => {
  it("allocates over TLS, the server verified against NODE_EXTRA_CA_CERTS", async () => {
    const dir = tempDir();
    const tls = await tlsFiles(dir);
    const redis = await startRedis(undefined, tls);
    writeConfig(dir, "quotas.yaml", RULES);
    const start = (env: NodeJS.ProcessEnv) =>
      startDaemon<{ grpc: string; monitoringPort: number }>(
        HUBS_BIN,
        ["server", "--address", "tcp://127.0.0.1:0", "--monitoringPort", "0", "--ctrlz_port", "0", "--configStoreURL", `fs://${dir}`, "--quotaStoreURL", `rediss://127.0.0.1:${redis.port}`, "--quotaStoreFailureMode", "deny"],
        "hubs listening ",
        undefined,
        { ...process.env, ...env },
      );
    const trusted = await start({ NODE_EXTRA_CA_CERTS: tls.caFile });
    const untrusted = await start({});
    const clients = [new HubClient(trusted.listening.grpc), new HubClient(untrusted.listening.grpc)];
    try {
      const ask = async (client: HubClient) => (await client.check(checkRequest({ "request.path": "/" }, { fixed: { amount: 2 } }))).response!.quotas!.fixed;
      assert.equal((await ask(clients[0])).grantedAmount, 2);
      assert.match(await (await fetch(`http://127.0.0.1:${trusted.listening.monitoringPort}/healthz`)).text(), /quota store rediss:\/\/127\.0\.0\.1:\d+\/0: ok/);
      const refused = await ask(clients[1]);
      assert.equal(refused.grantedAmount ?? 0, 0, "a server certificate the hub cannot verify is never trusted");
      assert.match(refused.status?.message ?? "", /quota store unavailable/);
      assert.match(await (await fetch(`http://127.0.0.1:${untrusted.listening.monitoringPort}/healthz`)).text(), /unavailable since .*(certificate|self.signed|issuer)/i);
    } finally {
      clients.forEach((c) => c.close());
      await trusted.stop();
      await untrusted.stop();
      await redis.stop();
    }
  });
});
