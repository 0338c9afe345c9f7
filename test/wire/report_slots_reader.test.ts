// The hub's Report reader for its standard metrics alone
// (host/wire/report_slots_reader.ts) answers only for requests the general
// path (protobufjs, the UTF-8 walk, decodeAttributes) takes whole, and then
// holds in each slot what the general path's map holds under that name:
// - for any bytes (random layouts of every member, keys in any order or
//   given again, missing keys and values, unknown words, invalid UTF-8,
//   unknown fields, flipped bytes, truncations), when it answers, the
//   general path refuses no entry and every slot's value equals its map's;
//   when the word count is wrong, both refuse the request alike;
// - well-formed requests with known words and no slot's attribute given
//   twice in an entry are read by it, not left over;
// - the same for entries that repeat the entry before with a few edits (its
//   fields taken as they were read): edited, with unknown words or words of
//   their own, damaged;
// - a slot's value as the standard metrics count it, where it has one
//   without making the value, is the count of the general path's value;
// - entries it finds the same in some slots hold the same values there, and
//   an entry repeated is found the same.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { durationMs } from "../../host/config/label_expression.ts";
import { decodeReportSlots } from "../../host/hubs/hub_messages.ts";
import { decodeReportGeneral } from "../../host/hubs/server.ts";
import type { AttributeValue } from "../../host/wire/compressed.ts";
import { AttributeSlots } from "../../host/wire/report_slots.ts";
import { readReportSlots } from "../../host/wire/report_slots_reader.ts";
import { DICTIONARY, damage, damaged, type EntryLayout, type MapEntryLayout, text } from "./support/attribute_layouts.ts";
import { encodeReport, type RequestLayout, repeatingRequestLayout, requestLayout } from "./support/report_layouts.ts";

const RUNS = Number(process.env.READER_RUNS ?? 400);
const g = (word: string) => DICTIONARY.index.get(word)!;

/** Attribute names a hub's metrics may read (slots are drawn from these: global words, words the generators put in default_words, odd ones). */
const SLOTTABLE = [...new Set([...[0, 15, 17, 26, 1, 2, 3].map((i) => DICTIONARY.words[i]), "request.path", "x-user", "__proto__", "12", "-3", ""])];
const slotNames = fc.subarray(SLOTTABLE).chain((names) => fc.shuffledSubarray(names, { minLength: names.length }));

/** A value in a form deepStrictEqual compares fully: a string map as its entries in order and its prototype. */
function comparable(v: AttributeValue | undefined): unknown {
  if (v === undefined || !("stringMapValue" in v)) return v;
  const e = v.stringMapValue.entries;
  return { stringMap: Object.entries(e), prototype: Object.getPrototypeOf(e) };
}

/** An attribute as the standard metrics count it (host/config/standard_metrics.ts). */
function counted(v: AttributeValue | undefined): number {
  if (v === undefined) return 0;
  if ("int64Value" in v) return Number(v.int64Value);
  if ("doubleValue" in v) return v.doubleValue;
  if ("durationValue" in v) return durationMs(v.durationValue);
  return 0;
}

function thrown(f: () => unknown): unknown {
  try {
    f();
    return undefined;
  } catch (e) {
    const err = e as Error & { code?: unknown };
    return { error: err.name, code: err.code, message: err.message };
  }
}

/** When the reader answers, the general path takes every entry and each slot holds its map's value; a refused request is refused alike. */
function sameAsGeneral(bytes: Buffer, names: readonly string[]): boolean {
  const slots = new AttributeSlots(names);
  const refusal = thrown(() => decodeReportSlots(bytes, DICTIONARY, slots));
  if (refusal !== undefined) {
    assert.deepStrictEqual(
      refusal,
      thrown(() => decodeReportGeneral(bytes, DICTIONARY)),
    );
    return true;
  }
  const read = decodeReportSlots(bytes, DICTIONARY, slots);
  if (read === undefined) return false;
  const general = decodeReportGeneral(bytes, DICTIONARY);
  assert.deepStrictEqual(general.refused, []);
  assert.equal(read.count, general.entries.length);
  general.entries.forEach((map, e) => {
    const view = read.view();
    view.entry = e;
    names.forEach((name, slot) => {
      assert.deepStrictEqual(comparable(read.value(e, slot)), comparable(map.get(name)), `entry ${e}, ${name}`);
      assert.deepStrictEqual(comparable(view.get(name)), comparable(map.get(name)));
      const count = read.countOf(e, slot);
      if (count !== undefined) assert.equal(count, counted(map.get(name)), `entry ${e}, ${name} counted`);
      assert.equal(view.count(name), count);
    });
    assert.equal(view.get("no.such.attribute"), undefined);
  });
  return true;
}

/** The names of the attributes an entry gives, each time it gives one (a missing key names global word 0). */
function givenNames(layout: RequestLayout, entry: EntryLayout): string[] {
  const local = (entry.words.length > 0 ? entry.words : layout.defaultWords).map((w) => Buffer.from(w).toString("utf8"));
  return entry.maps.map((m) => {
    const key = m.key ?? 0;
    return key >= 0 ? DICTIONARY.words[key] : local[-key - 1];
  });
}

/** Whether the reader must read a well-formed request itself: no slot's attribute twice in an entry, no own words under DELTA_ENCODING. */
function readable(layout: RequestLayout, names: readonly string[]): boolean {
  const delta = (layout.semantics ?? 0) === 0;
  return layout.entries.every((entry) => {
    if (delta && entry.words.length > 0) return false;
    const given = givenNames(layout, entry).filter((n) => names.includes(n));
    return new Set(given).size === given.length;
  });
}

/** Whether every index of the request names a word (a repeated entry given fewer words of its own may name one it lacks). */
function knownWords(layout: RequestLayout): boolean {
  return layout.entries.every((entry) => {
    const local = entry.words.length > 0 ? entry.words.length : layout.defaultWords.length;
    const known = (i: number | undefined) => i === undefined || (i >= 0 ? i < DICTIONARY.size : -i - 1 < local);
    return entry.maps.every((m) => {
      const v = m.value;
      if (!known(m.key)) return false;
      if (v?.member === 2) return known(v.index);
      if (v?.member === 9) return v.pairs.every((p) => known(p.key) && known(p.value));
      return true;
    });
  });
}

describe("hub ReportRequest reader for the standard metrics (slots)", () => {
  it("reads well-formed requests with known words itself, each slot holding what the general path's map holds", () => {
    let read = 0;
    fc.assert(
      fc.property(requestLayout(false), slotNames, (layout, names) => {
        const bytes = encodeReport(layout);
        const answered = sameAsGeneral(bytes, names);
        if (readable(layout, names)) {
          assert.ok(answered, "a well-formed request is read in one pass");
          read++;
        }
      }),
      { numRuns: RUNS },
    );
    assert.ok(read > RUNS / 4, `only ${read} of ${RUNS} requests were readable`);
  });

  it("answers only what the general path takes whole, for unknown words, invalid UTF-8, out-of-range numbers and damaged bytes", () => {
    fc.assert(
      fc.property(requestLayout(true), slotNames, (layout, names) => {
        sameAsGeneral(encodeReport(layout), names);
      }),
      { numRuns: RUNS },
    );
    fc.assert(
      fc.property(requestLayout(false), damage, slotNames, (layout, d, names) => {
        sameAsGeneral(damaged(encodeReport(layout), d), names);
      }),
      { numRuns: RUNS },
    );
    // An unknown word in an attribute no slot is for still leaves the request to the other paths (the general one refuses its entry).
    const entry = (maps: MapEntryLayout[]): EntryLayout => ({ words: [], maps, wordsFirst: false });
    const code: MapEntryLayout = { member: 3, key: g("response.code"), value: { member: 3, int: 200n }, valueFirst: false };
    for (const unread of [
      { member: 2, key: g("request.path"), value: { member: 2, index: DICTIONARY.size }, valueFirst: false },
      { member: 9, key: g("request.headers"), value: { member: 9, pairs: [{ key: 0, value: -1 }] }, valueFirst: false },
      { member: 9, key: g("request.headers"), value: { member: 9, pairs: [{ key: DICTIONARY.size, value: 0 }] }, valueFirst: false },
      { member: 5, key: -1, value: { member: 5, varint: 1 }, valueFirst: false },
    ] satisfies MapEntryLayout[]) {
      const bytes = encodeReport({ entries: [entry([code, unread]), entry([code])], defaultWords: [], semantics: 1, trailerFirst: false });
      assert.equal(readReportSlots(bytes, DICTIONARY, new AttributeSlots(["response.code"])), undefined);
      assert.deepStrictEqual(
        decodeReportGeneral(bytes, DICTIONARY).refused.map((r) => r.index),
        [0],
      );
    }
  });

  it("reads entries repeating the entry before (fields taken as they were) as the general path does, edited, wild or damaged", () => {
    let read = 0;
    fc.assert(
      fc.property(repeatingRequestLayout(false), slotNames, (layout, names) => {
        const answered = sameAsGeneral(encodeReport(layout), names);
        // Entries found the same as the entry before (known from the reading, or by their bytes) hold the same values and counts.
        const taken = readReportSlots(encodeReport(layout), DICTIONARY, new AttributeSlots(names));
        for (let e = 1; e < (taken?.count ?? 0); e++) {
          for (let slot = 0; slot < names.length; slot++) {
            if (taken!.same(e, e - 1, Int32Array.of(slot))) assert.deepStrictEqual(comparable(taken!.value(e, slot)), comparable(taken!.value(e - 1, slot)));
            if (taken!.sameAsBefore(e, slot)) {
              assert.deepStrictEqual(comparable(taken!.value(e, slot)), comparable(taken!.value(e - 1, slot)));
              assert.equal(taken!.countOf(e, slot), taken!.countOf(e - 1, slot));
            }
          }
        }
        if (readable(layout, names) && knownWords(layout)) {
          assert.ok(answered, "a well-formed request is read in one pass");
          read++;
        }
      }),
      { numRuns: RUNS },
    );
    assert.ok(read > RUNS / 4, `only ${read} of ${RUNS} requests were readable`);
    fc.assert(
      fc.property(repeatingRequestLayout(true), slotNames, (layout, names) => {
        sameAsGeneral(encodeReport(layout), names);
      }),
      { numRuns: RUNS },
    );
    fc.assert(
      fc.property(repeatingRequestLayout(false), damage, slotNames, (layout, d, names) => {
        sameAsGeneral(damaged(encodeReport(layout), d), names);
      }),
      { numRuns: RUNS },
    );
    // The same fields naming default words, then in an entry with fewer words of its own: that entry's index is unknown.
    const s = (key: number, index: number): MapEntryLayout => ({ member: 2, key, value: { member: 2, index }, valueFirst: false });
    const maps = [s(g("request.path"), -2), s(g("request.host"), -1)];
    const bytes = encodeReport({
      defaultWords: ["/a", "/b"].map(text),
      entries: [
        { words: [], wordsFirst: false, maps },
        { words: [text("/c")], wordsFirst: false, maps },
      ],
      semantics: 1,
      trailerFirst: false,
    });
    assert.equal(readReportSlots(bytes, DICTIONARY, new AttributeSlots(["request.path"])), undefined);
    assert.deepStrictEqual(
      decodeReportGeneral(bytes, DICTIONARY).refused.map((r) => r.index),
      [1],
    );
    // An entry cut inside a field whose bytes, with the request's next field (a default word), are the field before's: not taken.
    const field = [(8 << 3) | 2, 5, 0x08, 0x02, 0x12, 1, 0x61];
    const cut = Buffer.from([0x0a, field.length, ...field, 0x0a, 4, ...field.slice(0, 4), 0x12, 1, 0x61]);
    assert.equal(readReportSlots(cut, DICTIONARY, new AttributeSlots([DICTIONARY.words[1]])), undefined);
    assert.ok(thrown(() => decodeReportGeneral(cut, DICTIONARY)) !== undefined);
  });

  it("entries found the same in some slots hold the same values there; an entry repeated is found the same", () => {
    fc.assert(
      fc.property(requestLayout(false), slotNames, fc.nat(), (layout, names, pick) => {
        const slots = new AttributeSlots(names);
        const all = slots.slotsNamed(names);
        const independent = { ...layout, semantics: 1 };
        const repeated =
          layout.entries.length === 0 ? independent : { ...independent, entries: [...layout.entries, layout.entries[pick % layout.entries.length]] };
        const read = readReportSlots(encodeReport(repeated), DICTIONARY, slots);
        if (read === undefined) return;
        for (let e = 1; e < read.count; e++) {
          for (let s = 0; s < names.length; s++) {
            if (read.same(e, e - 1, Int32Array.of(s))) assert.deepStrictEqual(comparable(read.value(e, s)), comparable(read.value(e - 1, s)));
          }
        }
        const last = read.count - 1;
        const twin = pick % layout.entries.length;
        if (layout.entries.length > 0 && layout.entries[twin].words.length === 0) assert.ok(read.same(last, twin, all));
      }),
      { numRuns: RUNS },
    );
    // Bytes that differ: another value, another member, a value against none; none against none is the same.
    const s = (key: number, index: number): MapEntryLayout => ({ member: 2, key, value: { member: 2, index }, valueFirst: false });
    const bytes = encodeReport({
      defaultWords: ["/a", "/b"].map(text),
      entries: [
        { words: [], wordsFirst: false, maps: [s(g("request.path"), -1), s(g("request.host"), -1)] },
        { words: [], wordsFirst: false, maps: [s(g("request.path"), -2), s(g("request.host"), -1)] },
        { words: [], wordsFirst: false, maps: [{ member: 3, key: g("request.path"), value: { member: 3, int: 1n }, valueFirst: false }] },
        { words: [], wordsFirst: false, maps: [] },
      ],
      semantics: 1,
      trailerFirst: false,
    });
    const slots = new AttributeSlots(["request.path", "request.host"]);
    const read = readReportSlots(bytes, DICTIONARY, slots)!;
    const [path, host] = [Int32Array.of(0), Int32Array.of(1)];
    assert.deepEqual(
      [read.same(1, 0, path), read.same(1, 0, host), read.same(2, 1, path), read.same(3, 2, path), read.same(3, 2, host)],
      [false, true, false, false, true],
    );
  });

  it("reads batches of many entries, each read whole or taken, as the general path does (rows made as needed)", () => {
    // Entries of varying lengths (read whole) and repeats (taken), more than the rows a batch starts with, with and without DELTA_ENCODING.
    const s = (key: number, index: number): MapEntryLayout => ({ member: 2, key, value: { member: 2, index }, valueFirst: false });
    const n = (key: number, v: bigint): MapEntryLayout => ({ member: 3, key, value: { member: 3, int: v }, valueFirst: false });
    const names = ["request.path", "request.method", "response.size", "response.code"];
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(3), fc.nat(70_000), fc.boolean()), { minLength: 17, maxLength: 80 }), fc.boolean(), (steps, delta) => {
        const entries = steps.map(([k, size, method]) => ({
          words: [],
          wordsFirst: false,
          maps: [
            s(g("request.path"), -1 - (k % 2)),
            ...(method || !delta ? [s(g("request.method"), -3)] : []),
            n(g("response.size"), BigInt(size)),
            ...(k > 1 ? [n(g("response.code"), 200n)] : []),
          ],
        }));
        const layout: RequestLayout = { defaultWords: ["/a", "/b", "GET"].map(text), entries, semantics: delta ? 0 : 1, trailerFirst: false };
        assert.ok(sameAsGeneral(encodeReport(layout), names));
      }),
      { numRuns: RUNS / 4 },
    );
  });

  it("applies DELTA_ENCODING: a slot an entry does not give keeps the entry before's value", () => {
    const s = (key: number, index: number): MapEntryLayout => ({ member: 2, key, value: { member: 2, index }, valueFirst: false });
    const layout: RequestLayout = {
      defaultWords: ["/a", "/b", "GET"].map(text),
      entries: [
        { words: [], wordsFirst: false, maps: [s(g("request.path"), -1), s(g("request.method"), -3)] },
        { words: [], wordsFirst: false, maps: [s(g("request.path"), -2)] },
      ],
      trailerFirst: true,
    };
    const names = ["request.method", "request.path"];
    const read = readReportSlots(encodeReport(layout), DICTIONARY, new AttributeSlots(names))!;
    assert.deepEqual(
      [0, 1].map((e) => names.map((_, slot) => read.value(e, slot))),
      [
        [{ stringValue: "GET" }, { stringValue: "/a" }],
        [{ stringValue: "GET" }, { stringValue: "/b" }],
      ],
    );
    assert.ok(sameAsGeneral(encodeReport(layout), names));
    // Words of its own in an entry under DELTA_ENCODING: left to the other paths.
    const own = { ...layout, entries: [...layout.entries, { words: [text("/c")], wordsFirst: true, maps: [s(g("request.path"), -1)] }] };
    assert.equal(readReportSlots(encodeReport(own), DICTIONARY, new AttributeSlots(names)), undefined);
    assert.equal(decodeReportGeneral(encodeReport(own), DICTIONARY).entries.length, 3);
  });
});
