// invalidStrings finds every string field of a message that is not valid
// UTF-8 and names it by its path (repeated and map fields with their
// occurrence), so the hub can refuse just what is wrong.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { blankInvalid, invalidStrings, isUtf8Range, reportInvalidity } from "../../host/wire/utf8_strings.ts";
import { messageType } from "../../host/wire/protos.ts";

const LONE_SURROGATE = [0xed, 0xbf, 0xbf]; // WTF-8, not UTF-8

/** Encodes `value` and puts invalid bytes in place of every `QQQ`. */
function withInvalid(typeName: string, value: object): Buffer {
  const type = messageType(typeName);
  const bytes = Buffer.from(type.encode(type.fromObject(value)).finish());
  for (let at = bytes.indexOf("QQQ"); at >= 0; at = bytes.indexOf("QQQ", at + 3)) bytes.set(LONE_SURROGATE, at);
  return bytes;
}

const paths = (typeName: string, bytes: Uint8Array) => invalidStrings(messageType(typeName), bytes).map((s) => s.path);

describe("invalidStrings", () => {
  it("finds nothing in a valid message", () => {
    const bytes = withInvalid("mesh.hub.v1.CheckRequest", {
      attributes: { words: ["é", "/a"], strings: { "-1": -2 } },
      deduplicationId: "d",
      quotas: { q: { amount: 1 } },
    });
    assert.deepEqual(paths("mesh.hub.v1.CheckRequest", bytes), []);
  });

  it("names nested, repeated and map fields with their occurrence", () => {
    const bytes = withInvalid("mesh.hub.v1.CheckRequest", {
      attributes: { words: ["ok", "QQQ", "also ok", "xQQQ"], strings: { "-1": -2 } },
      deduplicationId: "QQQ",
      quotas: { fine: { amount: 1 }, QQQ: { amount: 2 } },
    });
    assert.deepEqual(paths("mesh.hub.v1.CheckRequest", bytes), ["attributes.words[1]", "attributes.words[3]", "deduplicationId", "quotas[1].key"]);
  });

  it("names report entries and default words, which reportInvalidity sorts out", () => {
    const bytes = withInvalid("mesh.hub.v1.ReportRequest", { attributes: [{ words: ["a"] }, { words: ["b", "QQQ"] }], defaultWords: ["c", "QQQ"] });
    const invalid = invalidStrings(messageType("mesh.hub.v1.ReportRequest"), bytes);
    assert.deepEqual(
      invalid.map((s) => s.path),
      ["attributes[1].words[1]", "defaultWords[1]"],
    );
    assert.deepEqual(reportInvalidity(invalid), { entries: new Map([[1, "words[1]"]]), defaultWords: new Set([1]) });
    assert.deepEqual([...blankInvalid(bytes, invalid).subarray(invalid[1].start, invalid[1].end)], [0x3f, 0x3f, 0x3f]);
  });

  it("keeps what it found before malformed framing, and stops there", () => {
    const bytes = withInvalid("mesh.hub.v1.CheckRequest", { deduplicationId: "QQQ", quotas: { QQQ: { amount: 1 } } });
    assert.deepEqual(paths("mesh.hub.v1.CheckRequest", bytes), ["deduplicationId", "quotas[0].key"]);
    assert.deepEqual(paths("mesh.hub.v1.CheckRequest", bytes.subarray(0, bytes.length - 2)), ["deduplicationId"]);
  });

  it("isUtf8Range tells ASCII, valid and invalid ranges", () => {
    const bytes = Buffer.from([0x61, 0xc3, 0xa9, ...LONE_SURROGATE, 0x62]);
    assert.equal(isUtf8Range(bytes, 0, 3), true);
    assert.equal(isUtf8Range(bytes, 0, 2), false);
    assert.equal(isUtf8Range(bytes, 3, 6), false);
    assert.equal(isUtf8Range(bytes, 6, 7), true);
    assert.equal(isUtf8Range(bytes, 2, 2), true);
  });
});
