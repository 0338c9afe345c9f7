// The hub's one-pass ReportRequest reader (host/wire/report_request_reader.ts)
// answers exactly what the general path (protobufjs, the UTF-8 walk,
// decodeAttributes) answers, or leaves the request to it:
// - for any bytes — random layouts of every member, keys in any order or
//   given again, missing keys and values, unknown words, invalid UTF-8,
//   unknown fields, flipped bytes, truncations — the Report handler's
//   decoding equals the general path's: the same attribute maps in the same
//   insertion order, the same refusals, the same errors;
// - well-formed requests with known words are read by it, not left over;
// - refusals still name the entry and the field.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { decodeReportBytes, decodeReportGeneral } from "../../host/hubs/server.ts";
import type { AttributeMap } from "../../host/wire/compressed.ts";
import { readPlainReport } from "../../host/wire/report_request_reader.ts";
import { DICTIONARY, damage, damaged, type EntryLayout, type MapEntryLayout, text } from "./support/attribute_layouts.ts";
import { encodeReport as encode, requestLayout } from "./support/report_layouts.ts";

const RUNS = Number(process.env.READER_RUNS ?? 400);
const g = (word: string) => DICTIONARY.index.get(word)!;

/** A decoding outcome in a form where order counts: maps and string maps as entry lists. */
function outcome(decode: () => { entries: AttributeMap[]; refused: unknown[] }, wanted?: ReadonlySet<string>): unknown {
  try {
    const { entries, refused } = decode();
    return {
      refused,
      entries: entries.map((m) =>
        [...m]
          .filter(([name]) => wanted === undefined || wanted.has(name))
          .map(([name, v]) => {
            if (!("stringMapValue" in v)) return [name, v];
            const e = v.stringMapValue.entries;
            return [name, { stringMap: Object.entries(e), prototype: Object.getPrototypeOf(e) }];
          }),
      ),
    };
  } catch (e) {
    const err = e as Error & { code?: unknown };
    return { error: err.name, code: err.code, message: err.message };
  }
}

function sameAsGeneral(bytes: Buffer): void {
  assert.deepStrictEqual(
    outcome(() => decodeReportBytes(bytes, DICTIONARY)),
    outcome(() => decodeReportGeneral(bytes, DICTIONARY)),
  );
}

/** Attribute names a hub configuration may want (wanted sets are drawn from these). */
const WANTABLE = [...new Set([0, 15, 17, 26, 1, 2].map((i) => DICTIONARY.words[i])), "request.path", "x-user", "__proto__", "12", "-3", ""];
const wantedSet = fc.subarray(WANTABLE).map((names) => new Set(names));

/** With `wanted`, the handler's decoding holds the general path's maps cut down to those names, and refuses alike. */
function sameAsGeneralWanting(bytes: Buffer, wanted: ReadonlySet<string>): void {
  assert.deepStrictEqual(
    outcome(() => decodeReportBytes(bytes, DICTIONARY, wanted), wanted),
    outcome(() => decodeReportGeneral(bytes, DICTIONARY), wanted),
  );
  const plain = readPlainReport(bytes, DICTIONARY, wanted);
  for (const m of plain?.entries ?? []) for (const name of m.keys()) assert.ok(wanted.has(name), `${name} was decoded though not wanted`);
}

describe("hub ReportRequest reader", () => {
  it("decodes only the wanted attributes (what the hub's metrics read) and refuses exactly what the general path refuses, for any bytes", () => {
    fc.assert(
      fc.property(requestLayout(false), wantedSet, (layout, wanted) => {
        const bytes = encode(layout);
        sameAsGeneralWanting(bytes, wanted);
        assert.notEqual(readPlainReport(bytes, DICTIONARY, wanted), undefined, "a well-formed request is read in one pass");
      }),
      { numRuns: RUNS },
    );
    // An unknown word in an attribute nobody wants still costs its entry, as in the general path.
    const entry = (maps: MapEntryLayout[]): EntryLayout => ({ words: [], maps, wordsFirst: false });
    const code: MapEntryLayout = { member: 3, key: g("response.code"), value: { member: 3, int: 200n }, valueFirst: false };
    for (const unwanted of [
      { member: 2, key: g("request.path"), value: { member: 2, index: DICTIONARY.size }, valueFirst: false },
      { member: 9, key: g("request.headers"), value: { member: 9, pairs: [{ key: 0, value: -1 }] }, valueFirst: false },
      { member: 9, key: g("request.headers"), value: { member: 9, pairs: [{ key: DICTIONARY.size, value: 0 }] }, valueFirst: false },
    ] satisfies MapEntryLayout[]) {
      const bytes = encode({ entries: [entry([code, unwanted]), entry([code])], defaultWords: [], semantics: 1, trailerFirst: false });
      const wanted = new Set(["response.code"]);
      sameAsGeneralWanting(bytes, wanted);
      const { entries, refused } = decodeReportBytes(bytes, DICTIONARY, wanted);
      assert.deepStrictEqual([entries.length, refused.map((r) => r.index)], [1, [0]]);
    }
    fc.assert(
      fc.property(requestLayout(true), wantedSet, (layout, wanted) => sameAsGeneralWanting(encode(layout), wanted)),
      { numRuns: RUNS },
    );
    fc.assert(
      fc.property(requestLayout(false), damage, wantedSet, (layout, d, wanted) => sameAsGeneralWanting(damaged(encode(layout), d), wanted)),
      { numRuns: RUNS },
    );
  });

  it("answers what the general path answers for well-formed requests with known words (keys in any order, given again or missing), and reads them itself", () => {
    fc.assert(
      fc.property(requestLayout(false), (layout) => {
        const bytes = encode(layout);
        sameAsGeneral(bytes);
        assert.notEqual(readPlainReport(bytes, DICTIONARY), undefined, "a well-formed request is read in one pass");
      }),
      { numRuns: RUNS },
    );
  });

  it("answers what the general path answers with unknown words, invalid UTF-8 and out-of-range numbers", () => {
    fc.assert(
      fc.property(requestLayout(true), (layout) => sameAsGeneral(encode(layout))),
      { numRuns: RUNS },
    );
  });

  it("answers what the general path answers for damaged bytes", () => {
    fc.assert(
      fc.property(requestLayout(false), damage, (layout, d) => sameAsGeneral(damaged(encode(layout), d))),
      { numRuns: RUNS },
    );
  });

  it("orders each member as decodeAttributes does: indexes >= 0 ascending, then message words as they came", () => {
    const bytes = encode({
      defaultWords: ["my.b", "my.a", "v"].map(text),
      entries: [
        {
          wordsFirst: false,
          maps: [
            { member: 3, key: -1, value: { member: 3, int: 1n }, valueFirst: false },
            { member: 2, key: g("request.path"), value: { member: 2, index: -3 }, valueFirst: false },
            { member: 3, key: -2, value: { member: 3, int: 2n }, valueFirst: false },
            { member: 2, key: g("source.uid"), value: { member: 2, index: -3 }, valueFirst: false },
            { member: 3, key: g("response.code"), value: { member: 3, int: 200n }, valueFirst: false },
          ],
          words: [],
        },
      ],
      semantics: 1,
      trailerFirst: false,
    });
    assert.notEqual(readPlainReport(bytes, DICTIONARY), undefined);
    const [entry] = decodeReportBytes(bytes, DICTIONARY).entries;
    assert.deepEqual([...entry.keys()], ["source.uid", "request.path", "response.code", "my.b", "my.a"]);
    sameAsGeneral(bytes);
  });

  it("applies DELTA_ENCODING: each entry onto the one before", () => {
    const s = (key: number, index: number): MapEntryLayout => ({ member: 2, key, value: { member: 2, index }, valueFirst: false });
    const bytes = encode({
      defaultWords: ["/a", "/b", "GET"].map(text),
      entries: [
        { words: [], wordsFirst: false, maps: [s(g("request.path"), -1), s(g("request.method"), -3)] },
        { words: [], wordsFirst: false, maps: [s(g("request.path"), -2)] },
      ],
      trailerFirst: true,
    });
    const { entries } = decodeReportBytes(bytes, DICTIONARY);
    assert.deepEqual(
      entries.map((e) => Object.fromEntries(e)),
      [
        { "request.path": { stringValue: "/a" }, "request.method": { stringValue: "GET" } },
        { "request.path": { stringValue: "/b" }, "request.method": { stringValue: "GET" } },
      ],
    );
    sameAsGeneral(bytes);
  });

  it("refuses alone an entry using a default word that is not UTF-8, naming it", () => {
    const s = (index: number): MapEntryLayout => ({ member: 2, key: g("request.path"), value: { member: 2, index }, valueFirst: false });
    const bytes = encode({
      defaultWords: [text("/ok"), Uint8Array.of(0xed, 0xbf, 0xbf)],
      entries: [
        { words: [], wordsFirst: false, maps: [s(-1)] },
        { words: [], wordsFirst: false, maps: [s(-2)] },
      ],
      semantics: 1,
      trailerFirst: false,
    });
    assert.equal(readPlainReport(bytes, DICTIONARY), undefined);
    const { entries, refused } = decodeReportBytes(bytes, DICTIONARY);
    assert.equal(entries.length, 1);
    assert.deepEqual(refused, [
      { index: 1, reason: "Request could not be processed due to invalid attributes: attributes[1]: default_words[1] is not valid UTF-8" },
    ]);
  });

  it("refuses alone an entry with an unknown word, naming the member and the index", () => {
    const bytes = encode({
      defaultWords: [text("/ok")],
      entries: [
        { words: [], wordsFirst: false, maps: [{ member: 5, key: -7, value: { member: 5, varint: 1 }, valueFirst: false }] },
        { words: [], wordsFirst: false, maps: [{ member: 2, key: g("request.path"), value: { member: 2, index: -1 }, valueFirst: false }] },
      ],
      semantics: 1,
      trailerFirst: false,
    });
    const { entries, refused } = decodeReportBytes(bytes, DICTIONARY);
    assert.equal(entries.length, 1);
    assert.deepEqual(refused, [
      {
        index: 0,
        reason:
          "Request could not be processed due to invalid attributes: attributes[0]: bools: attribute name -7 is not a message word (the message has 1: -1..-1)",
      },
    ]);
  });
});
