// The rule engine without a server: preconditions, referenced attributes, quota plans, and check() end to end.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseDocuments } from "../../host/config/documents.ts";
import { decodeHubDocument, isHubDocument } from "../../host/config/resources/hub_rules.ts";
import { check as checkAny, type CheckResponseObject } from "../../host/hubs/check.ts";
import { buildHubConfig, type HubConfig } from "../../host/hubs/hub_config.ts";
import { evaluatePrecondition } from "../../host/hubs/precondition.ts";
import { planQuota } from "../../host/hubs/quota.ts";
import { MemQuotaStore } from "../../host/hubs/quota_store.ts";
import { ReferencedAttributes } from "../../host/hubs/referenced.ts";
import { compileRegex } from "../../host/regex/engine.ts";
import { RpcError } from "../../host/hubs/rpc_error.ts";
import { encodeAttributes, GlobalDictionary } from "../../host/wire/compressed.ts";
import { GLOBAL_WORDS } from "../../host/wire/global_words.ts";
import { attrs } from "./support/hub_process.ts";

const dictionary = new GlobalDictionary(GLOBAL_WORDS);

function configOf(yaml: string, defaultNamespace = "mesh-system"): HubConfig {
  const warnings: string[] = [];
  const resources = parseDocuments(yaml, "test.yaml")
    .filter(isHubDocument)
    .map((d) => decodeHubDocument(d, { defaultNamespace, compileRegex }, warnings));
  return buildHubConfig(resources, defaultNamespace).config;
}

const rule = (name: string, spec: string, namespace?: string) => `---
apiVersion: config.mesh.io/v1alpha2
kind: HubRule
metadata: {name: ${name}${namespace ? `, namespace: ${namespace}` : ""}}
spec: ${spec}
`;

function evaluate(config: HubConfig, values: Parameters<typeof attrs>[0]) {
  const referenced = new ReferencedAttributes();
  const outcome = evaluatePrecondition(config, attrs(values), referenced);
  return { ...outcome, referenced: referenced.list().sort() };
}

describe("rule engine: preconditions", () => {
  it("matches exact, prefix and full-string regex; any match of the list, all clauses of a match", () => {
    const config = configOf(
      rule(
        "r",
        `{match: [{clause: {request.path: {regex: "/a/[0-9]+"}, request.method: {exact: GET}}}, {clause: {request.host: {prefix: "admin."}}}], actions: [{deny: {}}]}`,
      ),
    );
    assert.equal(evaluate(config, { "request.path": "/a/12", "request.method": "GET" }).code, 7);
    assert.equal(evaluate(config, { "request.path": "/a/12x", "request.method": "GET" }).code, 0, "regex is anchored at both ends");
    assert.equal(evaluate(config, { "request.path": "/a/12", "request.method": "PUT" }).code, 0);
    assert.equal(evaluate(config, { "request.host": "admin.example" }).code, 7);
    assert.equal(evaluate(config, { "request.host": "admin.example" }).message, "denied by HubRule mesh-system/r");
  });

  it("only string values match; {} requires presence", () => {
    const config = configOf(
      rule("r", `{match: [{clause: {response.code: {exact: "200"}}}, {clause: {request.id: {}}}], actions: [{deny: {code: ABORTED, message: m}}]}`),
    );
    assert.equal(evaluate(config, { "response.code": 200n }).code, 0);
    assert.equal(evaluate(config, { "response.code": "200" }).code, 10);
    assert.equal(evaluate(config, { "request.id": "x" }).code, 10);
  });

  it("references exactly what it looked at, stopping once the answer is known", () => {
    const config = configOf(
      rule("r", `{match: [{clause: {request.path: {exact: /x}}}, {clause: {"request.headers[x-user]": {exact: bob}}}], actions: [{deny: {}}]}`),
    );
    assert.deepEqual(evaluate(config, { "request.path": "/x" }).referenced, ["request.path:EXACT"]);
    assert.deepEqual(evaluate(config, { "request.path": "/y" }).referenced, ["request.headers[x-user]:ABSENCE", "request.path:EXACT"]);
    assert.deepEqual(evaluate(config, { "request.headers": { "x-user": "bob" } }).referenced, ["request.headers[x-user]:EXACT", "request.path:ABSENCE"]);
    assert.deepEqual(evaluate(config, { "request.headers": "flat" }).referenced, ["request.headers:EXACT", "request.path:ABSENCE"]);
  });

  it("allow and deny lists say why", () => {
    const config = configOf(
      rule("a", `{actions: [{allowList: {attribute: source.user, values: [alice, bob]}}]}`) +
        rule("b", `{actions: [{allowList: {attribute: "request.headers[x-tier]", values: [free], blacklist: true}}]}`),
    );
    assert.equal(evaluate(config, { "source.user": "alice" }).code, 0);
    assert.equal(evaluate(config, { "source.user": "carol" }).message, "source.user carol is not whitelisted");
    assert.equal(evaluate(config, {}).message, "source.user is absent, so it is not whitelisted");
    assert.equal(evaluate(config, { "source.user": new Uint8Array([1]) }).message, "source.user is not a text value, so it is not whitelisted");
    const denied = evaluate(config, { "source.user": "bob", "request.headers": { "x-tier": "free" } });
    assert.equal(denied.code, 7);
    assert.equal(denied.message, "request.headers[x-tier] free is blacklisted");
    assert.equal(denied.deniedBy, "HubRule mesh-system/b");
  });

  it("evaluates in namespace/name order: the first denial decides", () => {
    const config = configOf(
      rule("zeta", `{actions: [{deny: {message: zeta}}]}`) +
        rule("alpha", `{actions: [{deny: {message: alpha}}]}`) +
        rule("a", `{actions: [{deny: {message: other-ns}}]}`, "aaa"),
      "zzz",
    );
    assert.deepEqual(
      config.rules.map((r) => r.id),
      ["HubRule aaa/a", "HubRule zzz/alpha", "HubRule zzz/zeta"],
    );
    assert.equal(evaluate(config, {}).message, "alpha");
  });

  it("rules outside the default namespace apply only where destination.namespace is theirs", () => {
    const config = configOf(rule("r", `{actions: [{deny: {message: team}}]}`, "team-a"));
    assert.equal(evaluate(config, { "destination.namespace": "team-b" }).code, 0);
    const hit = evaluate(config, { "destination.namespace": "team-a" });
    assert.equal(hit.message, "team");
    assert.deepEqual(hit.referenced, ["destination.namespace:EXACT"]);
  });

  it("valid duration and use count: defaults, or the smallest a rule asks for", () => {
    assert.deepEqual([evaluate(configOf(""), {}).validDurationMs, evaluate(configOf(""), {}).validUseCount], [5000, 10000]);
    const config = configOf(rule("r", `{validDuration: 250ms, validUseCount: 3, match: [{clause: {a: {exact: b}}}], actions: [{deny: {}}]}`));
    const e = evaluate(config, {});
    assert.deepEqual([e.validDurationMs, e.validUseCount], [250, 3]);
  });
});

describe("rule engine: quota plans", () => {
  const quota = `---
apiVersion: config.mesh.io/v1alpha2
kind: HubQuota
metadata: {name: rq}
spec: {name: requests, maxAmount: 10, validDuration: 1s, overrides: [{dimensions: {source.user: vip, "request.headers[x-plan]": gold}, maxAmount: 100}]}
`;
  const plan = (config: HubConfig, values: Parameters<typeof attrs>[0]) => {
    const referenced = new ReferencedAttributes();
    return { plan: planQuota(config, "requests", attrs(values), referenced), referenced: referenced.list().sort() };
  };

  it("an unknown quota is unlimited", () => {
    assert.deepEqual(plan(configOf(""), {}).plan, { kind: "unlimited", reason: "no HubQuota" });
  });

  it("without quota rules every request asking is charged; the first matching override has its own counter", () => {
    const config = configOf(quota);
    const shared = plan(config, { "source.user": "vip" });
    assert.equal(shared.plan.kind === "limited" && shared.plan.maxAmount, 10);
    assert.deepEqual(shared.referenced, ["request.headers[x-plan]:ABSENCE", "source.user:EXACT"]);
    const gold = plan(config, { "source.user": "vip", "request.headers": { "x-plan": "gold" } });
    assert.equal(gold.plan.kind === "limited" && gold.plan.maxAmount, 100);
    assert.notEqual(gold.plan.kind === "limited" && gold.plan.counterKey, shared.plan.kind === "limited" && shared.plan.counterKey);
  });

  it("with quota rules only requests a rule matches are charged", () => {
    const config = configOf(quota + rule("charge", `{match: [{clause: {request.path: {prefix: /api}}}], actions: [{quota: {name: requests}}]}`));
    assert.deepEqual(plan(config, { "request.path": "/web" }).plan, { kind: "unlimited", reason: "no rule applies" });
    assert.equal(plan(config, { "request.path": "/api/x" }).plan.kind, "limited");
    assert.equal(config.preconditionRules.length, 0, "a quota-only rule plays no part in preconditions");
  });
});

describe("check()", () => {
  const config = configOf(
    `---
apiVersion: config.mesh.io/v1alpha2
kind: HubQuota
metadata: {name: rq}
spec: {name: requests, maxAmount: 2, validDuration: 2s}
` + rule("r", `{match: [{clause: {request.path: {exact: /deny}}}], actions: [{deny: {}}]}`),
  );
  const dispatches: string[] = [];
  let clock = 0;
  const ctx = { config, quotas: new MemQuotaStore(() => clock), dictionary, onDispatch: (h: string, v: string) => dispatches.push(`${v} ${h}`) };
  // The memory store answers at once: check() is synchronous with it.
  const check = (...args: Parameters<typeof checkAny>): CheckResponseObject => {
    const r = checkAny(...args);
    assert.ok(!(r instanceof Promise), "a memory-store check answers synchronously");
    return r;
  };

  it("encodes referenced names with the client's global word count", () => {
    const r = check(ctx, { attributes: encodeAttributes(attrs({ "request.path": "/ok" }), dictionary), globalWordCount: 10 });
    // request.path is global word 17, beyond the client's 10 words: a message word
    assert.deepEqual(r.precondition.referencedAttributes, { words: ["request.path"], attributeMatches: [{ name: -1, condition: 2 }] });
    const full = check(ctx, { attributes: encodeAttributes(attrs({ "request.path": "/ok" }), dictionary), globalWordCount: dictionary.size });
    assert.deepEqual(full.precondition.referencedAttributes, { attributeMatches: [{ name: 17, condition: 2 }] });
  });

  it("quotas: all or nothing, best effort, negative amounts, deduplication", () => {
    const ask = (amount: number, bestEffort = false, deduplicationId = "") =>
      check(ctx, { attributes: {}, globalWordCount: dictionary.size, deduplicationId, quotas: { requests: { amount, bestEffort } } }).quotas.requests;
    assert.equal(ask(3).grantedAmount, 0);
    assert.equal(ask(1, false, "call-1").grantedAmount, 1);
    assert.equal(ask(1, false, "call-1").grantedAmount, 1, "a retry of the same call is not charged twice");
    assert.equal(ask(5, true).grantedAmount, 1);
    assert.equal(ask(1, true).grantedAmount, 0);
    assert.deepEqual(ask(1).validDuration, { seconds: 0, nanos: 0 }, "nothing granted: valid for no time (upstream redisquota)");
    assert.equal(ask(-1).status?.code, 3);
    clock += 2000;
    const fresh = ask(1);
    assert.equal(fresh.grantedAmount, 1);
    assert.deepEqual(fresh.validDuration, { seconds: 2, nanos: 0 }, "a fixed window's grant is valid for what is left of the window: all of a new one");
    clock += 500;
    assert.deepEqual(ask(1).validDuration, { seconds: 1, nanos: 500_000_000 });
    assert.ok(dispatches.includes("quota HubQuota mesh-system/rq"));
  });

  it("throws INVALID_ARGUMENT for unknown words", () => {
    assert.throws(
      () => check(ctx, { attributes: { strings: { "-1": 0 } }, globalWordCount: 0 }),
      (e: unknown) =>
        e instanceof RpcError && e.code === 3 && /^Request could not be processed due to invalid attributes: strings: attribute name -1/.test(e.message),
    );
  });
});
