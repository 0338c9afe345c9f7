// Pure decisions: workload TTL, rotation time (grace ratio), root rotation due, SPIFFE parsing, ANCHOR_* variables.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { anchorEnvironment } from "../../host/anchor/environment.ts";
import { rootRotationDue } from "../../host/anchor/root_rotation.ts";
import { parseSpiffeIdentity } from "../../host/anchor/spiffe.ts";
import { resolveWorkloadTtl, rotationTime } from "../../host/anchor/workload_ttl.ts";

const H = 3_600_000;
const M = 60_000;

describe("workload TTL policy", () => {
  const rows: Array<[string, number, number | RegExp]> = [
    ["0 = the default", 0, 24 * H],
    ["within the max", 3600, H],
    ["exactly the max", 48 * 3600, 48 * H],
    ["above the max", 48 * 3600 + 1, /greater than the max allowed TTL 48h0m0s/],
    ["negative", -1, /non-negative/],
  ];
  for (const [name, seconds, want] of rows) {
    it(name, () => {
      if (typeof want === "number") assert.equal(resolveWorkloadTtl(seconds, 24 * H, 48 * H), want);
      else assert.throws(() => resolveWorkloadTtl(seconds, 24 * H, 48 * H), want);
    });
  }
});

describe("rotation time (grace period ratio, minimum grace)", () => {
  const t0 = Date.UTC(2026, 0, 1);
  it("renews when ratio × lifetime is left", () => {
    assert.equal(rotationTime(t0, t0 + 24 * H, 0.5, 10 * M), t0 + 12 * H);
    assert.equal(rotationTime(t0, t0 + 24 * H, 0.25, 0), t0 + 18 * H);
  });
  it("raises the grace period to the minimum when that is shorter than the lifetime", () => {
    assert.equal(rotationTime(t0, t0 + 10 * M, 0.1, 5 * M), t0 + 5 * M, "1 minute of grace raised to 5");
  });
  it("ignores a minimum as long as the lifetime (it would renew at once)", () => {
    assert.equal(rotationTime(t0, t0 + 5 * M, 0.5, 10 * M), t0 + 150_000);
  });
  it("ratio 0 renews at expiry, ratio 1 at once", () => {
    assert.equal(rotationTime(t0, t0 + H, 0, 0), t0 + H);
    assert.equal(rotationTime(t0, t0 + H, 1, 0), t0);
  });
});

describe("self-signed root rotation decision (grace percentile)", () => {
  const root = { notBefore: 0, notAfter: 100 * H };
  const rows: Array<[string, number, number, boolean]> = [
    ["fresh", 10 * H, 20, false],
    ["just before the grace period", 80 * H - 1, 20, false],
    ["at the start of the grace period", 80 * H, 20, true],
    ["expired", 101 * H, 20, true],
    ["percentile 0: only at expiry", 99 * H, 0, false],
    ["percentile 100: always", 0, 100, true],
  ];
  for (const [name, now, pct, due] of rows) it(name, () => assert.equal(rootRotationDue(root, now, pct), due));
});

describe("SPIFFE workload identities", () => {
  it("parses spiffe://<td>/ns/<ns>/sa/<sa>", () => {
    assert.deepEqual(parseSpiffeIdentity("spiffe://cluster.local/ns/foo/sa/bar"), {
      trustDomain: "cluster.local",
      namespace: "foo",
      serviceAccount: "bar",
      uri: "spiffe://cluster.local/ns/foo/sa/bar",
    });
  });
  for (const bad of [
    "spiffe://Cluster.local/ns/a/sa/b",
    "spiffe://cluster.local/ns/a/sa/b/c",
    "spiffe://cluster.local/ns//sa/b",
    "spiffe://cluster.local",
    "spiffe://cluster.local/ns/a%2f/sa/b",
  ]) {
    it(`refuses ${bad}`, () => assert.throws(() => parseSpiffeIdentity(bad), /is not a workload identity/));
  }
});

describe("ANCHOR_* environment variables", () => {
  it("defaults as the spec lists them", () => {
    assert.deepEqual(anchorEnvironment({}), {
      selfSignedCaCertTtlMs: 87600 * H,
      rootCertCheckIntervalMs: H,
      rootCertGracePeriodPercentile: 20,
      rotatorJitter: true,
      workloadCertMinGracePeriodMs: 10 * M,
      enableNamespacesByDefault: true,
    });
  });
  it("reads Go durations and booleans; a negative check interval disables the rotator", () => {
    const env = anchorEnvironment({
      ANCHOR_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL: "-1s",
      ANCHOR_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR: "F",
      ANCHOR_SELF_SIGNED_CA_CERT_TTL: "1h30m",
    });
    assert.equal(env.rootCertCheckIntervalMs, -1000);
    assert.equal(env.rotatorJitter, false);
    assert.equal(env.selfSignedCaCertTtlMs, 1.5 * H);
  });
  const bad: Array<[Record<string, string>, RegExp]> = [
    [{ ANCHOR_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL: "1 hour" }, /ANCHOR_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL="1 hour": expected a duration/],
    [{ ANCHOR_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE: "120" }, /from 0 to 100/],
    [{ ANCHOR_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR: "yes" }, /expected true or false/],
    [{ ANCHOR_SELF_SIGNED_CA_CERT_TTL: "0s" }, /must be positive/],
  ];
  for (const [env, message] of bad) it(`refuses ${JSON.stringify(env)}`, () => assert.throws(() => anchorEnvironment(env), message));
});
