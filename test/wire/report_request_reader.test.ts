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
import type Long from "long";
import protobuf from "protobufjs";
import { decodeReportBytes, decodeReportGeneral } from "../../host/hubs/server.ts";
import { GlobalDictionary, type AttributeMap } from "../../host/wire/compressed.ts";
import { GLOBAL_WORDS } from "../../host/wire/global_words.ts";
import { readPlainReport } from "../../host/wire/report_request_reader.ts";

// protobufjs's own 64-bit integers (the `long` package it depends on, not one of ours).
const LongOfProtobuf = protobuf.util.Long as unknown as typeof Long;
const int64 = (v: bigint) => LongOfProtobuf.fromString(v.toString());

const DICTIONARY = new GlobalDictionary(GLOBAL_WORDS);
const RUNS = Number(process.env.READER_RUNS ?? 400);
const g = (word: string) => DICTIONARY.index.get(word)!;

// ---------------------------------------------------------------------------
// Requests as wire layouts, written field by field (protobufjs's Writer), so
// that any order, repetition or omission can be produced.

type MapValue =
  | { member: 2; index: number }
  | { member: 3; int: bigint }
  | { member: 4; double: number }
  | { member: 5; varint: number }
  | { member: 6 | 7; seconds?: bigint; nanos?: number }
  | { member: 8; bytes: Uint8Array }
  | { member: 9; pairs: Array<{ key?: number; value?: number }> };

interface MapEntryLayout {
  key?: number;
  value?: MapValue;
  member: number;
  valueFirst: boolean;
}

interface EntryLayout {
  words: Uint8Array[];
  maps: MapEntryLayout[];
  wordsFirst: boolean;
}

interface RequestLayout {
  entries: EntryLayout[];
  defaultWords: Uint8Array[];
  globalWordCount?: number;
  semantics?: number;
  trailerFirst: boolean;
}

const text = (s: string) => new Uint8Array(Buffer.from(s, "utf8"));

function writeValue(w: protobuf.Writer, v: MapValue): void {
  switch (v.member) {
    case 2:
      w.uint32((2 << 3) | 0).sint32(v.index);
      return;
    case 3:
      w.uint32((2 << 3) | 0).int64(int64(v.int));
      return;
    case 4:
      w.uint32((2 << 3) | 1).double(v.double);
      return;
    case 5:
      w.uint32((2 << 3) | 0).uint64(v.varint);
      return;
    case 6:
    case 7:
      w.uint32((2 << 3) | 2).fork();
      if (v.seconds !== undefined) w.uint32((1 << 3) | 0).int64(int64(v.seconds));
      if (v.nanos !== undefined) w.uint32((2 << 3) | 0).int32(v.nanos);
      w.ldelim();
      return;
    case 8:
      w.uint32((2 << 3) | 2).bytes(v.bytes);
      return;
    case 9:
      w.uint32((2 << 3) | 2).fork();
      for (const p of v.pairs) {
        w.uint32((1 << 3) | 2).fork();
        if (p.key !== undefined) w.uint32((1 << 3) | 0).sint32(p.key);
        if (p.value !== undefined) w.uint32((2 << 3) | 0).sint32(p.value);
        w.ldelim();
      }
      w.ldelim();
  }
}

function writeEntry(w: protobuf.Writer, e: EntryLayout): void {
  const words = () => e.words.forEach((word) => w.uint32((1 << 3) | 2).bytes(word));
  if (e.wordsFirst) words();
  for (const m of e.maps) {
    w.uint32((m.member << 3) | 2).fork();
    const key = () => m.key !== undefined && w.uint32((1 << 3) | 0).sint32(m.key);
    const value = () => m.value && writeValue(w, m.value);
    if (m.valueFirst) value(), key();
    else key(), value();
    w.ldelim();
  }
  if (!e.wordsFirst) words();
}

function encode(r: RequestLayout): Buffer {
  const w = protobuf.Writer.create();
  const trailer = () => {
    if (r.globalWordCount !== undefined) w.uint32((3 << 3) | 0).uint32(r.globalWordCount);
    if (r.semantics !== undefined) w.uint32((4 << 3) | 0).int32(r.semantics);
  };
  if (r.trailerFirst) trailer();
  for (const e of r.entries) {
    w.uint32((1 << 3) | 2).fork();
    writeEntry(w, e);
    w.ldelim();
  }
  r.defaultWords.forEach((word) => w.uint32((2 << 3) | 2).bytes(word));
  if (!r.trailerFirst) trailer();
  return Buffer.from(w.finish());
}

// ---------------------------------------------------------------------------
// Generators: `wild` adds unknown words, invalid UTF-8 and odd layouts.

const goodWords = fc
  .array(fc.oneof(fc.string(), fc.constantFrom("__proto__", "12", "-3", "\uFEFFbom", "request.path", "x-user")), { maxLength: 6 })
  .map((ws) => ws.map(text));
const anyWord = fc.oneof(
  { weight: 5, arbitrary: fc.string().map(text) },
  { weight: 1, arbitrary: fc.constantFrom(Uint8Array.of(0xed, 0xbf, 0xbf), Uint8Array.of(0x61, 0xc3), Uint8Array.of(0xff)) },
);

function index(localWords: number, wild: boolean): fc.Arbitrary<number> {
  const known = [fc.integer({ min: 0, max: DICTIONARY.size - 1 }), fc.constantFrom(0, 15, 17, 26)];
  if (localWords > 0) known.push(fc.integer({ min: -localWords, max: -1 }));
  if (!wild) return fc.oneof(...known);
  return fc.oneof(...known, fc.constantFrom(DICTIONARY.size, -localWords - 1, 2 ** 31 - 1, -(2 ** 31)));
}

function mapValue(member: number, ix: fc.Arbitrary<number>, _wild: boolean): fc.Arbitrary<MapValue> {
  const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
  switch (member) {
    case 2:
      return ix.map((i) => ({ member: 2 as const, index: i }));
    case 3:
      return fc.oneof(int64, fc.bigInt({ min: -5000n, max: 5000n })).map((int) => ({ member: 3 as const, int }));
    case 4:
      return fc.double().map((double) => ({ member: 4 as const, double }));
    case 5:
      return fc.constantFrom(0, 1, 2, 2 ** 32, 2 ** 40).map((varint) => ({ member: 5 as const, varint }));
    case 6:
    case 7:
      return fc
        .record({ seconds: fc.option(int64, { nil: undefined }), nanos: fc.option(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), { nil: undefined }) })
        .map((t) => ({ member: member as 6 | 7, ...t }));
    case 8:
      return fc.uint8Array({ maxLength: 6 }).map((bytes) => ({ member: 8 as const, bytes }));
    default: {
      const part = fc.option(ix, { nil: undefined, freq: 8 });
      return fc.array(fc.record({ key: part, value: part }), { maxLength: 5 }).map((pairs) => ({ member: 9 as const, pairs }));
    }
  }
}

function entryLayout(defaultWords: number, wild: boolean): fc.Arbitrary<EntryLayout> {
  const own = wild
    ? fc.array(anyWord, { maxLength: 3 })
    : fc.oneof({ weight: 4, arbitrary: fc.constant([] as Uint8Array[]) }, { weight: 1, arbitrary: goodWords });
  return fc.record({ own, wordsFirst: fc.boolean() }).chain(({ own, wordsFirst }) => {
    const ix = index(own.length > 0 ? own.length : defaultWords, wild);
    // Keys and values may be missing (their defaults apply), except a bytes value; keys may repeat.
    const mapEntry = fc.integer({ min: 2, max: 9 }).chain((member) =>
      fc.record({
        member: fc.constant(member),
        key: fc.option(ix, { nil: undefined, freq: 10 }),
        value: member === 8 && !wild ? mapValue(member, ix, wild) : fc.option(mapValue(member, ix, wild), { nil: undefined, freq: 10 }),
        valueFirst: fc.boolean(),
      }),
    );
    return fc.array(mapEntry, { maxLength: 14 }).map((maps) => ({ words: own, maps, wordsFirst }));
  });
}

function requestLayout(wild: boolean): fc.Arbitrary<RequestLayout> {
  return (wild ? fc.array(anyWord, { maxLength: 8 }) : goodWords).chain((defaultWords) =>
    fc.record({
      entries: fc.array(entryLayout(defaultWords.length, wild), { maxLength: 5 }),
      defaultWords: fc.constant(defaultWords),
      globalWordCount: fc.option(wild ? fc.constantFrom(DICTIONARY.size, DICTIONARY.size + 1, 111, 2 ** 32 - 1) : fc.constantFrom(DICTIONARY.size, 111), {
        nil: undefined,
      }),
      semantics: fc.option(fc.constantFrom(0, 1, 2, -1), { nil: undefined }),
      trailerFirst: fc.boolean(),
    }),
  );
}

/** Damage: a flipped byte, a cut, or an unknown field appended. */
const damage = fc.oneof(
  fc.record({ kind: fc.constant("flip" as const), at: fc.nat(), xor: fc.integer({ min: 1, max: 255 }) }),
  fc.record({ kind: fc.constant("cut" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("unknown" as const), at: fc.constantFrom(5, 6, 15), wire: fc.constantFrom(0, 1, 2, 5) }),
);

function damaged(bytes: Buffer, d: { kind: "flip" | "cut" | "unknown"; at: number; xor?: number; wire?: number }): Buffer {
  if (bytes.length === 0) return bytes;
  const copy = Buffer.from(bytes);
  if (d.kind === "flip") {
    copy[d.at % copy.length] ^= d.xor!;
    return copy;
  }
  if (d.kind === "cut") return copy.subarray(0, d.at % copy.length);
  const payload = { 0: [1], 1: [0, 0, 0, 0, 0, 0, 0, 0], 2: [1, 0x61], 5: [0, 0, 0, 0] }[d.wire as 0 | 1 | 2 | 5];
  return Buffer.concat([copy, Buffer.from([(d.at << 3) | d.wire!, ...payload])]);
}

// ---------------------------------------------------------------------------

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
