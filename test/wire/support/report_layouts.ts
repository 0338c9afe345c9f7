// ReportRequests as wire layouts, written field by field (their entries:
// attribute_layouts.ts), and fast-check generators of them: for the property
// tests of the hub's one-pass Report readers against the general path.
import fc from "fast-check";
import protobuf from "protobufjs";
import { anyWord, DICTIONARY, type EntryLayout, entryLayout, goodWords, type MapValue, writeEntry } from "./attribute_layouts.ts";

export interface RequestLayout {
  entries: EntryLayout[];
  defaultWords: Uint8Array[];
  globalWordCount?: number;
  semantics?: number;
  trailerFirst: boolean;
}

export function encodeReport(r: RequestLayout): Buffer {
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

/** `wild` adds unknown words, invalid UTF-8 and odd layouts. */
export function requestLayout(wild: boolean): fc.Arbitrary<RequestLayout> {
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

// ---------------------------------------------------------------------------

/**
 * Requests whose entries repeat the entry before with a few edits (a map
 * entry replaced, dropped or added, words of their own given or taken
 * away), as a sidecar's batches do: their fields are mostly byte for byte
 * those of the entry before. `wild` as requestLayout's.
 */
export function repeatingRequestLayout(wild: boolean): fc.Arbitrary<RequestLayout> {
  const step = fc.record({
    kind: fc.constantFrom("same", "same", "replace", "drop", "add", "words", "noWords", "rekey", "revalue", "swap", "valueFirst"),
    at: fc.nat(),
    from: fc.nat(),
  });
  return (wild ? fc.array(anyWord, { maxLength: 8 }) : goodWords).chain((defaultWords) =>
    fc
      .record({
        first: entryLayout(defaultWords.length, wild),
        pool: fc.array(entryLayout(defaultWords.length, wild), { minLength: 1, maxLength: 3 }),
        steps: fc.array(step, { maxLength: 8 }),
        globalWordCount: fc.option(fc.constantFrom(DICTIONARY.size, 111), { nil: undefined }),
        semantics: fc.constantFrom(1, 1, 0, undefined),
        trailerFirst: fc.boolean(),
      })
      .map(({ first, pool, steps, globalWordCount, semantics, trailerFirst }) => {
        const spare = pool.flatMap((e) => e.maps);
        const entries = [first];
        for (const { kind, at, from } of steps) {
          const previous = entries[entries.length - 1];
          const maps = [...previous.maps];
          let words = previous.words;
          if (kind === "replace" && maps.length > 0 && spare.length > 0) maps[at % maps.length] = spare[from % spare.length];
          else if (kind === "drop" && maps.length > 0) maps.splice(at % maps.length, 1);
          else if (kind === "add" && spare.length > 0) maps.splice(at % (maps.length + 1), 0, spare[from % spare.length]);
          else if (kind === "words")
            words = from % 2 === 0 && pool[from % pool.length].words.length > 0 ? pool[from % pool.length].words : [Buffer.from("own")];
          else if (kind === "noWords") words = [];
          else if (maps.length > 0) {
            // Edits that keep the entry's length: another key or value of the same size, two fields swapped, a key and value swapped.
            const i = at % maps.length;
            const m = { ...maps[i] };
            if (kind === "rekey" && m.key !== undefined && m.key >= 0 && m.key < 63) m.key ^= 1;
            else if (kind === "revalue") m.value = sameSizeValue(m.value);
            else if (kind === "valueFirst") m.valueFirst = !m.valueFirst;
            else if (kind === "swap" && maps.length > 1) [maps[i], maps[(i + 1) % maps.length]] = [maps[(i + 1) % maps.length], maps[i]];
            if (kind !== "swap") maps[i] = m;
          }
          entries.push({ words, maps, wordsFirst: previous.wordsFirst });
        }
        return { entries, defaultWords, globalWordCount, semantics, trailerFirst };
      }),
  );
}

/** Another value of the same encoded size (most small ones). */
function sameSizeValue(v: MapValue | undefined): MapValue | undefined {
  if (v?.member === 2 && v.index >= 0 && v.index < 63) return { ...v, index: v.index ^ 1 };
  if (v?.member === 3 && v.int >= 0n && v.int < 127n) return { ...v, int: v.int ^ 1n };
  if ((v?.member === 6 || v?.member === 7) && v.nanos !== undefined && v.nanos >= 0 && v.nanos < 127) return { ...v, nanos: v.nanos ^ 1 };
  if (v?.member === 8 && v.bytes.length > 0) return { ...v, bytes: v.bytes.map((b, j) => (j === 0 ? b ^ 1 : b)) };
  return v;
}
