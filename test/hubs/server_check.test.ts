// `hubs server` as a real process, driven over gRPC: preconditions, quotas, malformed input.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { messageType } from "../../host/wire/protos.ts";
import { checkRequest, DICTIONARY, metricsText, metricValue, startHub, tempDir, writeConfig, type HubProcess } from "./support/hub_process.ts";

const RULES = `
apiVersion: config.mesh.io/v1alpha2
kind: HubRule
metadata: {name: deny-admin}
spec:
  match:
  - clause:
      request.path: {prefix: /admin}
  - clause:
      request.headers[x-user]: {exact: mallory}
  actions:
  - deny: {code: UNAUTHENTICATED, message: "admins only"}
---
apiVersion: config.mesh.io/v1alpha2
kind: HubRule
metadata: {name: method-allowlist}
spec:
  match:
  - clause:
      request.path: {regex: "/api/.*"}
  actions:
  - allowList: {attribute: request.method, values: [GET, HEAD]}
---
apiVersion: config.mesh.io/v1alpha2
kind: HubRule
metadata: {name: user-blocklist}
spec:
  actions:
  - allowList: {attribute: "request.headers[x-user]", values: [eve], blacklist: true}
---
apiVersion: config.mesh.io/v1alpha2
kind: HubRule
metadata: {name: charge-api}
spec:
  match:
  - clause:
      request.path: {prefix: /api/}
  actions:
  - quota: {name: requests}
---
apiVersion: config.mesh.io/v1alpha2
kind: HubQuota
metadata: {name: requests}
spec:
  name: requests
  maxAmount: 3
  validDuration: 300s
  overrides:
  - dimensions: {source.user: vip}
    maxAmount: 6
---
apiVersion: config.mesh.io/v1alpha2
kind: HubRule
metadata: {name: charge-burst}
spec:
  match:
  - clause:
      request.path: {prefix: /burst/}
  actions:
  - quota: {name: burst}
---
apiVersion: config.mesh.io/v1alpha2
kind: HubQuota
metadata: {name: burst}
spec:
  name: burst
  maxAmount: 3
  validDuration: 1s
`;

const CONDITION_ABSENCE = 1;
const CONDITION_EXACT = 2;

describe("hubs server: Check", () => {
  let hub: HubProcess;
  before(async () => {
    const dir = tempDir();
    writeConfig(dir, "rules.yaml", RULES);
    hub = await startHub(["--configStoreURL", `fs://${dir}`, "--maxMessageSize", "4096"]);
  });
  after(async () => {
    assert.equal(await hub.stop(), 0, "SIGTERM ends the server with exit code 0");
  });

  it("passes a request no rule denies, with cache hints", async () => {
    const r = await hub.client.check(checkRequest({ "request.path": "/home", "request.method": "POST" }));
    assert.equal(r.code, 0, r.details);
    const p = r.response!.precondition;
    assert.equal(p.status?.code ?? 0, 0);
    assert.equal(p.validDuration?.seconds, 5);
    assert.equal(p.validUseCount, 10000);
    // request.path looked at (EXACT); request.headers[x-user] absent (ABSENCE with map key, a message word)
    const ra = p.referencedAttributes!;
    const word = (i: number) => (i >= 0 ? DICTIONARY.words[i] : ra.words![-i - 1]);
    const condition = (c?: number) => (c === CONDITION_EXACT ? "EXACT" : c === CONDITION_ABSENCE ? "ABSENCE" : `?${c}`);
    const refs = ra.attributeMatches!.map((m) => `${word(m.name ?? 0)}${m.mapKey ? `[${word(m.mapKey)}]` : ""}:${condition(m.condition)}`).sort();
    assert.deepEqual(refs, ["request.headers[x-user]:ABSENCE", "request.path:EXACT"]);
    assert.deepEqual(ra.words, ["x-user"], "strings outside the global list travel as message words");
  });

  it("denies by attribute prefix with the configured code and message", async () => {
    const r = await hub.client.check(checkRequest({ "request.path": "/admin/users" }));
    assert.equal(r.response!.precondition.status?.code, 16);
    assert.equal(r.response!.precondition.status?.message, "admins only");
  });

  it("denies by a string-map entry", async () => {
    const r = await hub.client.check(checkRequest({ "request.path": "/home", "request.headers": { "x-user": "mallory" } }));
    assert.equal(r.response!.precondition.status?.code, 16);
  });

  it("allow list: a listed value passes, another is PERMISSION_DENIED", async () => {
    const ok = await hub.client.check(checkRequest({ "request.path": "/api/items", "request.method": "GET" }));
    assert.equal(ok.response!.precondition.status?.code ?? 0, 0);
    const no = await hub.client.check(checkRequest({ "request.path": "/api/items", "request.method": "DELETE" }));
    assert.equal(no.response!.precondition.status?.code, 7);
    assert.equal(no.response!.precondition.status?.message, "request.method DELETE is not whitelisted");
  });

  it("deny list: a listed value is PERMISSION_DENIED", async () => {
    const no = await hub.client.check(checkRequest({ "request.path": "/home", "request.headers": { "x-user": "eve" } }));
    assert.equal(no.response!.precondition.status?.code, 7);
    assert.equal(no.response!.precondition.status?.message, "request.headers[x-user] eve is blacklisted");
  });

  // The windows are long where a test asks several times within one (a loaded machine may take seconds
  // for a few requests) and short only where a test waits for one to end.
  it("quota: grants, then exhaustion within the window", async () => {
    const ask = () => hub.client.check(checkRequest({ "request.path": "/api/q", "request.method": "GET" }, { requests: { amount: 1 } }));
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push((await ask()).response!.quotas!.requests);
    assert.deepEqual(
      answers.map((a) => a.grantedAmount ?? 0),
      [1, 1, 1, 0],
    );
    const valid = answers[0].validDuration?.seconds ?? 0;
    assert.ok(valid > 200 && valid <= 300, `a grant is valid for what is left of the fixed window (300 s): ${valid}`);
    assert.equal(answers[3].validDuration?.seconds ?? 0, 0, "nothing granted: valid for no time");
  });

  it("quota: refill after the window", async () => {
    const ask = (bestEffort: boolean, amount: number) =>
      hub.client.check(checkRequest({ "request.path": "/burst/q", "request.method": "GET" }, { burst: { amount, bestEffort } }));
    assert.equal((await ask(false, 3)).response!.quotas!.burst.grantedAmount, 3, "a fresh window grants its maximum");
    await new Promise((r) => setTimeout(r, 1100));
    const refilled = await ask(true, 5);
    assert.equal(refilled.response!.quotas!.burst.grantedAmount, 3, "best effort grants what is left of a fresh window");
  });

  it("quota: an override by dimension has its own counter and maximum", async () => {
    const ask = () =>
      hub.client.check(checkRequest({ "request.path": "/api/vip", "request.method": "GET", "source.user": "vip" }, { requests: { amount: 4 } }));
    assert.equal((await ask()).response!.quotas!.requests.grantedAmount, 4);
    assert.equal((await ask()).response!.quotas!.requests.grantedAmount ?? 0, 0, "all or nothing: 2 left, 4 asked");
  });

  it("quota: a request no quota rule matches, or an unknown quota, is granted in full", async () => {
    const r = await hub.client.check(checkRequest({ "request.path": "/home" }, { requests: { amount: 100 }, unknown: { amount: 7 } }));
    assert.equal(r.response!.quotas!.requests.grantedAmount, 100);
    assert.equal(r.response!.quotas!.unknown.grantedAmount, 7);
  });

  it("quota: no quota results when the precondition denies", async () => {
    const r = await hub.client.check(checkRequest({ "request.path": "/admin" }, { requests: { amount: 1 } }));
    assert.equal(r.response!.precondition.status?.code, 16);
    assert.deepEqual(r.response!.quotas ?? {}, {});
  });

  it("malformed bytes are INVALID_ARGUMENT, and the server lives on", async () => {
    const r = await hub.client.callRaw("Check", Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]));
    assert.equal(r.code, 3);
    assert.match(r.details, /malformed CheckRequest/);
    const again = await hub.client.check(checkRequest({ "request.path": "/home" }));
    assert.equal(again.code, 0);
  });

  it("an unknown word index is INVALID_ARGUMENT with the upstream prefix", async () => {
    const r = await hub.client.check({ attributes: { strings: { "5000": 1 } }, globalWordCount: DICTIONARY.size });
    assert.equal(r.code, 3);
    assert.match(r.details, /^Request could not be processed due to invalid attributes: strings: attribute name 5000 is not a global word/);
    const local = await hub.client.check({ attributes: { words: ["a"], strings: { "-1": -2 } }, globalWordCount: DICTIONARY.size });
    assert.equal(local.code, 3);
    assert.match(local.details, /value of a -2 is not a message word/);
  });

  it("a client with more global words than the hub is INVALID_ARGUMENT (it then shrinks its list)", async () => {
    const r = await hub.client.check({ attributes: {}, globalWordCount: DICTIONARY.size + 10 });
    assert.equal(r.code, 3);
    assert.match(r.details, /^Request could not be processed due to invalid attributes: the client's global word list has/);
  });

  it("a message above --maxMessageSize is RESOURCE_EXHAUSTED", async () => {
    const r = await hub.client.check(checkRequest({ "request.path": "/x", "request.useragent": "a".repeat(5000) }));
    assert.equal(r.code, 8);
  });

  it("exports gRPC and hub counters", async () => {
    const text = await metricsText(hub);
    assert.ok(
      (metricValue(text, 'grpc_server_handled_total{grpc_type="unary",grpc_service="mesh.hub.v1.Hub",grpc_method="Check",grpc_code="OK"}') ?? 0) >= 10,
      text,
    );
    assert.ok(
      (metricValue(text, 'grpc_server_handled_total{grpc_type="unary",grpc_service="mesh.hub.v1.Hub",grpc_method="Check",grpc_code="INVALID_ARGUMENT"}') ??
        0) >= 3,
    );
    assert.ok((metricValue(text, 'grpc_server_msg_received_total{grpc_type="unary",grpc_service="mesh.hub.v1.Hub",grpc_method="Check"}') ?? 0) >= 10);
    assert.equal(metricValue(text, "hub_config_rule_configs_total"), 5);
    assert.equal(metricValue(text, "hub_config_rule_config_errors_total"), 0);
    assert.equal(metricValue(text, "hub_config_handler_configs_total"), 2);
    assert.ok((metricValue(text, 'hub_runtime_dispatches_total{handler="HubQuota mesh-system/requests",variety="quota"}') ?? 0) >= 5);
    assert.ok((metricValue(text, 'hub_runtime_dispatches_total{handler="HubRule mesh-system/deny-admin",variety="check"}') ?? 0) >= 2);
    assert.equal(metricValue(text, "hub_loadshedding_requests_throttled_total"), 0);
    assert.match(text, /^mesh_build\{component="hubs",tag="[^"]+",revision="[^"]+"\} 1$/m);
    assert.match(text, /^process_cpu_seconds_total /m);
  });

  it("answers with the message types of the wire protocol", () => {
    // guards the test helper itself: the response type has the fields used above
    const t = messageType("mesh.hub.v1.CheckResponse");
    assert.ok(t.fields.precondition && t.fields.quotas);
  });
});
