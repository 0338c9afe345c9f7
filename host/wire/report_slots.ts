// A Report's entries as the hub's standard metrics read them (a hub without an
// access log): each attribute they read has a slot, and each entry keeps, per
// slot, only where the value's bytes are (report_slots_reader.ts reads them
// there). No map per entry and no value object for an attribute nobody
// looks at; and two entries whose bytes for some slots are the same are
// known to hold the same values there without making any.

import type { AttributeLookup, AttributeValue } from "./compressed.ts";
import { type AttributesReader, NO_VALUE } from "./compressed_attributes_reader.ts";
import { relative, twice } from "./report_slots_layout.ts";

// Field numbers of CompressedAttributes whose values name words, and of those counted.
const STRINGS = 2;
const STRING_MAPS = 9;
const INT64S = 3;
const DURATIONS = 7;
// google.protobuf.Duration's seconds (field 1, a varint).
const SECONDS_TAG = 1 << 3;

/**
 * A batch's default_words (valid UTF-8), each decoded when first named: most
 * are values (request ids, paths) no label reads.
 */
export class DefaultWords {
  /** Decoded so far (holes elsewhere). */
  readonly words: string[];

  constructor(
    private readonly buf: Buffer,
    private readonly starts: readonly number[],
    private readonly ends: readonly number[],
  ) {
    this.words = new Array<string>(starts.length);
  }

  word(i: number): string {
    let w = this.words[i];
    if (w === undefined) w = this.words[i] = this.buf.toString("utf8", this.starts[i], this.ends[i]);
    return w;
  }

  /** Decodes the words a `member` value at `at`..`end` names (read strictly before). */
  decodeNamed(r: AttributesReader, member: number, at: number, end: number): void {
    if (at === NO_VALUE) return;
    r.pos = at;
    if (member === STRINGS) {
      this.named(r.sint32(end));
      return;
    }
    if (member !== STRING_MAPS) return;
    const to = r.length(end);
    while (r.pos < to) {
      r.varint(to);
      const pairEnd = r.length(to);
      while (r.pos < pairEnd) {
        r.varint(pairEnd);
        this.named(r.sint32(pairEnd));
      }
    }
  }

  private named(index: number): void {
    if (index < 0) this.word(-index - 1);
  }
}

/** The attributes kept, each in a slot: its index in `names`. */
export class AttributeSlots {
  readonly slotOf: ReadonlyMap<string, number>;
  private global: { words: readonly string[]; slots: Int32Array } | undefined;

  constructor(readonly names: readonly string[]) {
    this.slotOf = new Map(names.map((name, i) => [name, i]));
  }

  /** Per word of `words`, its slot + 1, or 0 for a word no slot is for. */
  slotsOf(words: readonly string[]): Int32Array {
    const slots = new Int32Array(words.length);
    for (let i = 0; i < words.length; i++) slots[i] = (this.slotOf.get(words[i]) ?? -1) + 1;
    return slots;
  }

  /** slotsOf the global words, made once per word list. */
  globalSlots(words: readonly string[]): Int32Array {
    if (this.global?.words !== words) this.global = { words, slots: this.slotsOf(words) };
    return this.global.slots;
  }

  /** The slots of `names` that exist. */
  slotsNamed(names: Iterable<string>): Int32Array {
    const slots: number[] = [];
    for (const name of names) {
      const s = this.slotOf.get(name);
      if (s !== undefined) slots.push(s);
    }
    return Int32Array.from(slots);
  }
}

/**
 * Per entry taken from the entry before and sharing its row, the slots of
 * the fields whose bytes differ from that entry's (-1: a field no slot is
 * for; -2: one named by a local word, whose slot is not known here); every
 * other byte of the two entries is the same.
 */
export class ChangedSlots {
  private readonly from: Int32Array;
  private readonly to: Int32Array;
  private slots: Int32Array = new Int32Array(64);
  // The slots kept (entries ended shared) and those since begin().
  private mark = 0;
  private length = 0;

  constructor(count: number) {
    this.from = new Int32Array(count);
    this.to = new Int32Array(count).fill(-1);
  }

  /** An entry's differing fields follow. */
  begin(): void {
    this.length = this.mark;
  }

  field(slot: number): void {
    if (this.length === this.slots.length) this.slots = twice(this.slots);
    this.slots[this.length++] = slot;
  }

  /** Entry `e`'s fields are those since begin() when it `shared` the row of the entry before; else none is known. */
  end(e: number, shared: boolean): void {
    if (!shared) {
      this.length = this.mark;
      return;
    }
    this.from[e] = this.mark;
    this.to[e] = this.mark = this.length;
  }

  /** Whether entry `e` shares the row of the entry before and none of its differing fields is for `slot` (false when unsure). */
  notOf(e: number, slot: number): boolean {
    const to = this.to[e];
    if (to < 0) return false;
    for (let j = this.from[e]; j < to; j++) {
      const s = this.slots[j];
      if (s === slot || s === -2) return false;
    }
    return true;
  }

  /** Whether entry `e` shares the row of the entry before and none of its differing fields is for a slot `mask` marks (false when unsure). */
  noneOf(e: number, mask: Uint8Array): boolean {
    const to = this.to[e];
    if (to < 0) return false;
    for (let j = this.from[e]; j < to; j++) {
      const slot = this.slots[j];
      if (slot === -2 || (slot >= 0 && mask[slot] === 1)) return false;
    }
    return true;
  }
}

/**
 * One Report's entries: per entry and slot (row `rowOf[entry] * width +
 * slot`), the CompressedAttributes member that gave the attribute (0:
 * absent) and where its value's bytes are, `shift[entry]` bytes before
 * where they are in the entry (an entry laid out as the entry before has
 * that entry's row). Read from the request's buffer when asked for, so
 * valid only while that buffer is (the Report handler's synchronous part).
 */
export class ReportSlots {
  private readonly width: number;

  constructor(
    readonly slots: AttributeSlots,
    readonly count: number,
    readonly globalWordCount: number,
    private readonly reader: AttributesReader,
    private readonly members: Uint8Array,
    private readonly at: Int32Array,
    private readonly end: Int32Array,
    private readonly rowOf: Int32Array,
    private readonly shift: Int32Array,
    private readonly changed: ChangedSlots,
    /** Per entry, the words its negative indexes name (its own, or the batch's default_words: `defaults.words`). */
    private readonly words: ReadonlyArray<readonly string[]>,
    private readonly defaults: DefaultWords,
  ) {
    this.width = slots.names.length;
  }

  /** Entry `entry`'s value in `slot`, as the general path decodes it; undefined when the entry has none. */
  value(entry: number, slot: number): AttributeValue | undefined {
    const row = this.rowOf[entry] * this.width + slot;
    const member = this.members[row];
    if (member === 0) return undefined;
    const words = this.words[entry];
    const at = relative(this.at[row], -this.shift[entry]);
    const end = relative(this.end[row], -this.shift[entry]);
    if (words === this.defaults.words) this.defaults.decodeNamed(this.reader, member, at, end);
    return this.reader.valueAt(member, at, end, words);
  }

  /**
   * Entry `entry`'s value in `slot` as the standard metrics count it, when
   * it is an int64 or a duration whose seconds are below 2^32 (Number of
   * the value the general path makes, and durationMs of it), or absent (0);
   * else undefined.
   */
  countOf(entry: number, slot: number): number | undefined {
    const row = this.rowOf[entry] * this.width + slot;
    const member = this.members[row];
    if (member === 0) return 0;
    if (member !== INT64S && member !== DURATIONS) return undefined;
    const r = this.reader;
    const at = this.at[row];
    if (at === NO_VALUE) return 0;
    const shift = this.shift[entry];
    const end = this.end[row] + shift;
    r.pos = at + shift;
    if (member === INT64S) {
      const lo = r.varint(end);
      return r.hi === 0 ? lo : undefined;
    }
    // As AttributesReader.instant reads one (read strictly before): a field given again takes the later value.
    const to = r.length(end);
    let seconds = 0;
    let nanos = 0;
    while (r.pos < to) {
      const tag = r.varint(to);
      if (tag === SECONDS_TAG) {
        seconds = r.varint(to);
        if (r.hi !== 0) return undefined;
      } else nanos = r.varint(to) | 0;
    }
    return seconds * 1000 + nanos / 1e6;
  }

  /** Whether entry `entry` (not the first) holds the entry before's bytes in `slot` (false when unsure): the same countOf. */
  sameAsBefore(entry: number, slot: number): boolean {
    return this.changed.notOf(entry, slot);
  }

  /**
   * Whether entries `a` and `b` hold the same value in every slot of `compared`
   * (false when unsure): the same member with the same bytes, their words
   * named through the same lists.
   */
  same(a: number, b: number, compared: Int32Array): boolean {
    // Taken from b, where only fields of other slots differ: the slots compared have b's bytes.
    if (b === a - 1 && this.changed.noneOf(a, this.maskOf(compared))) return true;
    if (this.words[a] !== this.words[b]) return false;
    const buf = this.reader.buf;
    const { members, at, end, width } = this;
    const rowA = this.rowOf[a] * width;
    const rowB = this.rowOf[b] * width;
    const shiftA = this.shift[a];
    const shiftB = this.shift[b];
    for (let i = 0; i < compared.length; i++) {
      const x = rowA + compared[i];
      const y = rowB + compared[i];
      if (members[x] !== members[y]) return false;
      if (members[x] === 0) continue;
      // Lengths of the rows' positions (0 for NO_VALUE's), then the bytes where they are in each entry.
      const n = end[x] - at[x];
      if (end[y] - at[y] !== n) return false;
      let p = at[x] + shiftA;
      let q = at[y] + shiftB;
      for (const stop = p + n; p < stop; p++, q++) if (buf[p] !== buf[q]) return false;
    }
    return true;
  }

  private masked: Int32Array | undefined;
  private mask = new Uint8Array(0);

  /** `slots` as a mask of the row (1: compared), made once per array. */
  private maskOf(slots: Int32Array): Uint8Array {
    if (this.masked !== slots) {
      this.mask = new Uint8Array(this.width);
      for (let i = 0; i < slots.length; i++) this.mask[slots[i]] = 1;
      this.masked = slots;
    }
    return this.mask;
  }

  /** A lookup by name of one entry's attributes (one object for the batch: set its `entry`). */
  view(): EntryView {
    return new EntryView(this);
  }
}

/** One entry of a ReportSlots, looked up by name (names with no slot: undefined). */
export class EntryView implements AttributeLookup {
  entry = 0;

  constructor(private readonly batch: ReportSlots) {}

  get(name: string): AttributeValue | undefined {
    const slot = this.batch.slots.slotOf.get(name);
    return slot === undefined ? undefined : this.batch.value(this.entry, slot);
  }

  count(name: string): number | undefined {
    const slot = this.batch.slots.slotOf.get(name);
    return slot === undefined ? undefined : this.batch.countOf(this.entry, slot);
  }
}
