// Table test of HubRule/HubQuota/HubAccessLog decoding: a valid baseline, one change per row.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError } from "../../host/config/errors.ts";
import { parseDocuments } from "../../host/config/documents.ts";
import { decodeHubDocument, type HubResource } from "../../host/config/resources/hub_rules.ts";
import { compileRegex } from "../../host/regex/engine.ts";

function decode(yaml: string, warnings: string[] = []): HubResource {
  const [doc] = parseDocuments(yaml, "/cfg/rules.yaml");
  return decodeHubDocument(doc, { defaultNamespace: "mesh-system", compileRegex }, warnings);
}

const doc = (kind: string, spec: string, meta = "{name: x}") => `apiVersion: config.mesh.io/v1alpha2\nkind: ${kind}\nmetadata: ${meta}\nspec:\n${spec}`;

const rows: Array<{ name: string; yaml: string; error?: RegExp; check?: (r: HubResource) => void }> = [
  {
    name: "baseline rule",
    yaml: doc(
      "HubRule",
      `  match:\n  - clause:\n      request.headers[x-user]: {exact: a}\n  actions:\n  - deny: {code: NOT_FOUND, message: gone}\n  - quota: {name: q}`,
    ),
    check: (r) => {
      assert.equal(r.kind, "HubRule");
      if (r.kind !== "HubRule") return;
      assert.equal(r.id, "HubRule mesh-system/x");
      assert.deepEqual(r.match[0].clauses[0].attribute, { name: "request.headers", key: "x-user", text: "request.headers[x-user]" });
      assert.deepEqual(r.actions[0], { kind: "deny", code: 5, codeName: "NOT_FOUND", message: "gone" });
    },
  },
  {
    name: "unknown gRPC code",
    yaml: doc("HubRule", "  actions:\n  - deny: {code: NOPE}"),
    error: /^\/cfg\/rules\.yaml: HubRule mesh-system\/x: spec\.actions\[0\]\.deny\.code: expected one of CANCELLED, .*UNAUTHENTICATED, got "NOPE"$/,
  },
  { name: "deny with OK", yaml: doc("HubRule", "  actions:\n  - deny: {code: OK}"), error: /spec\.actions\[0\]\.deny\.code: expected one of CANCELLED/ },
  {
    name: "two actions in one item",
    yaml: doc("HubRule", "  actions:\n  - {deny: {}, quota: {name: q}}"),
    error: /spec\.actions\[0\]: expected exactly one of deny, allowList, quota, got deny and quota/,
  },
  {
    name: "two StringMatch kinds",
    yaml: doc("HubRule", "  match:\n  - clause:\n      a: {exact: x, prefix: y}"),
    error: /spec\.match\[0\]\.clause\[a\]: expected exactly one of exact, prefix, regex, got exact and prefix/,
  },
  {
    name: "misspelt StringMatch",
    yaml: doc("HubRule", "  match:\n  - clause:\n      a: {exakt: x}"),
    error: /spec\.match\[0\]\.clause\[a\]\.exakt: unknown field in a StringMatch/,
  },
  {
    name: "bad regex",
    yaml: doc("HubRule", "  match:\n  - clause:\n      a: {regex: '(('}"),
    error: /spec\.match\[0\]\.clause\[a\]\.regex: regex "\(\(" is not supported/,
  },
  {
    name: "repeat count of 2^32 (once wrapped to {0})",
    yaml: doc("HubRule", "  match:\n  - clause:\n      a: {regex: '/admin/x{4294967296}'}"),
    error: /spec\.match\[0\]\.clause\[a\]\.regex: .*repeat count above 1000 in quantifier "\{4294967296\}"/,
  },
  {
    name: "backreference",
    yaml: doc("HubRule", "  match:\n  - clause:\n      a: {regex: '(a)\\1'}"),
    error: /unsupported regex construct: backreference "\\1"/,
  },
  { name: "bad clause key", yaml: doc("HubRule", "  match:\n  - clause:\n      'a[b': {exact: x}"), error: /clause\[a\[b\]: expected name or name\[key\]/ },
  {
    name: "allowList without attribute",
    yaml: doc("HubRule", "  actions:\n  - allowList: {values: [a]}"),
    error: /spec\.actions\[0\]\.allowList\.attribute: expected a string, got nothing/,
  },
  {
    name: "zero validUseCount",
    yaml: doc("HubRule", "  validUseCount: 0\n  actions: []"),
    error: /spec\.validUseCount: expected an integer from 1 to 2147483647, got 0/,
  },
  {
    name: "baseline quota",
    yaml: doc(
      "HubQuota",
      "  maxAmount: 5\n  validDuration: 1.5s\n  overrides:\n  - dimensions: {source.user: a}\n    maxAmount: 9",
      "{name: rq, namespace: ns}",
    ),
    check: (r) => {
      assert.equal(r.kind === "HubQuota" && r.quotaName, "rq", "spec.name defaults to metadata.name");
      assert.equal(r.kind === "HubQuota" && r.validDurationMs, 1500);
      assert.equal(r.id, "HubQuota ns/rq");
    },
  },
  {
    name: "quota defaults to upstream redisquota's FIXED_WINDOW",
    yaml: doc("HubQuota", "  maxAmount: 5\n  validDuration: 1s"),
    check: (r) => assert.deepEqual(r.kind === "HubQuota" && [r.rateLimitAlgorithm, r.bucketDurationMs], ["FIXED_WINDOW", 0]),
  },
  {
    name: "rolling quota (an upstream redisquota sample's fields)",
    yaml: doc("HubQuota", "  maxAmount: 500\n  validDuration: 1s\n  bucketDuration: 500ms\n  rateLimitAlgorithm: ROLLING_WINDOW"),
    check: (r) => assert.deepEqual(r.kind === "HubQuota" && [r.rateLimitAlgorithm, r.bucketDurationMs], ["ROLLING_WINDOW", 500]),
  },
  {
    name: "rolling quota without a bucket",
    yaml: doc("HubQuota", "  maxAmount: 5\n  validDuration: 1s\n  rateLimitAlgorithm: ROLLING_WINDOW"),
    error: /^\/cfg\/rules\.yaml: HubQuota mesh-system\/x: spec\.bucketDuration: ROLLING_WINDOW needs a bucketDuration/,
  },
  {
    name: "bucket as long as the window",
    yaml: doc("HubQuota", "  maxAmount: 5\n  validDuration: 1s\n  rateLimitAlgorithm: ROLLING_WINDOW\n  bucketDuration: 1s"),
    error: /spec\.bucketDuration: expected a duration of at least 1ms and below validDuration \(1000ms\), got "1s"/,
  },
  {
    name: "unknown algorithm",
    yaml: doc("HubQuota", "  maxAmount: 5\n  validDuration: 1s\n  rateLimitAlgorithm: TOKEN_BUCKET"),
    error: /spec\.rateLimitAlgorithm: expected one of FIXED_WINDOW, ROLLING_WINDOW, got "TOKEN_BUCKET"/,
  },
  { name: "quota without window", yaml: doc("HubQuota", "  maxAmount: 5"), error: /spec\.validDuration: expected a duration/ },
  { name: "negative maxAmount", yaml: doc("HubQuota", "  maxAmount: -1\n  validDuration: 1s"), error: /spec\.maxAmount: expected an integer from 0/ },
  {
    name: "override without dimensions",
    yaml: doc("HubQuota", "  maxAmount: 1\n  validDuration: 1s\n  overrides: [{maxAmount: 2}]"),
    error: /spec\.overrides\[0\]\.dimensions: expected a non-empty map/,
  },
  {
    name: "relative access log path",
    yaml: doc("HubAccessLog", "  path: logs/a.jsonl"),
    check: (r) => assert.equal(r.kind === "HubAccessLog" && r.path, "/cfg/logs/a.jsonl"),
  },
  { name: "access log without path", yaml: doc("HubAccessLog", "  {}"), error: /spec\.path: expected a string, got nothing/ },
];

describe("hub config documents", () => {
  for (const row of rows) {
    it(row.name, () => {
      if (row.error) {
        assert.throws(
          () => decode(row.yaml),
          (e: unknown) => e instanceof ConfigError && row.error!.test(e.message),
        );
      } else {
        row.check!(decode(row.yaml));
      }
    });
  }

  it("warns about unknown fields", () => {
    const warnings: string[] = [];
    decode(doc("HubRule", "  actions: []\n  extra: 1"), warnings);
    assert.ok(
      warnings.some((w) => /spec\.extra: unknown field/.test(w)),
      warnings.join("\n"),
    );
    assert.ok(warnings.some((w) => /spec\.actions: no actions/.test(w)));
  });
});
