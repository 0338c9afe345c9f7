// Root rotation and certificate renewal with an injected clock and timers: nothing sleeps.
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { WorkloadCertificate } from "../../host/anchor/client.ts";
import { CertificateRotator } from "../../host/anchor/certificate_rotator.ts";
import { CertificateAuthority } from "../../host/anchor/certificate_authority.ts";
import { AnchorMetrics } from "../../host/anchor/metrics.ts";
import { RootRotator } from "../../host/anchor/root_rotation.ts";
import { SelfSignedCa } from "../../host/anchor/self_signed_ca.ts";
import { Logger } from "../../host/telemetry/logger.ts";
import { ANCHOR_LOG_SCOPES } from "../../host/anchor/options.ts";
import { csrFor } from "./support/ca_process.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { tempDir } from "../support/processes.ts";

const H = 3_600_000;
const quiet = new Logger(ANCHOR_LOG_SCOPES, {
  asJson: false,
  callerScopes: new Set(),
  outputLevels: new Map([["default", "none"]]),
  stacktraceLevels: new Map(),
  targets: [],
});

function caOptions(clock: FakeClock, over: Partial<Parameters<typeof SelfSignedCa.start>[0]> = {}): Parameters<typeof SelfSignedCa.start>[0] {
  // 1024-bit RSA keeps key generation quick; the key size is not what these tests are about.
  return {
    org: "cluster.local",
    keySize: 1024,
    rootTtlMs: 100 * H,
    gracePercentile: 20,
    pkcs8: false,
    dir: "",
    readOnly: false,
    now: clock.now,
    log: quiet.scope("pkica"),
    ...over,
  };
}

describe("self-signed root rotation", () => {
  it("rotates inside the grace percentile, keeps the key, and serves both roots until the old one expires", async () => {
    const clock = new FakeClock();
    const ca = await SelfSignedCa.start(caOptions(clock));
    const first = ca.bundle.signingCert;
    clock.time += 79 * H;
    assert.equal(await ca.checkAndRotate(), false, "80% of the lifetime not yet used");
    clock.time += 1 * H;
    assert.equal(await ca.checkAndRotate(), true, "inside the last 20%");
    const second = ca.bundle.signingCert;
    assert.notEqual(second.serialNumber, first.serialNumber);
    assert.equal(second.notBefore.getTime(), clock.time);
    assert.deepEqual(
      ca.bundle.roots.map((r) => r.serialNumber),
      [second.serialNumber, first.serialNumber],
      "new root first, old root kept",
    );
    assert.ok(Buffer.from(second.publicKey.rawData).equals(Buffer.from(first.publicKey.rawData)), "same key (upstream GenRootCertFromExistingKey)");

    // A leaf issued under the new root verifies with the old root too (same subject and key), and vice versa.
    const metrics = new AnchorMetrics();
    const authority = new CertificateAuthority(
      { trustDomain: "cluster.local", org: "", defaultTtlMs: H, maxTtlMs: H, allowedNamespaces: new Set(), dualUse: false, signCaCerts: false },
      { ratio: 0.5, minGraceMs: 0 },
      metrics,
      clock.now,
    );
    authority.setBundle(ca.bundle);
    const res = await authority.createCertificate(await csrFor(["spiffe://cluster.local/ns/a/sa/b"]), 0);
    const [leaf, ...roots] = [res.certChain[0], ...res.certChain[1].match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)!].map(
      (p) => new X509Certificate(p),
    );
    assert.equal(roots.length, 2, "the root bundle holds both roots");
    for (const r of roots) assert.ok(leaf.verify(r.publicKey));

    clock.time += 21 * H; // the first root has expired
    assert.equal(await ca.checkAndRotate(), false);
    assert.deepEqual(
      ca.bundle.roots.map((r) => r.serialNumber),
      [second.serialNumber],
      "the expired root left the bundle",
    );
  });

  it("persists to --self-signed-ca-cert-dir (PKCS#1 key, mode 0600), reloads it, and a read-only instance follows rotations", async () => {
    const dir = tempDir("mesh-ca-dir-");
    const clock = new FakeClock();
    const writer = await SelfSignedCa.start(caOptions(clock, { dir }));
    assert.match(readFileSync(join(dir, "ca-key.pem"), "utf8"), /BEGIN RSA PRIVATE KEY/);
    assert.equal(statSync(join(dir, "ca-key.pem")).mode & 0o777, 0o600);
    const reader = await SelfSignedCa.start(caOptions(clock, { dir, readOnly: true }));
    assert.equal(reader.bundle.signingCert.serialNumber, writer.bundle.signingCert.serialNumber);
    const restarted = await SelfSignedCa.start(caOptions(clock, { dir }));
    assert.equal(restarted.bundle.signingCert.serialNumber, writer.bundle.signingCert.serialNumber, "a restart keeps the root");

    clock.time += 90 * H;
    assert.equal(await writer.checkAndRotate(), true);
    assert.equal(await reader.checkAndRotate(), true, "the reader re-read the rotated root");
    assert.equal(reader.bundle.signingCert.serialNumber, writer.bundle.signingCert.serialNumber);
    assert.equal(reader.bundle.roots.length, 2);
  });

  it("writes a PKCS#8 key with --pkcs8-keys; read-only without a CA is a config error", async () => {
    const dir = tempDir("mesh-ca-dir-");
    await SelfSignedCa.start(caOptions(new FakeClock(), { dir, pkcs8: true }));
    assert.match(readFileSync(join(dir, "ca-key.pem"), "utf8"), /BEGIN PRIVATE KEY/);
    await assert.rejects(
      SelfSignedCa.start(caOptions(new FakeClock(), { dir: tempDir("mesh-ca-empty-"), readOnly: true })),
      /--read-signing-cert-only: .*ca-key\.pem does not exist/,
    );
  });

  it("the rotator checks after the (jittered) start delay and then every interval, and keeps going after a failure", async () => {
    const clock = new FakeClock();
    const calls: number[] = [];
    let fail = true;
    const rotator = new RootRotator({
      checkIntervalMs: H,
      jitter: true,
      random: () => 0.25,
      timers: clock,
      log: quiet.scope("rootcertrotator"),
      check: async () => {
        calls.push(clock.now());
        if (fail) {
          fail = false;
          throw new Error("disk full");
        }
        return false;
      },
    });
    const t0 = clock.now();
    rotator.start();
    await clock.advance(15 * 60_000 - 1);
    assert.equal(calls.length, 0);
    await clock.advance(1);
    assert.deepEqual(calls, [t0 + 15 * 60_000], "first check after random × interval");
    await clock.advance(2 * H);
    assert.deepEqual(calls, [t0 + 15 * 60_000, t0 + 75 * 60_000, t0 + 135 * 60_000]);
    await rotator.stop();
    await clock.advance(5 * H);
    assert.equal(calls.length, 3);
    assert.equal(
      new RootRotator({ checkIntervalMs: 0, jitter: false, timers: clock, log: quiet.scope("rootcertrotator"), check: async () => true }).enabled,
      false,
      "0 disables",
    );
  });
});

describe("CertificateRotator", () => {
  const cert = (n: number, notBefore: number, lifetime: number): WorkloadCertificate => ({
    identity: "spiffe://cluster.local/ns/a/sa/b",
    keyPem: `key-${n}`,
    certChainPem: `cert-${n}`,
    rootPem: "root",
    notBefore: new Date(notBefore),
    expiresAt: new Date(notBefore + lifetime),
    rotateAt: new Date(notBefore + lifetime / 2),
    serialNumber: String(n),
  });

  it("renews at rotateAt, retries failures with doubling delays, and stops", async () => {
    const clock = new FakeClock();
    let n = 0;
    const failures: number[] = [];
    let failNext = 0;
    const seen: string[] = [];
    const rotator = new CertificateRotator({
      now: clock.now,
      timers: clock,
      retryInitialMs: 1000,
      retryMaxMs: 4000,
      fetch: async () => {
        if (failNext > 0) {
          failNext--;
          throw new Error("CA unavailable");
        }
        return cert(++n, clock.now(), 2 * H);
      },
      onCertificate: (c) => seen.push(c.serialNumber),
      onError: (_e, retryIn) => failures.push(retryIn),
    });
    await rotator.start();
    assert.deepEqual(seen, ["1"]);
    await clock.advance(H - 1);
    assert.deepEqual(seen, ["1"], "not before rotateAt");
    await clock.advance(1);
    assert.deepEqual(seen, ["1", "2"], "renewed at rotateAt (half of the 2h lifetime)");
    failNext = 4;
    await clock.advance(H);
    assert.deepEqual(failures, [1000], "the renewal at rotateAt failed");
    await clock.advance(1000 + 2000 + 4000);
    assert.deepEqual(failures, [1000, 2000, 4000, 4000], "doubling, capped at retryMaxMs");
    assert.deepEqual(seen, ["1", "2"], "the current certificate stays in use meanwhile");
    await clock.advance(4000);
    assert.deepEqual(seen, ["1", "2", "3"]);
    assert.equal(rotator.current?.serialNumber, "3");
    rotator.stop();
    await clock.advance(10 * H);
    assert.deepEqual(seen, ["1", "2", "3"]);
    assert.equal(clock.pending(), 0);
  });

  it("waits again when a timer fires before rotateAt (long waits are split)", async () => {
    const clock = new FakeClock();
    const early = { setTimeout: (fn: () => void, ms: number) => clock.setTimeout(fn, Math.min(ms, 1000)), clearTimeout: (h: unknown) => clock.clearTimeout(h) };
    let n = 0;
    const rotator = new CertificateRotator({ now: clock.now, timers: early, fetch: async () => cert(++n, clock.now(), 10_000), onCertificate: () => {} });
    await rotator.start();
    await clock.advance(4999);
    assert.equal(n, 1);
    await clock.advance(1);
    assert.equal(n, 2);
    rotator.stop();
  });
});
