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
// attributes in the same order; ids, times and sizes differ, mostly in as
// many bytes, a time's nanoseconds one in twelve times a byte more or less):
// an entry is compared with the entry before in WebAssembly
// (byte_differences.ts), and only the fields where they differ are read,
// the bytes after one of another length compared that many bytes on; if
// each has the member and key it had in the entry before, the entry is taken
// as that one was read (taken()), sharing its row where every field is
// where it was.

import type { GlobalDictionary } from "./compressed.ts";
import { AttributesReader, WORDS } from "./compressed_attributes_reader.ts";
import { differencesIn, type FirstDifference } from "./byte_differences.ts";
import { EntryFields } from "./report_slots_fields.ts";
import { EntryLayout, relative, twice } from "./report_slots_layout.ts";
import { type AttributeSlots, ChangedSlots, DefaultWords, ReportSlots } from "./report_slots.ts";
import { readReportFields } from "./report_request_reader.ts";
import { NOT_PLAIN } from "./strict_wire_cursor.ts";

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
  // The fields of the entry being read, one at a time.
  private readonly f: EntryFields;
  // The layout of the last entry entry() read without words of its own, and the one entry() is making.
  private layout: EntryLayout;
  private fresh: EntryLayout;
  private changed = new ChangedSlots(0);
  // taken(): the fields it read, and whether the entry got a row of its own.
  private moves: Int32Array = new Int32Array(4 * 8);
  private ownRow = false;

  constructor(
    private readonly r: AttributesReader,
    private readonly global: readonly string[],
    private readonly slots: AttributeSlots,
    layouts: [EntryLayout, EntryLayout],
  ) {
    [this.layout, this.fresh] = layouts;
    this.f = new EntryFields(r);
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
      this.f.low = 0;
      this.f.high = 0;
      let n = laidOut ? this.taken(firstDifference, starts[e - 1], starts[e], ends[e], base, e + 1, rowOf[e - 1] * width, shift[e - 1], delta) : -1;
      // Taken where it was: its slots are the entry before's, moved (not under DELTA_ENCODING: slots it does not give stay put).
      const shared = n >= 0 && !delta && !this.ownRow;
      rowOf[e] = shared ? rowOf[e - 1] : rows++;
      shift[e] = shared ? shift[e - 1] + starts[e] - starts[e - 1] : 0;
      changed.end(e, shared);
      if (n < 0) {
        this.f.low = 0;
        this.f.high = 0;
        n = this.entry(starts[e], ends[e], base, e + 1);
        laidOut = this.f.own === undefined;
        if (laidOut) [this.layout, this.fresh] = [this.fresh, this.layout];
      }
      const own = this.f.own;
      if (own !== undefined && delta) throw NOT_PLAIN;
      const local = own ?? defaultWords;
      if (this.f.high >= this.global.length || -this.f.low - 1 >= local.length) throw NOT_PLAIN;
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
   * Takes entry `stamp - 1` (row `base`, from `from` to `to`) as the entry
   * before (at `before`, laid out as this.layout; its slots in the row at
   * `previousRow`, `previousShift` bytes on) was read: only the fields whose
   * bytes differ are read (their slots to this.changed), each with the
   * layout's member and key, else -1 (read it with entry()); the bytes after
   * a field of another length are compared that many bytes on. The same
   * bytes are as well-formed and name the same words in the same lists
   * (neither entry has words of its own: a field of words would differ from
   * the layout's). When every field read has the layout's place and value's
   * place and not `copy`, returns 0 (the caller points it at the row
   * before's). Else the entry gets row `base`: the layout's slots are the
   * entry before's, moved; or, when a field read is elsewhere (this.ownRow:
   * it cannot share the row before), this.layout becomes this entry's and
   * its slots are where the layout has them. Its fields named by local words
   * are returned as entry() returns them.
   */
  private taken(
    firstDifference: FirstDifference,
    before: number,
    from: number,
    to: number,
    base: number,
    stamp: number,
    previousRow: number,
    previousShift: number,
    copy: boolean,
  ): number {
    const layout = this.layout;
    const length = layout.length;
    this.f.own = undefined;
    this.ownRow = false;
    this.changed.begin();
    // The fields read, four numbers each (layout field, and relative to `from`: end, value start, value end); whether any moved.
    let moves = 0;
    let moved = false;
    let i = 0;
    let k = 0;
    // This entry's bytes are `d` after the entry before's from the field read last on.
    let d = 0;
    for (;;) {
      i = firstDifference(before, from + d, i, Math.min(length, to - from - d));
      if (i >= length) break;
      while (layout.end[k] <= i) k++;
      const start = from + d + (k > 0 ? layout.end[k - 1] : 0);
      // No field left in this entry: it has fewer (entry() reads it).
      if (start >= to) return -1;
      const end = this.f.field(start, to) - from;
      if (this.f.member !== layout.member[k] || this.f.key !== layout.key[k]) return -1;
      const at = relative(this.f.at, from);
      const valueEnd = relative(this.f.valueEnd, from);
      if (end !== layout.end[k] || at !== layout.at[k] || valueEnd !== layout.valueEnd[k]) moved = true;
      if (moves + 4 > this.moves.length) this.moves = twice(this.moves);
      this.moves[moves] = k;
      this.moves[moves + 1] = end;
      this.moves[moves + 2] = at;
      this.moves[moves + 3] = valueEnd;
      moves += 4;
      const key = this.f.key;
      this.changed.field(key < 0 ? -2 : key < this.globalSlots.length ? this.globalSlots[key] - 1 : -1);
      i = layout.end[k];
      d = end - i;
      k++;
    }
    if (length + d !== to - from) return -1;
    if (!moved && !copy) return 0;
    const { members, at, end } = this;
    if (moved) {
      const movesMade = this.moves;
      // Fields named by local words that moved: left to entry() (their places are in layout.local).
      for (let m = 0; m < moves; m += 4) if (layout.key[movesMade[m]] < 0) return -1;
      this.ownRow = true;
      layout.move(movesMade, moves, to - from);
      // Its row as entry() writes it: the slot of each field named by a global word, where the layout now has it.
      const { globalSlots, stampOf } = this;
      const { key: keys, member: memberOf, at: valueAt, valueEnd } = layout;
      for (let f = 0; f < layout.count; f++) {
        const key = keys[f];
        const slot = key >= 0 && key < globalSlots.length ? globalSlots[key] - 1 : -1;
        if (slot < 0) continue;
        members[base + slot] = memberOf[f];
        at[base + slot] = relative(valueAt[f], -from);
        end[base + slot] = relative(valueEnd[f], -from);
        stampOf[slot] = stamp;
      }
    } else {
      const shift = previousShift + from - before;
      for (let j = 0; j < layout.givenCount; j++) {
        const slot = layout.given[j];
        members[base + slot] = members[previousRow + slot];
        at[base + slot] = relative(at[previousRow + slot], -shift);
        end[base + slot] = relative(end[previousRow + slot], -shift);
        this.stampOf[slot] = stamp;
      }
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
    this.f.own = undefined;
    let pos = from;
    while (pos < to) {
      pos = this.f.field(pos, to);
      const member = this.f.member;
      // Words of its own: the caller drops the layout.
      if (member === WORDS) continue;
      const key = this.f.key;
      const at = this.f.at;
      const valueEnd = this.f.valueEnd;
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
}
