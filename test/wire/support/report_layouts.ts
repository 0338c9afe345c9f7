// ReportRequests as wire layouts, written field by field (their entries:
// attribute_layouts.ts), and fast-check generators of them: for the property
// tests of the hub's one-pass Report readers against the general path.
import fc from "fast-check";
import protobuf from "protobufjs";
import { anyWord, DICTIONARY, type EntryLayout, entryLayout, goodWords, writeEntry } from "./attribute_layouts.ts";

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
