// The hub's Report reader when only its standard metrics read a report (no
// access log): one pass over a plainly well-formed ReportRequest that keeps,
// per entry, where the values of the attributes with a slot are
// (report_slots.ts), and makes nothing for the others.
//
// It answers only for requests the general path (protobufjs, the UTF-8 walk,
// decodeAttributes) takes whole, every entry: known fields with their wire
// types, every string valid UTF-8, every index naming a word (those of
// attributes nobody reads too), each map entry's key and value given at most
// once, and no attribute with a slot given twice in an entry (whose value
// the general path would pick by its order of keys); with DELTA_ENCODING,
// no entry with words of its own. Anything else returns undefined, and the
// caller takes the other paths (report_request_reader.ts, then the general
// one), which word every refusal. So when it answers, each slot holds what
// the general path's map holds under that name.

import type { GlobalDictionary } from "./compressed.ts";
import { AttributesReader, NO_VALUE } from "./compressed_attributes_reader.ts";
import { type AttributeSlots, ReportSlots } from "./report_slots.ts";
import { readReportFields } from "./report_request_reader.ts";
import { NOT_PLAIN, WIRE_FIXED64, WIRE_LEN, WIRE_VARINT } from "./strict_wire_cursor.ts";

// Field numbers of CompressedAttributes (proto/mesh/hub/v1/attributes.proto).
const WORDS = 1;
const STRINGS = 2;
const TIMESTAMPS = 6;
const DURATIONS = 7;
const BYTES = 8;
const STRING_MAPS = 9;
/** The wire type of each map member's value, by field number. */
const VALUE_WIRE = [-1, -1, WIRE_VARINT, WIRE_VARINT, WIRE_FIXED64, WIRE_VARINT, WIRE_LEN, WIRE_LEN, WIRE_LEN, WIRE_LEN];
const KEY_TAG = (1 << 3) | WIRE_VARINT;
const PAIR_TAG = (1 << 3) | WIRE_LEN;
const PAIR_VALUE_TAG = (2 << 3) | WIRE_VARINT;

/** The entries of a plainly well-formed ReportRequest in `slots`, or undefined: take the other paths. */
export function readReportSlots(bytes: Buffer, dictionary: GlobalDictionary, slots: AttributeSlots): ReportSlots | undefined {
  const reader = new AttributesReader(bytes, dictionary.words, undefined);
  try {
    return new SlotsReader(reader, dictionary.words, slots).read();
  } catch (e) {
    if (e === NOT_PLAIN) return undefined;
    throw e;
  }
}

class SlotsReader {
  private readonly width: number;
  private readonly globalSlots: Int32Array;
  // The map entries of the entry being read: member, key, value start and end, four numbers each (grown as needed).
  private found = new Int32Array(4 * 64);
  // The lowest and highest word index the entry names (keys, strings, string maps' pairs; 0 where one is missing).
  private low = 0;
  private high = 0;
  // The words of the entry being read, when it has its own.
  private own: string[] | undefined;

  constructor(
    private readonly r: AttributesReader,
    private readonly global: readonly string[],
    private readonly slots: AttributeSlots,
  ) {
    this.width = slots.names.length;
    this.globalSlots = slots.globalSlots(global);
  }

  read(): ReportSlots {
    const { starts, ends, defaultWords, globalWordCount, delta } = readReportFields(this.r);
    const count = starts.length;
    const width = this.width;
    const members = new Uint8Array(count * width);
    const at = new Int32Array(count * width);
    const end = new Int32Array(count * width);
    const words: Array<readonly string[]> = new Array(count);
    const stampOf = new Int32Array(width);
    let defaultSlots: Int32Array | undefined;
    for (let e = 0; e < count; e++) {
      this.low = 0;
      this.high = 0;
      const n = this.entry(starts[e], ends[e]);
      const own = this.own;
      if (own !== undefined && delta) throw NOT_PLAIN;
      const local = own ?? defaultWords;
      if (this.high >= this.global.length || -this.low - 1 >= local.length) throw NOT_PLAIN;
      words[e] = local;
      const base = e * width;
      if (delta && e > 0) {
        members.copyWithin(base, base - width, base);
        at.copyWithin(base, base - width, base);
        end.copyWithin(base, base - width, base);
      }
      // Per local word, its slot + 1 (0: none), or -1 until a key names it: most default words are values, not names.
      const localSlots = own !== undefined ? new Int32Array(own.length).fill(-1) : (defaultSlots ??= new Int32Array(defaultWords.length).fill(-1));
      const found = this.found;
      for (let j = 0; j < n; j += 4) {
        const key = found[j + 1];
        let slot: number;
        if (key >= 0) slot = this.globalSlots[key] - 1;
        else {
          slot = localSlots[-key - 1];
          if (slot === -1) slot = localSlots[-key - 1] = (this.slots.slotOf.get(local[-key - 1]) ?? -1) + 1;
          slot--;
        }
        if (slot < 0) continue;
        if (stampOf[slot] === e + 1) throw NOT_PLAIN;
        stampOf[slot] = e + 1;
        members[base + slot] = found[j];
        at[base + slot] = found[j + 2];
        end[base + slot] = found[j + 3];
      }
    }
    return new ReportSlots(this.slots, count, globalWordCount, this.r, members, at, end, words);
  }

  /**
   * Reads one CompressedAttributes strictly; its map entries go to `found`.
   * Returns how many numbers were put there. The position is kept in a local
   * and one-byte varints (tags, most keys and word indexes) are read in
   * place; longer ones, and strings, through the cursor. A tag of more than
   * one byte is refused (the other paths read it).
   */
  private entry(from: number, to: number): number {
    const r = this.r;
    const buf = r.buf;
    let n = 0;
    let low = 0;
    let high = 0;
    this.own = undefined;
    let pos = from;
    while (pos < to) {
      const tag = buf[pos++];
      const member = tag >>> 3;
      if ((tag & 7) !== WIRE_LEN || member > STRING_MAPS || member < WORDS) throw NOT_PLAIN;
      r.pos = pos;
      const fieldEnd = r.length(to);
      pos = r.pos;
      if (member === WORDS) {
        (this.own ??= []).push(r.string(fieldEnd));
        pos = fieldEnd;
        continue;
      }
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
          } else {
            r.pos = pos;
            if (member === TIMESTAMPS || member === DURATIONS) this.instant(r.length(fieldEnd));
            else if (member === STRING_MAPS) this.pairs(r.length(fieldEnd));
            else r.skipValue(t & 7, fieldEnd);
            pos = r.pos;
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
      if (n + 4 > this.found.length) {
        const grown = new Int32Array(this.found.length * 2);
        grown.set(this.found);
        this.found = grown;
      }
      const found = this.found;
      found[n] = member;
      found[n + 1] = key;
      found[n + 2] = at;
      found[n + 3] = valueEnd;
      n += 4;
    }
    if (this.low > low) this.low = low;
    if (this.high < high) this.high = high;
    return n;
  }

  /** google.protobuf.Timestamp or Duration {seconds = 1: int64, nanos = 2: int32}, checked as AttributesReader reads it. */
  private instant(end: number): void {
    const r = this.r;
    while (r.pos < end) {
      const tag = r.varint(end);
      if (tag !== ((1 << 3) | WIRE_VARINT) && tag !== ((2 << 3) | WIRE_VARINT)) throw NOT_PLAIN;
      r.varint(end);
    }
  }

  /** CompressedStringMap {entries = 1: map<sint32, sint32>}: each pair's words noted (a missing key or value: word 0). */
  private pairs(end: number): void {
    const r = this.r;
    const buf = r.buf;
    let low = 0;
    let high = 0;
    let pos = r.pos;
    while (pos < end) {
      if (buf[pos++] !== PAIR_TAG) throw NOT_PLAIN;
      r.pos = pos;
      const pairEnd = r.length(end);
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
    r.pos = pos;
    // A pair without its key or value names word 0: within the range already.
    if (this.low > low) this.low = low;
    if (this.high < high) this.high = high;
  }
}
