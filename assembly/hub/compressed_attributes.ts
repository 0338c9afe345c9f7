import { AttributeBag } from "../attributes/bag";
import { StringMap } from "../attributes/string_map";
import { AttributeValue, ValueKind } from "../attributes/value";
import { ProtoWriter, WIRE_LEN } from "../proto/writer";
import { MessageDictionary } from "./dictionary";

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
 * Keeps its scratch writers between calls: a check or a report batch writes
 * hundreds of small map entries, and allocation is what costs in AS.
 *
 *   new CompressedAttributesWriter().write(out, bag, new MessageDictionary(), true);
 */
export class CompressedAttributesWriter {
  private entry: ProtoWriter = new ProtoWriter(64);
  private value: ProtoWriter = new ProtoWriter(64);
  private pair: ProtoWriter = new ProtoWriter(16);

  /**
   * Appends the fields of one CompressedAttributes message to `out`.
   * `withWords`: a check request carries its own `words`; report entries
   * leave them to the batch's `default_words`, so the caller writes those.
   */
  write(out: ProtoWriter, bag: AttributeBag, dictionary: MessageDictionary, withWords: bool): void {
    const entry = this.entry;
    for (let i = 0, n = bag.size; i < n; i++) {
      const v = bag.valueAt(i);
      // Name before value: indexes are handed out in first-use order.
      entry.reset();
      entry.sint32Field(KEY, dictionary.index(bag.nameAt(i)));
      const field = this.writeValue(entry, v, dictionary);
      if (field != 0) out.messageField(field, entry);
    }
    // Written after the maps because the words are only known once every
    // string went through the dictionary; field order is free in protobuf.
    if (withWords) writeWords(out, WORDS, dictionary.words);
  }

  /** Writes the entry's value; the CompressedAttributes map field it belongs to, 0 for none. */
  private writeValue(entry: ProtoWriter, v: AttributeValue, dictionary: MessageDictionary): u32 {
    switch (v.kind) {
      case ValueKind.String:
        entry.sint32Field(VALUE, dictionary.index(v.str));
        return STRINGS;
      case ValueKind.Int64:
        entry.int64Field(VALUE, v.int);
        return INT64S;
      case ValueKind.Double:
        entry.doubleField(VALUE, v.double);
        return DOUBLES;
      case ValueKind.Bool:
        entry.boolField(VALUE, v.bool);
        return BOOLS;
      case ValueKind.Bytes: {
        const bytes = v.bytes;
        if (bytes !== null) entry.bytesField(VALUE, bytes);
        else {
          entry.tag(VALUE, WIRE_LEN);
          entry.varint(0);
        }
        return BYTES;
      }
      case ValueKind.Timestamp:
        this.writeSecondsNanos(entry, v);
        return TIMESTAMPS;
      case ValueKind.Duration:
        this.writeSecondsNanos(entry, v);
        return DURATIONS;
      case ValueKind.StringMap: {
        // CompressedStringMap {entries = 1: map<sint32, sint32>}.
        const inner = this.value;
        const pair = this.pair;
        inner.reset();
        const m = v.map;
        if (m !== null) {
          const map = m as StringMap;
          const keys = map.keys;
          const mapValues = map.values;
          for (let i = 0, n = keys.length; i < n; i++) {
            pair.reset();
            pair.sint32Field(KEY, dictionary.index(unchecked(keys[i])));
            pair.sint32Field(VALUE, dictionary.index(unchecked(mapValues[i])));
            inner.messageField(1, pair);
          }
        }
        entry.messageField(VALUE, inner);
        return STRING_MAPS;
      }
    }
    return 0;
  }

  /** google.protobuf.Timestamp and Duration share {seconds = 1, nanos = 2}. */
  private writeSecondsNanos(entry: ProtoWriter, v: AttributeValue): void {
    const inner = this.value;
    inner.reset();
    // proto3 leaves zero scalars out.
    if (v.int != 0) inner.int64Field(1, v.int);
    if (v.nanos != 0) inner.int64Field(2, <i64>v.nanos);
    entry.messageField(VALUE, inner);
  }
}

/** A repeated string field: the message `words` or the report's `default_words`. */
export function writeWords(out: ProtoWriter, field: u32, words: Array<string>): void {
  for (let i = 0, n = words.length; i < n; i++) out.stringField(field, unchecked(words[i]));
}
