// `hubs server` as a real process: reports landing in the access log, batched and delta-encoded.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { encodeAttributes, MessageWords } from "../../host/wire/compressed.ts";
import { attrs, DICTIONARY, metricsText, metricValue, reportRequest, startHub, tempDir, waitFor, writeConfig, type HubProcess } from "./support/hub_process.ts";

describe("hubs server: Report", () => {
  let hub: HubProcess;
  let logPath: string;
  let dir: string;
  before(async () => {
    dir = tempDir();
    logPath = join(dir, "access.jsonl");
    writeConfig(
      dir,
      "log.yaml",
      `apiVersion: config.mesh.io/v1alpha2
kind: HubAccessLog
metadata: {name: all, namespace: telemetry}
spec: {path: access.jsonl}
`,
    );
    hub = await startHub(["--configStoreURL", `fs://${dir}`]);
  });
  after(async () => {
    assert.equal(await hub.stop(), 0);
  });

  const lines = () =>
    existsSync(logPath)
      ? readFileSync(logPath, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l))
      : [];

  it("appends one JSON line per reported request (batch, shared default_words)", async () => {
    const r = await hub.client.report(
      reportRequest([
        { "request.path": "/a", "response.code": 200n, "request.headers": { "x-trace": "t1" } },
        { "request.path": "/b", "response.code": 503n, "connection.mtls": true },
      ]),
    );
    assert.equal(r.code, 0, r.details);
    const got = lines();
    assert.equal(got.length, 2);
    assert.match(got[0].time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual(got[0].attributes, {
      "request.headers": { stringMapValue: { entries: { "x-trace": "t1" } } },
      "request.path": { stringValue: "/a" },
      "response.code": { int64Value: "200" },
    });
    assert.deepEqual(got[1].attributes, {
      "connection.mtls": { boolValue: true },
      "request.path": { stringValue: "/b" },
      "response.code": { int64Value: "503" },
    });
  });

  it("applies DELTA_ENCODING entries onto the previous one", async () => {
    const words = new MessageWords(DICTIONARY);
    const first = encodeAttributes(attrs({ "request.path": "/d1", "source.name": "web" }), DICTIONARY, words);
    const second = encodeAttributes(attrs({ "request.path": "/d2" }), DICTIONARY, words);
    const r = await hub.client.report({
      attributes: [first, second],
      defaultWords: words.words,
      globalWordCount: DICTIONARY.size,
      repeatedAttributesSemantics: 0,
    });
    assert.equal(r.code, 0, r.details);
    const got = lines().slice(-2);
    assert.deepEqual(got[1].attributes, { "request.path": { stringValue: "/d2" }, "source.name": { stringValue: "web" } });
  });

  it("rejects a batch with an unknown word, writing nothing", async () => {
    const before = lines().length;
    const r = await hub.client.report({
      attributes: [{ strings: { "17": -4 } }],
      defaultWords: ["x"],
      globalWordCount: DICTIONARY.size,
      repeatedAttributesSemantics: 1,
    });
    assert.equal(r.code, 3);
    assert.match(
      r.details,
      /^Request could not be processed due to invalid attributes: attributes\[0\]: strings: value of request.path -4 is not a message word/,
    );
    assert.equal(lines().length, before);
  });

  it("counts report dispatches per access log", async () => {
    const text = await metricsText(hub);
    assert.equal(metricValue(text, 'hub_runtime_dispatches_total{handler="HubAccessLog telemetry/all",variety="report"}'), 4);
    assert.ok((metricValue(text, 'grpc_server_handled_total{grpc_type="unary",grpc_service="mesh.hub.v1.Hub",grpc_method="Report",grpc_code="OK"}') ?? 0) >= 2);
  });

  it("an empty report is fine", async () => {
    const r = await hub.client.report({});
    assert.equal(r.code, 0);
    await waitFor("nothing new", () => lines().length === 4 || undefined);
  });
});
