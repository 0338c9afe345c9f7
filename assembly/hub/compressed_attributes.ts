import { AttributeBag } from "../attributes/bag";
import { ViewMap } from "../attributes/view_map";
import { AttributeValue, ValueKind, StringMap } from "../attributes/value";
import { ProtoWriter, WIRE_LEN, WIRE_VARINT } from "../proto/writer";
import { MessageDictionary } from "./dictionary";
import { EntryMemo, RECORD_BYTES } from "./entry_memo";
import { attributeName } from "../attributes/names";

// mesh.hub.v1.CompressedAttributes field numbers (proto/mesh/hub/v1/attributes.proto).
const WORDS: u32 = 1;
const STRINGS: u32 = 2;
const INT64S: u32 = 3;
const DOUBLES: u32 = 4;
const BOOLS: u32 = 5;
const TIMESTAMPS: u32 = 6;
const DURATIONS: u32 = 7;
const BYTES: u32 = 8;
const STRING_MAPS: u32 = 9;
// Every protobuf map entry is a message {key = 1, value = 2}.
const KEY: u32 = 1;
const VALUE: u32 = 2;

/**
 * Writes an AttributeBag as mesh.hub.v1.CompressedAttributes: every string
 * (name, string value, string-map key and value) goes through the dictionary;
 * numbers, bools, bytes and times stay literal (hub-client.md §9.2).
 *
 * Every map entry (and a string map's pairs, a time's seconds and nanos) is
 * written in place in `out` (ProtoWriter.begin/end): no scratch writer to
 * copy from, and no allocation.
 *
 *   new CompressedAttributesWriter().write(out, bag, new MessageDictionary(), true);
 */
export class CompressedAttributesWriter {
  /**
   * Appends the fields of one CompressedAttributes message to `out`.
   * `withWords`: a check request carries its own `words`; report entries
   * leave them to the batch's `default_words`, so the caller writes those.
   */
  write(out: ProtoWriter, bag: AttributeBag, dictionary: MessageDictionary, withWords: bool): void {
    for (let i = 0, n = bag.size; i < n; i++) {
      const v = bag.valueAt(i);
      const field = mapFieldOf(v);
      if (field == 0) continue;
      // Name before value: indexes are handed out in first-use order.
      const entry = out.begin(field);
      out.sint32Field(KEY, dictionary.index(bag.nameAt(i)));
      writeValue(out, v, dictionary);
      out.end(entry);
    }
    // Written after the maps because the words are only known once every
    // string went through the dictionary; field order is free in protobuf.
    if (withWords) writeWords(out, WORDS, dictionary.words);
  }
}

/**
 * Appends the map entries of one report entry to `out` (its words go to the
 * batch's `default_words`): an attribute whose value `memo` says was already
 * encoded in this message is copied from there, any other is encoded and
 * remembered. The bytes are those `write` would give.
 *
 * Consecutive attributes copied from consecutive places (a run of them
 * repeated from one earlier entry) are copied at once.
 */
// @ts-ignore: decorator
@inline
export function writeReportEntry(out: ProtoWriter, bag: AttributeBag, dictionary: MessageDictionary, memo: EntryMemo): void {
  // The copy not yet made: `pendingLength` bytes from `pendingAt`.
  let pendingAt = 0;
  let pendingLength = 0;
  // Read once, not per attribute: the bag does not change here, the memo's
  // records only when `record` grows them, and its stamp not within a message.
  const values = bag.valuesStart;
  const ids = bag.idsStart;
  const stamp = memo.currentStamp;
  let records = memo.recordsStart;
  let recordCount = memo.recordCount;
  for (let i = 0, n = bag.size; i < n; i++) {
    const v = changetype<AttributeValue>(load<usize>(values + (<usize>i << alignof<usize>())));
    const id = load<i32>(ids + (<usize>i << 2));
    // An id without a record has nothing encoded (nor has a name without an id).
    if (<u32>id < <u32>recordCount) {
      const rec = records + <usize>id * RECORD_BYTES;
      // Only an encoded value is remembered: one found has a map field.
      const at = memo.encodedAtRecord(rec, stamp, v);
      if (at >= 0) {
        const length = EntryMemo.encodedLengthAt(rec);
        if (pendingAt + pendingLength == at) {
          pendingLength += length;
        } else {
          if (pendingLength > 0) out.repeat(pendingAt, pendingLength);
          pendingAt = at;
          pendingLength = length;
        }
        continue;
      }
    }
    const field = mapFieldOf(v);
    if (field == 0) continue;
    if (pendingLength > 0) {
      out.repeat(pendingAt, pendingLength);
      pendingLength = 0;
    }
    const start = out.length;
    const key = id >= 0 ? dictionary.index(attributeName(id)) : dictionary.index(bag.nameAt(i));
    // A time is new in nearly every entry (the request's and the response's, the duration).
    if (field == TIMESTAMPS || field == DURATIONS) {
      out.timeEntry(field, key, v.int, v.nanos);
    } else {
      const entry = out.begin(field);
      out.sint32Field(KEY, key);
      writeValue(out, v, dictionary);
      out.end(entry);
    }
    if (id >= 0) {
      memo.record(id, v, start, out.length - start);
      records = memo.recordsStart;
      recordCount = memo.recordCount;
    }
  }
  if (pendingLength > 0) out.repeat(pendingAt, pendingLength);
}

/** The CompressedAttributes map field a value belongs to, 0 for none. */
function mapFieldOf(v: AttributeValue): u32 {
  switch (v.kind) {
    case ValueKind.String:
      return STRINGS;
    case ValueKind.Int64:
      return INT64S;
    case ValueKind.Double:
      return DOUBLES;
    case ValueKind.Bool:
      return BOOLS;
    case ValueKind.Bytes:
      return BYTES;
    case ValueKind.Timestamp:
      return TIMESTAMPS;
    case ValueKind.Duration:
      return DURATIONS;
    case ValueKind.StringMap:
      return STRING_MAPS;
  }
  return 0;
}

/** Writes a map entry's value field. Inlined into its two callers: a report writes a few values per entry, and a call costs more than the switch. */
// @ts-ignore: decorator
@inline
function writeValue(out: ProtoWriter, v: AttributeValue, dictionary: MessageDictionary): void {
  switch (v.kind) {
    case ValueKind.String:
      // A view (a header value in place) is looked up by its bytes: no string made for it.
      out.sint32Field(VALUE, v.isView ? dictionary.indexBytes(v.textPtr(), v.textLen()) : dictionary.index(v.str));
      return;
    case ValueKind.Int64:
      out.int64Field(VALUE, v.int);
      return;
    case ValueKind.Double:
      out.doubleField(VALUE, v.double);
      return;
    case ValueKind.Bool:
      out.boolField(VALUE, v.bool);
      return;
    case ValueKind.Bytes: {
      const bytes = v.bytes;
      if (bytes !== null) out.bytesField(VALUE, bytes);
      else {
        out.tag(VALUE, WIRE_LEN);
        out.varint(0);
      }
      return;
    }
    case ValueKind.Timestamp:
    case ValueKind.Duration: {
      // google.protobuf.Timestamp and Duration share {seconds = 1, nanos = 2}; proto3 leaves zero scalars out.
      // Seconds and nanos mostly take several bytes: written in place.
      const time = out.begin(VALUE);
      if (v.int != 0) {
        out.tag(1, WIRE_VARINT);
        out.varintInPlace(<u64>v.int);
      }
      if (v.nanos != 0) {
        out.tag(2, WIRE_VARINT);
        out.varintInPlace(<u64>(<i64>v.nanos));
      }
      out.end(time);
      return;
    }
    case ValueKind.StringMap: {
      // CompressedStringMap {entries = 1: map<sint32, sint32>}.
      const inner = out.begin(VALUE);
      const m = v.map;
      if (m instanceof ViewMap && (m as ViewMap).isViewing) writeViewPairs(out, m as ViewMap, dictionary);
      else if (m !== null) {
        const map = m as StringMap;
        const keys = map.keys;
        const mapValues = map.values;
        for (let i = 0, n = keys.length; i < n; i++) {
          const pair = out.begin(1);
          out.sint32Field(KEY, dictionary.index(unchecked(keys[i])));
          out.sint32Field(VALUE, dictionary.index(unchecked(mapValues[i])));
          out.end(pair);
        }
      }
      out.end(inner);
      return;
    }
  }
}

/**
 * A request's or response's headers (or query) as they are in place: names
 * and values looked up by their bytes, a known name by its string, so
 * encoding them decodes only the words new to the message.
 */
function writeViewPairs(out: ProtoWriter, map: ViewMap, dictionary: MessageDictionary): void {
  for (let i = 0, n = map.size; i < n; i++) {
    const pair = out.begin(1);
    const key = map.keyStringAt(i);
    out.sint32Field(KEY, key !== null ? dictionary.index(key) : dictionary.indexBytes(map.keyPtr(i), map.keyLength(i)));
    out.sint32Field(VALUE, dictionary.indexBytes(map.valuePtr(i), map.valueLength(i)));
    out.end(pair);
  }
}

/** A repeated string field: the message `words` or the report's `default_words`. */
export function writeWords(out: ProtoWriter, field: u32, words: Array<string>): void {
  for (let i = 0, n = words.length; i < n; i++) out.stringField(field, unchecked(words[i]));
}
