import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  AttributeDecodeError,
  attributeText,
  decodeAttributes,
  encodeAttributes,
  GlobalDictionary,
  MessageWords,
  type AttributeMap,
  type AttributeValue,
} from "../../host/wire/compressed.ts";
import { GLOBAL_WORDS } from "../../host/wire/global_words.ts";
import { messageType } from "../../host/wire/protos.ts";

const dictionary = new GlobalDictionary(GLOBAL_WORDS);
const type = messageType("mesh.hub.v1.CompressedAttributes");

/** Through the real wire: encode object → bytes → protobufjs decode → attribute map. */
function roundTrip(map: AttributeMap): AttributeMap {
  const bytes = type.encode(type.fromObject(encodeAttributes(map, dictionary))).finish();
  return decodeAttributes(type.decode(bytes) as never, { dictionary });
}

/** Plain comparable form: bytes as arrays, records with ordinary prototypes. */
function plain(map: AttributeMap): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // defineProperty: an attribute named "__proto__" is data, not a prototype.
  const set = (k: string, v: unknown) => Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  for (const [k, v] of map) {
    if ("bytesValue" in v) set(k, { bytesValue: [...v.bytesValue] });
    else if ("stringMapValue" in v) set(k, { stringMapValue: { entries: Object.fromEntries(Object.entries(v.stringMapValue.entries)) } });
    else if ("timestampValue" in v) set(k, { timestampValue: { ...v.timestampValue } });
    else set(k, { ...v });
  }
  return out;
}

const every: AttributeMap = new Map<string, AttributeValue>([
  ["request.path", { stringValue: "/api/v1" }],
  ["custom.word", { stringValue: "not-global" }],
  ["response.code", { int64Value: 503n }],
  ["request.size", { int64Value: -9_007_199_254_740_993n }],
  ["sample.ratio", { doubleValue: 0.25 }],
  ["connection.mtls", { boolValue: true }],
  ["request.time", { timestampValue: { seconds: 1_700_000_000n, nanos: 5 } }],
  ["response.duration", { durationValue: { seconds: 1n, nanos: 500_000_000 } }],
  ["source.ip", { bytesValue: new Uint8Array([10, 0, 0, 1]) }],
  ["request.headers", { stringMapValue: { entries: { ":method": "GET", "x-custom": "v", authorization: "JWT-Token" } } }],
]);

describe("compressed attributes", () => {
  it("round-trips every value type through the wire", () => {
    assert.deepEqual(plain(roundTrip(every)), plain(every));
  });

  it("uses global indexes for global words and -1, -2, … in first-use order for the rest", () => {
    const out = encodeAttributes(
      new Map<string, AttributeValue>([
        ["request.headers", { stringMapValue: { entries: { authorization: "JWT-Token" } } }],
        ["request.path", { stringValue: "JWT-Token" }],
        ["my.attr", { stringValue: "x" }],
      ]),
      dictionary,
    );
    const g = (w: string) => dictionary.index.get(w)!;
    assert.equal(g("request.headers"), 15);
    assert.equal(g("authorization"), 50);
    assert.deepEqual(out.words, ["JWT-Token", "my.attr", "x"]);
    assert.deepEqual(out.stringMaps, { "15": { entries: { "50": -1 } } });
    assert.deepEqual(out.strings, { [g("request.path")]: -1, "-2": -3 });
  });

  it("words beyond the peer's global word count go to the message list", () => {
    const words = new MessageWords(dictionary, 111);
    assert.equal(words.indexOf("source.ip"), 0);
    const late = GLOBAL_WORDS[150];
    assert.equal(words.indexOf(late), -1);
    assert.deepEqual(words.words, [late]);
  });

  it("shares one word table across report entries (default_words)", () => {
    const shared = new MessageWords(dictionary);
    const a = encodeAttributes(new Map([["request.path", { stringValue: "/shared" }]]), dictionary, shared);
    const b = encodeAttributes(new Map([["request.path", { stringValue: "/shared" }]]), dictionary, shared);
    assert.equal(a.words, undefined);
    assert.deepEqual(a.strings, b.strings);
    assert.deepEqual(shared.words, ["/shared"]);
    const decoded = decodeAttributes({ strings: b.strings } as never, { dictionary, defaultWords: shared.words });
    assert.deepEqual(decoded.get("request.path"), { stringValue: "/shared" });
  });

  it("prefers the message's own words over default_words", () => {
    const decoded = decodeAttributes({ words: ["own"], strings: { "17": -1 } }, { dictionary, defaultWords: ["default"] });
    assert.deepEqual(decoded.get("request.path"), { stringValue: "own" });
  });

  it("applies onto an existing map (delta encoding)", () => {
    const base = decodeAttributes({ strings: { "17": 18 } }, { dictionary });
    const next = decodeAttributes({ int64s: { "30": 200 } }, { dictionary }, new Map(base));
    assert.deepEqual([...next.keys()].sort(), ["request.path", "response.code"]);
    assert.deepEqual(next.get("request.path"), { stringValue: GLOBAL_WORDS[18] });
  });

  const rejects: Array<[string, object, RegExp]> = [
    ["global name beyond the list", { strings: { "5000": 0 } }, /^strings: attribute name 5000 is not a global word \(the hub knows \d+: 0\.\.\d+\)$/],
    ["message name with no words", { int64s: { "-1": 1 } }, /^int64s: attribute name -1 is not a message word \(the message has 0\)$/],
    [
      "message value beyond the words",
      { words: ["a"], strings: { "-1": -2 } },
      /^strings: value of a -2 is not a message word \(the message has 1: -1\.\.-1\)$/,
    ],
    ["map key", { stringMaps: { "15": { entries: { "9999": 0 } } } }, /^string_maps: key in request.headers 9999 is not a global word/],
    ["map value", { stringMaps: { "15": { entries: { "0": -7 } } } }, /^string_maps: value in request.headers -7 is not a message word/],
  ];
  for (const [name, message, error] of rejects) {
    it(`rejects an unknown index: ${name}`, () => {
      assert.throws(
        () => decodeAttributes(message as never, { dictionary }),
        (e: unknown) => e instanceof AttributeDecodeError && e.code === "ATTRIBUTES_INVALID" && error.test(e.message),
      );
    });
  }

  it("keeps attributes and map keys named __proto__ as data", () => {
    const map: AttributeMap = new Map<string, AttributeValue>([
      ["__proto__", { boolValue: false }],
      ["request.headers", { stringMapValue: { entries: Object.fromEntries([["__proto__", "x"]]) } }],
    ]);
    const back = roundTrip(map);
    assert.deepEqual(back.get("__proto__"), { boolValue: false });
    const entries = (back.get("request.headers") as { stringMapValue: { entries: Record<string, string> } }).stringMapValue.entries;
    assert.deepEqual(Object.entries(entries), [["__proto__", "x"]]);
  });

  it("round-trips arbitrary attribute maps (property)", () => {
    const word = fc.oneof(fc.constantFrom(...GLOBAL_WORDS.slice(0, 60)), fc.string({ maxLength: 12 }));
    const value: fc.Arbitrary<AttributeValue> = fc.oneof(
      word.map((s) => ({ stringValue: s })),
      fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((n) => ({ int64Value: n })),
      fc.double({ noNaN: true }).map((d) => ({ doubleValue: d })),
      fc.boolean().map((b) => ({ boolValue: b })),
      fc.uint8Array({ maxLength: 8 }).map((b) => ({ bytesValue: b })),
      fc.record({ seconds: fc.bigInt({ min: 0n, max: 2n ** 40n }), nanos: fc.integer({ min: 0, max: 999_999_999 }) }).map((t) => ({ timestampValue: t })),
      fc.dictionary(word, word, { maxKeys: 4 }).map((entries) => ({ stringMapValue: { entries: { ...entries } } })),
    );
    fc.assert(
      fc.property(fc.dictionary(word, value, { maxKeys: 8 }), (record) => {
        const map: AttributeMap = new Map(Object.entries(record));
        assert.deepEqual(plain(roundTrip(map)), plain(map));
      }),
      { numRuns: 200 },
    );
  });

  it("gives the text form of scalar values for comparisons", () => {
    assert.equal(attributeText({ int64Value: 200n }), "200");
    assert.equal(attributeText({ boolValue: false }), "false");
    assert.equal(attributeText({ doubleValue: 1.5 }), "1.5");
    assert.equal(attributeText({ bytesValue: new Uint8Array() }), undefined);
  });
});
