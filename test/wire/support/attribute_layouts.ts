// CompressedAttributes as wire layouts, written field by field (protobufjs's
// Writer) so that any order, repetition or omission can be produced, and
// fast-check generators of them: for the property tests of the hub's
// one-pass readers against the general path (protobufjs).
import fc from "fast-check";
import type Long from "long";
import protobuf from "protobufjs";
import { GlobalDictionary } from "../../../host/wire/compressed.ts";
import { GLOBAL_WORDS } from "../../../host/wire/global_words.ts";

// protobufjs's own 64-bit integers (the `long` package it depends on, not one of ours).
const LongOfProtobuf = protobuf.util.Long as unknown as typeof Long;
export const int64 = (v: bigint) => LongOfProtobuf.fromString(v.toString());

export const DICTIONARY = new GlobalDictionary(GLOBAL_WORDS);

export type MapValue =
  | { member: 2; index: number }
  | { member: 3; int: bigint }
  | { member: 4; double: number }
  | { member: 5; varint: number }
  | { member: 6 | 7; seconds?: bigint; nanos?: number }
  | { member: 8; bytes: Uint8Array }
  | { member: 9; pairs: Array<{ key?: number; value?: number }> };

export interface MapEntryLayout {
  key?: number;
  value?: MapValue;
  member: number;
  valueFirst: boolean;
}

export interface EntryLayout {
  words: Uint8Array[];
  maps: MapEntryLayout[];
  wordsFirst: boolean;
}

export const text = (s: string) => new Uint8Array(Buffer.from(s, "utf8"));

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

export function writeEntry(w: protobuf.Writer, e: EntryLayout): void {
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

// Generators: `wild` adds unknown words, invalid UTF-8 and odd layouts.

export const goodWords = fc
  .array(fc.oneof(fc.string(), fc.constantFrom("__proto__", "12", "-3", "\uFEFFbom", "request.path", "x-user")), { maxLength: 6 })
  .map((ws) => ws.map(text));
export const anyWord = fc.oneof(
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

export function entryLayout(defaultWords: number, wild: boolean): fc.Arbitrary<EntryLayout> {
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

/** Damage: a flipped byte, a cut, or an unknown field appended. */
export const damage = fc.oneof(
  fc.record({ kind: fc.constant("flip" as const), at: fc.nat(), xor: fc.integer({ min: 1, max: 255 }) }),
  fc.record({ kind: fc.constant("cut" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("unknown" as const), at: fc.constantFrom(5, 6, 15), wire: fc.constantFrom(0, 1, 2, 5) }),
);

export function damaged(bytes: Buffer, d: { kind: "flip" | "cut" | "unknown"; at: number; xor?: number; wire?: number }): Buffer {
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
