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
//
// A sidecar's entries are mostly byte for byte the entry before's (the same
// attributes in the same order; ids, times and sizes differ, in as many
// bytes): an entry of the entry before's length is compared with it in
// WebAssembly (byte_differences.ts), and only the fields where they differ
// are read; if each has the place, member, key and value's place it had in
// the entry before, the entry is taken as that one was read (taken()).

import type { GlobalDictionary } from "./compressed.ts";
import {
  AttributesReader,
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
import { differencesIn, type FirstDifference } from "./byte_differences.ts";
import { EntryLayout, relative } from "./report_slots_layout.ts";
import { type AttributeSlots, ChangedSlots, DefaultWords, ReportSlots } from "./report_slots.ts";
import { readReportFields } from "./report_request_reader.ts";
import { instantAt, NOT_PLAIN, skipVarint, WIRE_LEN, WIRE_VARINT } from "./strict_wire_cursor.ts";

const KEY_TAG = (1 << 3) | WIRE_VARINT;
const PAIR_TAG = (1 << 3) | WIRE_LEN;
const PAIR_VALUE_TAG = (2 << 3) | WIRE_VARINT;

/** Rows made at first for a batch without DELTA_ENCODING (doubled when more entries are read whole). */
const FIRST_ROWS = 16;

let spareLayouts: [EntryLayout, EntryLayout] | undefined;

/** The entries of a plainly well-formed ReportRequest in `slots`, or undefined: take the other paths. */
export function readReportSlots(bytes: Buffer, dictionary: GlobalDictionary, slots: AttributeSlots): ReportSlots | undefined {
  const reader = new AttributesReader(bytes, dictionary.words, undefined);
  // Two layouts for every Report read (their typed arrays cost more to make than to fill); none shared if this were ever reentered.
  const layouts = spareLayouts ?? [new EntryLayout(), new EntryLayout()];
  spareLayouts = undefined;
  try {
    return new SlotsReader(reader, dictionary.words, slots, layouts).read();
  } catch (e) {
    if (e === NOT_PLAIN) return undefined;
    throw e;
  } finally {
    spareLayouts = layouts;
  }
}

class SlotsReader {
  private readonly width: number;
  private readonly globalSlots: Int32Array;
  // The batch's rows (ReportSlots), and per slot the number of the entry that last gave it (entry index + 1).
  private members = new Uint8Array(0);
  private at = new Int32Array(0);
  private end = new Int32Array(0);
  private rowCapacity = 0;
  private stampOf = new Int32Array(0);
  // Map entries of the entry being read whose key is a local word, known only once its words are: key, member, value start and end.
  private local = new Int32Array(4 * 16);
  // The lowest and highest word index the entry names (keys, strings, string maps' pairs; 0 where one is missing).
  private low = 0;
  private high = 0;
  // The words of the entry being read, when it has its own.
  private own: string[] | undefined;
  // The field field() read last: its member, key and value's start and end.
  private fMember = 0;
  private fKey = 0;
  private fAt = NO_VALUE;
  private fValueEnd = NO_VALUE;
  // The layout of the last entry entry() read without words of its own, and the one entry() is making.
  private layout: EntryLayout;
  private fresh: EntryLayout;
  private changed = new ChangedSlots(0);

  constructor(
    private readonly r: AttributesReader,
    private readonly global: readonly string[],
    private readonly slots: AttributeSlots,
    layouts: [EntryLayout, EntryLayout],
  ) {
    [this.layout, this.fresh] = layouts;
    this.width = slots.names.length;
    this.globalSlots = slots.globalSlots(global);
  }

  read(): ReportSlots {
    const { starts, ends, wordStarts, wordEnds, globalWordCount, delta } = readReportFields(this.r);
    const defaults = new DefaultWords(this.r.buf, wordStarts, wordEnds);
    const defaultWords = defaults.words;
    const count = starts.length;
    const width = this.width;
    // A row per entry read whole (a taken entry shares the row of the entry before), made as needed: a sidecar's
    // batch of 100 needs a few; under DELTA_ENCODING, one per entry.
    let rows = 0;
    this.rowsFor(delta ? count : Math.min(count, FIRST_ROWS));
    this.stampOf = new Int32Array(width);
    // Per entry, the row that holds its slots and how far after that row's entry it starts (ReportSlots).
    const [rowOf, shift] = [new Int32Array(count), new Int32Array(count)];
    const changed = (this.changed = new ChangedSlots(count));
    const words: Array<readonly string[]> = new Array(count);
    // Per default word, its slot + 1 (0: none), or -1 until a key names it: most default words are values, not names.
    let defaultSlots: Int32Array | undefined;
    // Whether the entry before has this.layout (read by entry() without words of its own, or taken()).
    let laidOut = false;
    const firstDifference = differencesIn(this.r.buf);
    for (let e = 0; e < count; e++) {
      if (rows === this.rowCapacity) this.rowsFor(rows * 2);
      const base = rows * width;
      // Under DELTA_ENCODING every entry has its own row, the one after the entry before's.
      if (delta && e > 0) {
        this.members.copyWithin(base, base - width, base);
        this.at.copyWithin(base, base - width, base);
        this.end.copyWithin(base, base - width, base);
      }
      this.low = 0;
      this.high = 0;
      let n = laidOut && ends[e] - starts[e] === this.layout.length ? this.taken(firstDifference, starts[e - 1], starts[e], base, e + 1, delta) : -1;
      // Taken: its slots are the entry before's, moved (not under DELTA_ENCODING: slots it does not give stay put).
      const shared = n >= 0 && !delta;
      rowOf[e] = shared ? rowOf[e - 1] : rows++;
      shift[e] = shared ? shift[e - 1] + starts[e] - starts[e - 1] : 0;
      changed.end(e, shared);
      if (n < 0) {
        this.low = 0;
        this.high = 0;
        n = this.entry(starts[e], ends[e], base, e + 1);
        laidOut = this.own === undefined;
        if (laidOut) [this.layout, this.fresh] = [this.fresh, this.layout];
      }
      const own = this.own;
      if (own !== undefined && delta) throw NOT_PLAIN;
      const local = own ?? defaultWords;
      if (this.high >= this.global.length || -this.low - 1 >= local.length) throw NOT_PLAIN;
      words[e] = local;
      if (n === 0) continue;
      const localSlots = own !== undefined ? new Int32Array(own.length).fill(-1) : (defaultSlots ??= new Int32Array(defaultWords.length).fill(-1));
      const found = this.local;
      for (let j = 0; j < n; j += 4) {
        const word = -found[j] - 1;
        let slot = localSlots[word];
        if (slot === -1) slot = localSlots[word] = (this.slots.slotOf.get(own !== undefined ? own[word] : defaults.word(word)) ?? -1) + 1;
        if (slot > 0) this.put(base, e + 1, slot - 1, found[j + 1], found[j + 2], found[j + 3]);
      }
    }
    return new ReportSlots(this.slots, count, globalWordCount, this.r, this.members, this.at, this.end, rowOf, shift, changed, words, defaults);
  }

  /** Room for `n` rows, those made so far kept (the new ones are zero: no member gave their slots). */
  private rowsFor(n: number): void {
    const members = new Uint8Array(n * this.width);
    const at = new Int32Array(n * this.width);
    const end = new Int32Array(n * this.width);
    members.set(this.members);
    at.set(this.at);
    end.set(this.end);
    this.members = members;
    this.at = at;
    this.end = end;
    this.rowCapacity = n;
  }

  /** Entry `stamp - 1` (row `base`) gives `slot`: the general path would pick one of two values by its order of keys. */
  private put(base: number, stamp: number, slot: number, member: number, at: number, end: number): void {
    if (this.stampOf[slot] === stamp) throw NOT_PLAIN;
    this.stampOf[slot] = stamp;
    this.members[base + slot] = member;
    this.at[base + slot] = at;
    this.end[base + slot] = end;
  }

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
   * Takes entry `stamp - 1` (row `base`, at `from`) as the entry before (at
   * `before`, of this.layout's length) was read: only the fields whose bytes
   * differ are read (their slots to this.changed), each with the layout's
   * place, member, key and value's place, else -1 (read it with entry()). The
   * same bytes are as well-formed and name the same words in the same lists
   * (neither entry has words of its own: a field of words would differ from
   * the layout's). With `copy`, the layout's slots are the entry before's,
   * moved, and its fields named by local words are returned as entry()
   * returns them; without, 0 (the caller points it at the row before's).
   */
  private taken(firstDifference: FirstDifference, before: number, from: number, base: number, stamp: number, copy: boolean): number {
    const layout = this.layout;
    const length = layout.length;
    this.own = undefined;
    this.changed.begin();
    let i = 0;
    let k = 0;
    for (;;) {
      i = firstDifference(before, from, i, length);
      if (i >= length) break;
      while (layout.end[k] <= i) k++;
      const end = this.field(from + (k > 0 ? layout.end[k - 1] : 0), from + length) - from;
      if (
        end !== layout.end[k] ||
        this.fMember !== layout.member[k] ||
        this.fKey !== layout.key[k] ||
        relative(this.fAt, from) !== layout.at[k] ||
        relative(this.fValueEnd, from) !== layout.valueEnd[k]
      )
        return -1;
      const key = this.fKey;
      this.changed.field(key < 0 ? -2 : key < this.globalSlots.length ? this.globalSlots[key] - 1 : -1);
      i = end;
      k++;
    }
    if (!copy) return 0;
    const shift = from - before;
    const { members, at, end } = this;
    const previous = base - this.width;
    for (let j = 0; j < layout.givenCount; j++) {
      const slot = layout.given[j];
      members[base + slot] = members[previous + slot];
      at[base + slot] = relative(at[previous + slot], -shift);
      end[base + slot] = relative(end[previous + slot], -shift);
      this.stampOf[slot] = stamp;
    }
    const n = layout.localCount;
    while (this.local.length < n) this.grow();
    const local = this.local;
    for (let j = 0; j < n; j += 4) {
      local[j] = layout.local[j];
      local[j + 1] = layout.local[j + 1];
      local[j + 2] = relative(layout.local[j + 2], -from);
      local[j + 3] = relative(layout.local[j + 3], -from);
    }
    return n;
  }

  /**
   * Reads one CompressedAttributes strictly (row `base` of entry `stamp - 1`):
   * the attributes named by global words go to their slots, those named by
   * local words to `local` (returns how many numbers were put there); its
   * layout in this.fresh.
   */
  private entry(from: number, to: number, base: number, stamp: number): number {
    const fresh = this.fresh;
    fresh.clear(to - from);
    let n = 0;
    this.own = undefined;
    let pos = from;
    while (pos < to) {
      pos = this.field(pos, to);
      const member = this.fMember;
      // Words of its own: the caller drops the layout.
      if (member === WORDS) continue;
      const key = this.fKey;
      const at = this.fAt;
      const valueEnd = this.fValueEnd;
      fresh.field(pos - from, member, key, relative(at, from), relative(valueEnd, from));
      if (key >= 0) {
        // A key past the global words: refused once the entry is read (high).
        const slot = key < this.globalSlots.length ? this.globalSlots[key] - 1 : -1;
        if (slot >= 0) {
          this.put(base, stamp, slot, member, at, valueEnd);
          fresh.gave(slot);
        }
        continue;
      }
      if (n + 4 > this.local.length) this.grow();
      const local = this.local;
      local[n] = key;
      local[n + 1] = member;
      local[n + 2] = at;
      local[n + 3] = valueEnd;
      n += 4;
    }
    fresh.locals(this.local, n, from);
    return n;
  }

  private grow(): void {
    const grown = new Int32Array(this.local.length * 2);
    grown.set(this.local);
    this.local = grown;
  }

  /**
   * Reads one field of a CompressedAttributes strictly from `from` (within
   * `to`): a word of its own (into this.own), or a member's map entry (its
   * member, key and value's place in fMember, fKey, fAt, fValueEnd; the
   * words it names in low and high). Returns where it ends. The position is
   * kept in a local and one-byte varints (tags, lengths, most keys and word
   * indexes) are read in place, longer ones through the cursor. A tag of more
   * than one byte is refused (the other paths read it).
   */
  private field(from: number, to: number): number {
    const r = this.r;
    const buf = r.buf;
    let pos = from;
    const tag = buf[pos++];
    const member = tag >>> 3;
    if ((tag & 7) !== WIRE_LEN || member > STRING_MAPS || member < WORDS) throw NOT_PLAIN;
    const fieldEnd = this.lengthAt(pos, to);
    pos = r.pos;
    this.fMember = member;
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
    this.fKey = key;
    this.fAt = at;
    this.fValueEnd = valueEnd;
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
