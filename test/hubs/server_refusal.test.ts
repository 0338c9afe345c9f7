// `hubs server` refuses only what is wrong: a Check with a string that is not
// valid UTF-8 (as proto3 runtimes do), and in a Report only the entries
// concerned — the rest of the batch reaches the access log.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { messageType } from "../../host/wire/protos.ts";
import {
  attrs,
  checkRequest,
  DICTIONARY,
  metricsText,
  metricValue,
  reportRequest,
  startHub,
  tempDir,
  writeConfig,
  type HubProcess,
} from "./support/hub_process.ts";
import { encodeAttributes, MessageWords } from "../../host/wire/compressed.ts";

// Encodes `request` and replaces the placeholder QQQ (3 bytes) with ED BF BF: a lone surrogate's WTF-8, not UTF-8.
function withInvalidUtf8(typeName: string, request: object): Buffer {
  const type = messageType(typeName);
  const bytes = Buffer.from(type.encode(type.fromObject(request)).finish());
  const at = bytes.indexOf("QQQ");
  assert.ok(at >= 0 && bytes.indexOf("QQQ", at + 1) < 0, "one placeholder");
  bytes.set([0xed, 0xbf, 0xbf], at);
  return bytes;
}

describe("hubs server: per-request refusal", () => {
  let hub: HubProcess;
  let logPath: string;
  before(async () => {
    const dir = tempDir();
    logPath = join(dir, "access.jsonl");
    writeConfig(
      dir,
      "log.yaml",
      "apiVersion: config.mesh.io/v1alpha2\nkind: HubAccessLog\nmetadata: {name: all, namespace: telemetry}\nspec: {path: access.jsonl}\n",
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

  it("a Check carrying invalid UTF-8 is refused with INVALID_ARGUMENT naming the field", async () => {
    const r = await hub.client.callRaw("Check", withInvalidUtf8("mesh.hub.v1.CheckRequest", checkRequest({ "source.uid": "QQQ" })));
    assert.equal(r.code, 3);
    assert.match(r.details, /^malformed CheckRequest: attributes\.words\[\d+\] is not valid UTF-8$/);
    const ok = await hub.client.check(checkRequest({ "source.uid": "kubernetes://web.ns" }));
    assert.equal(ok.code, 0, "valid requests are served as before");
  });

  it("a Report entry using an invalid default word is refused alone; the other entries are logged", async () => {
    const request = reportRequest([
      { "request.path": "/ok-1", "response.code": 200n },
      { "request.path": "QQQ", "response.code": 200n },
      { "request.path": "/ok-2", "response.code": 200n },
    ]);
    const r = await hub.client.callRaw("Report", withInvalidUtf8("mesh.hub.v1.ReportRequest", request));
    assert.equal(r.code, 0, r.details);
    assert.deepEqual(
      lines().map((l) => l.attributes["request.path"].stringValue),
      ["/ok-1", "/ok-2"],
    );
  });

  it("a Report entry with an unknown word is refused alone", async () => {
    const words = new MessageWords(DICTIONARY);
    const good = encodeAttributes(attrs({ "request.path": "/ok-3" }), DICTIONARY, words);
    const r = await hub.client.report({
      attributes: [{ strings: { "17": -40 } }, good],
      defaultWords: words.words,
      globalWordCount: DICTIONARY.size,
      repeatedAttributesSemantics: 1,
    });
    assert.equal(r.code, 0, r.details);
    assert.equal(lines().at(-1).attributes["request.path"].stringValue, "/ok-3");
  });

  it("a batch with nothing to take is refused whole, and refusals are counted", async () => {
    const r = await hub.client.callRaw("Report", withInvalidUtf8("mesh.hub.v1.ReportRequest", reportRequest([{ "request.path": "QQQ" }])));
    assert.equal(r.code, 3);
    assert.match(r.details, /^Request could not be processed due to invalid attributes: attributes\[0\]: default_words\[\d+\] is not valid UTF-8/);
    // The two entries refused alone above; a batch refused whole is counted by the gRPC status metrics.
    assert.equal(metricValue(await metricsText(hub), "hub_report_entries_refused_total"), 2);
  });
});
