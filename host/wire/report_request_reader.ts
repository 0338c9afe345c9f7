// The hub's fast path for mesh.hub.v1.ReportRequest bytes: one pass over the
// wire format straight into attribute maps, without protobufjs's message
// objects (map members as objects with integer-like keys, Longs) or a second
// walk to find invalid UTF-8.
//
// It takes only plainly well-formed requests: known fields with their wire
// types, every string valid UTF-8, every index naming a word, each map
// entry's key and value given at most once, lengths within their message.
// Anything else (malformed bytes, unknown fields, bad words, invalid UTF-8)
// returns undefined, and the caller takes the general path (utf8_strings.ts,
// protobufjs, decodeAttributes), which words every refusal. So when this
// reader answers, it answers what the general path would: the same maps, in
// the same insertion order (compressed_attributes_reader.ts reads each entry).

import type { AttributeMap, GlobalDictionary } from "./compressed.ts";
import { AttributesReader } from "./compressed_attributes_reader.ts";
import { NOT_PLAIN, WIRE_LEN, WIRE_VARINT } from "./strict_wire_cursor.ts";
import { isUtf8Range } from "./utf8_strings.ts";

/** The entries of a plainly well-formed ReportRequest, DELTA_ENCODING applied. */
export interface PlainReport {
  entries: AttributeMap[];
  globalWordCount: number;
}

// Field numbers (proto/mesh/hub/v1/hub.proto).
const REPORT_ATTRIBUTES = 1;
const REPORT_DEFAULT_WORDS = 2;
const REPORT_GLOBAL_WORD_COUNT = 3;
const REPORT_SEMANTICS = 4;
const DELTA_ENCODING = 0;

/**
 * The attributes of a plainly well-formed ReportRequest, or undefined: take
 * the general path. With `wanted`, the maps hold only the attributes named
 * there (the others are checked as strictly, but no value is made for them).
 */
export function readPlainReport(bytes: Buffer, dictionary: GlobalDictionary, wanted?: ReadonlySet<string>): PlainReport | undefined {
  try {
    return readReport(new AttributesReader(bytes, dictionary.words, wanted));
  } catch (e) {
    if (e === NOT_PLAIN) return undefined;
    throw e;
  }
}

/** A ReportRequest's own fields, its entries as where their bytes are. */
export interface ReportFields {
  starts: number[];
  ends: number[];
  /** Where each of default_words is (valid UTF-8), not yet decoded. */
  wordStarts: number[];
  wordEnds: number[];
  globalWordCount: number;
  delta: boolean;
}

/** The request's own fields, read strictly (NOT_PLAIN otherwise): its default_words may follow the entries. */
export function readReportFields(r: AttributesReader): ReportFields {
  const buf = r.buf;
  const starts: number[] = [];
  const ends: number[] = [];
  const wordStarts: number[] = [];
  const wordEnds: number[] = [];
  let globalWordCount = 0;
  let semantics = DELTA_ENCODING;
  while (r.pos < buf.length) {
    const tag = r.varint(buf.length);
    const field = tag >>> 3;
    const wire = tag & 7;
    if (field === REPORT_ATTRIBUTES && wire === WIRE_LEN) {
      const end = r.length(buf.length);
      starts.push(r.pos);
      ends.push(end);
      r.pos = end;
    } else if (field === REPORT_DEFAULT_WORDS && wire === WIRE_LEN) {
      const end = r.length(buf.length);
      if (!isUtf8Range(buf, r.pos, end)) throw NOT_PLAIN;
      wordStarts.push(r.pos);
      wordEnds.push(end);
      r.pos = end;
    } else if (field === REPORT_GLOBAL_WORD_COUNT && wire === WIRE_VARINT) {
      globalWordCount = r.varint(buf.length);
    } else if (field === REPORT_SEMANTICS && wire === WIRE_VARINT) {
      semantics = r.varint(buf.length) | 0;
    } else {
      throw NOT_PLAIN;
    }
  }
  return { starts, ends, wordStarts, wordEnds, globalWordCount, delta: semantics === DELTA_ENCODING };
}

function readReport(r: AttributesReader): PlainReport {
  const { starts, ends, wordStarts, wordEnds, globalWordCount, delta } = readReportFields(r);
  const defaultWords = wordStarts.map((start, i) => r.buf.toString("utf8", start, wordEnds[i]));
  const entries: AttributeMap[] = [];
  let previous: AttributeMap | undefined;
  for (let i = 0; i < starts.length; i++) {
    previous = r.entry(starts[i], ends[i], defaultWords, delta && previous ? new Map(previous) : new Map());
    entries.push(previous);
  }
  return { entries, globalWordCount };
}
