// One field at a time of a Report entry (a CompressedAttributes) read
// strictly, for report_slots_reader.ts: what it names and where its value
// is, or NOT_PLAIN for anything the other paths are to word.

import {
  type AttributesReader,
  NO_VALUE,
  WORDS,
  STRINGS,
  INT64S,
  DOUBLES,
  BOOLS,
  TIMESTAMPS,
  DURATIONS,
  BYTES,
  STRING_MAPS,
  VALUE_WIRE,
} from "./compressed_attributes_reader.ts";
import { instantAt, NOT_PLAIN, skipVarint, WIRE_LEN, WIRE_VARINT } from "./strict_wire_cursor.ts";

const KEY_TAG = (1 << 3) | WIRE_VARINT;
const PAIR_TAG = (1 << 3) | WIRE_LEN;
const PAIR_VALUE_TAG = (2 << 3) | WIRE_VARINT;

/** The fields of one entry, read one by one (field()); its words' range and words of its own gathered as they are read. */
export class EntryFields {
  // The lowest and highest word index the entry names (keys, strings, string maps' pairs; 0 where one is missing).
  low = 0;
  high = 0;
  // The words of the entry being read, when it has its own.
  own: string[] | undefined;
  // The field field() read last: its member, key and value's start and end.
  member = 0;
  key = 0;
  at = NO_VALUE;
  valueEnd = NO_VALUE;

  constructor(private readonly r: AttributesReader) {}

  /**
   * A length-delimited payload's length at `pos` (one byte in place, else
   * through the cursor): returns where the payload ends (within `end`); the
   * cursor's position is where it starts.
   */
  private lengthAt(pos: number, end: number): number {
    const buf = this.r.buf;
    if (pos < end && buf[pos] < 0x80) {
      const to = pos + 1 + buf[pos];
      if (to > end) throw NOT_PLAIN;
      this.r.pos = pos + 1;
      return to;
    }
    this.r.pos = pos;
    return this.r.length(end);
  }

  /**
   * Reads one field of a CompressedAttributes strictly from `from` (within
   * `to`): a word of its own (into this.own), or a member's map entry (its
   * member, key and value's place in member, key, at, valueEnd; the
   * words it names in low and high). Returns where it ends. The position is
   * kept in a local and one-byte varints (tags, lengths, most keys and word
   * indexes) are read in place, longer ones through the cursor. A tag of more
   * than one byte is refused (the other paths read it).
   */
  field(from: number, to: number): number {
    const r = this.r;
    const buf = r.buf;
    let pos = from;
    const tag = buf[pos++];
    const member = tag >>> 3;
    if ((tag & 7) !== WIRE_LEN || member > STRING_MAPS || member < WORDS) throw NOT_PLAIN;
    const fieldEnd = this.lengthAt(pos, to);
    pos = r.pos;
    this.member = member;
    if (member === WORDS) {
      (this.own ??= []).push(r.string(fieldEnd));
      return fieldEnd;
    }
    let low = 0;
    let high = 0;
    const valueTag = (2 << 3) | VALUE_WIRE[member];
    let key = 0;
    let hasKey = false;
    let at = NO_VALUE;
    let valueEnd = NO_VALUE;
    while (pos < fieldEnd) {
      const t = buf[pos++];
      if (t === KEY_TAG && !hasKey) {
        if (pos < fieldEnd && buf[pos] < 0x80) {
          const v = buf[pos++];
          key = (v >>> 1) ^ -(v & 1);
        } else {
          r.pos = pos;
          key = r.sint32(fieldEnd);
          pos = r.pos;
        }
        hasKey = true;
      } else if (t === valueTag && at === NO_VALUE) {
        at = pos;
        if (member === STRINGS) {
          let index: number;
          if (pos < fieldEnd && buf[pos] < 0x80) {
            const v = buf[pos++];
            index = (v >>> 1) ^ -(v & 1);
          } else {
            r.pos = pos;
            index = r.sint32(fieldEnd);
            pos = r.pos;
          }
          if (index < low) low = index;
          else if (index > high) high = index;
        } else if (member === DOUBLES) {
          if (pos + 8 > fieldEnd) throw NOT_PLAIN;
          pos += 8;
        } else if (member === INT64S || member === BOOLS) {
          pos = skipVarint(buf, pos, fieldEnd);
        } else {
          const payloadEnd = this.lengthAt(pos, fieldEnd);
          if (member === TIMESTAMPS || member === DURATIONS) instantAt(buf, r.pos, payloadEnd);
          else if (member === STRING_MAPS) this.pairs(r.pos, payloadEnd);
          pos = payloadEnd;
        }
        valueEnd = pos;
      } else {
        throw NOT_PLAIN;
      }
    }
    if (pos !== fieldEnd || (at === NO_VALUE && member === BYTES)) throw NOT_PLAIN;
    // A missing key, or a string without its value, names word 0 (protobufjs's default): within the range already.
    if (key < low) low = key;
    else if (key > high) high = key;
    if (this.low > low) this.low = low;
    if (this.high < high) this.high = high;
    this.key = key;
    this.at = at;
    this.valueEnd = valueEnd;
    return fieldEnd;
  }

  /** CompressedStringMap {entries = 1: map<sint32, sint32>} from `pos` to `end`: each pair's words noted (a missing key or value: word 0). */
  private pairs(from: number, end: number): void {
    const r = this.r;
    const buf = r.buf;
    let low = 0;
    let high = 0;
    let pos = from;
    while (pos < end) {
      if (buf[pos++] !== PAIR_TAG) throw NOT_PLAIN;
      const pairEnd = this.lengthAt(pos, end);
      pos = r.pos;
      let seen = 0;
      while (pos < pairEnd) {
        const tag = buf[pos++];
        const bit = tag === KEY_TAG ? 1 : tag === PAIR_VALUE_TAG ? 2 : 0;
        if (bit === 0 || seen & bit) throw NOT_PLAIN;
        seen |= bit;
        let index: number;
        if (pos < pairEnd && buf[pos] < 0x80) {
          const v = buf[pos++];
          index = (v >>> 1) ^ -(v & 1);
        } else {
          r.pos = pos;
          index = r.sint32(pairEnd);
          pos = r.pos;
        }
        if (index < low) low = index;
        else if (index > high) high = index;
      }
      if (pos !== pairEnd) throw NOT_PLAIN;
    }
    // A pair without its key or value names word 0: within the range already.
    if (this.low > low) this.low = low;
    if (this.high < high) this.high = high;
  }
}
