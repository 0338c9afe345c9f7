// One pass over a mesh.hub.v1.CompressedAttributes's wire format straight
// into an attribute map, for the hub's one-pass readers of plainly
// well-formed requests (report_request_reader.ts, check_request_reader.ts):
// each map entry's key and value given at most once, every string valid
// UTF-8, every index naming a word; anything else throws NOT_PLAIN and the
// reader's caller takes the general path (protobufjs, decodeAttributes),
// which words every refusal. So when it answers, it answers what
// decodeAttributes would: the same map, in the same insertion order —
// decodeAttributes visits the members in the order strings, int64s,
// doubles, bools, timestamps, durations, bytes, string_maps, and each
// member's keys in JavaScript property order (indexes >= 0 ascending, then
// negative ones as they came; a key given again keeps its place and takes
// the later value).

import type { AttributeMap, AttributeValue, Instant } from "./compressed.ts";
import { NOT_PLAIN, StrictWireCursor, WIRE_FIXED64, WIRE_LEN, WIRE_VARINT } from "./strict_wire_cursor.ts";

// Field numbers of CompressedAttributes (proto/mesh/hub/v1/attributes.proto).
export const WORDS = 1;
export const STRINGS = 2;
export const INT64S = 3;
export const DOUBLES = 4;
export const BOOLS = 5;
export const TIMESTAMPS = 6;
export const DURATIONS = 7;
export const BYTES = 8;
export const STRING_MAPS = 9;
/** The wire type of each map member's value, by field number. */
export const VALUE_WIRE = [-1, -1, WIRE_VARINT, WIRE_VARINT, WIRE_FIXED64, WIRE_VARINT, WIRE_LEN, WIRE_LEN, WIRE_LEN, WIRE_LEN];
/** Where a map entry without a value has it. */
export const NO_VALUE = -1;

/**
 * Per global word index, 1 when `wanted` names the word: one set lookup per
 * word and wanted set, not one per reported attribute. Weak: a
 * reconfigured hub's old sets go with their tables.
 */
const wantedGlobalWords = new WeakMap<ReadonlySet<string>, { words: readonly string[]; flags: Uint8Array }>();

function wantedFlags(words: readonly string[], wanted: ReadonlySet<string>): Uint8Array {
  const cached = wantedGlobalWords.get(wanted);
  if (cached !== undefined && cached.words === words) return cached.flags;
  const flags = new Uint8Array(words.length);
  for (let i = 0; i < words.length; i++) if (wanted.has(words[i])) flags[i] = 1;
  wantedGlobalWords.set(wanted, { words, flags });
  return flags;
}

/** One map entry of a CompressedAttributes member: its key and where its value is (NO_VALUE: absent). */
interface MapEntry {
  key: number;
  at: number;
  end: number;
  /** A message value, read when its entry is: a time, or a string map's pairs (an overwritten value must be well-formed too). */
  message: Instant | MapEntry[] | undefined;
}

/** A map key given again: the later entry's value replaces the earlier's, as `object[key] = value` does. */
function takeValue(first: MapEntry, later: MapEntry): void {
  first.at = later.at;
  first.end = later.end;
  first.message = later.message;
}

/**
 * Reads CompressedAttributes messages of one request (`entry`), optionally
 * only the attributes `wanted` names. The request's own fields are read
 * through it too (its cursor): one class of object for every request type,
 * so that V8 sees one shape wherever the cursor is used.
 */
export class AttributesReader extends StrictWireCursor {
  // Map entries of the entry being read, by member field number (reused).
  private readonly members: MapEntry[][] = Array.from({ length: STRING_MAPS + 1 }, () => []);
  private readonly counts = new Int32Array(STRING_MAPS + 1);
  // A negative key given twice: seen[-key - 1] === stamp, and firstOf[-key - 1] is its first entry.
  private seen = new Int32Array(0);
  private firstOf: MapEntry[] = [];
  private stamp = 0;
  // With `wanted`: per global word, whether it is wanted; per word of the batch's default_words, the same (made on first use).
  private readonly wantedGlobal: Uint8Array | undefined;
  private wantedDefault: Uint8Array | undefined;
  // The lowest and highest word indexes named by the entry's attributes dropped unread (checked once its words are known).
  private droppedLow = 0;
  private droppedHigh = 0;

  constructor(
    buf: Buffer,
    private readonly global: readonly string[],
    private readonly wanted: ReadonlySet<string> | undefined,
  ) {
    super(buf);
    this.wantedGlobal = wanted === undefined ? undefined : wantedFlags(global, wanted);
  }

  /** One CompressedAttributes onto `target`, members in decodeAttributes's order. */
  entry(from: number, to: number, defaultWords: readonly string[], target: AttributeMap): AttributeMap {
    const counts = this.counts;
    counts.fill(0);
    this.droppedLow = 0;
    this.droppedHigh = 0;
    let own: string[] | undefined;
    this.pos = from;
    while (this.pos < to) {
      const tag = this.varint(to);
      const field = tag >>> 3;
      if ((tag & 7) !== WIRE_LEN || field > STRING_MAPS || field < WORDS) throw NOT_PLAIN;
      const end = this.length(to);
      if (field === WORDS) (own ??= []).push(this.string(end));
      else this.mapEntry(field, end);
    }
    const local = own ?? defaultWords;
    // Every word a dropped attribute names exists, so it would have been taken (the general path looks up fewer: those
    // of a map key given twice only once); else the general path words what is wrong.
    if (this.droppedHigh >= this.global.length || -this.droppedLow - 1 >= local.length) throw NOT_PLAIN;
    const wantedLocal = this.wanted === undefined ? undefined : own !== undefined ? this.localFlags(own) : (this.wantedDefault ??= this.localFlags(local));
    for (let member = STRINGS; member <= STRING_MAPS; member++) {
      if (counts[member] === 0) continue;
      const list = this.members[member];
      const n = this.inPropertyOrder(list, counts[member], local.length);
      for (let j = 0; j < n; j++) {
        const e = list[j];
        const name = this.word(e.key, local);
        if (wantedLocal === undefined || (e.key >= 0 ? this.wantedGlobal![e.key] : wantedLocal[-e.key - 1]) === 1)
          target.set(name, this.value(member, e, local));
        else this.checkValue(member, e, local);
      }
    }
    return target;
  }

  /** Per local word, 1 when wanted. */
  private localFlags(words: readonly string[]): Uint8Array {
    const flags = new Uint8Array(words.length);
    for (let i = 0; i < words.length; i++) if (this.wanted!.has(words[i])) flags[i] = 1;
    return flags;
  }

  /** A global word whose attribute nobody wants: its value is checked, not made. */
  private unwantedGlobal(key: number): boolean {
    return this.wantedGlobal !== undefined && key >= 0 && key < this.wantedGlobal.length && this.wantedGlobal[key] === 0;
  }

  /** A word index named by a dropped attribute. */
  private dropped(index: number): void {
    if (index < this.droppedLow) this.droppedLow = index;
    else if (index > this.droppedHigh) this.droppedHigh = index;
  }

  /** Records one map entry {key = 1: sint32, value = 2} of `member` ending at `end`. */
  private mapEntry(member: number, end: number): void {
    const valueTag = (2 << 3) | VALUE_WIRE[member];
    let key = 0;
    let hasKey = false;
    let at = NO_VALUE;
    let valueEnd = NO_VALUE;
    let message: Instant | MapEntry[] | undefined;
    // A string map nobody wants, its key read first (as encoders write it): its words' indexes are noted, no pairs made.
    let droppedMap = false;
    while (this.pos < end) {
      const tag = this.varint(end);
      if (tag === ((1 << 3) | WIRE_VARINT) && !hasKey) {
        key = this.sint32(end);
        hasKey = true;
      } else if (tag === valueTag && at === NO_VALUE) {
        at = this.pos;
        if (member === TIMESTAMPS || member === DURATIONS) message = this.instant(this.length(end));
        else if (member === STRING_MAPS) {
          droppedMap = hasKey && this.unwantedGlobal(key);
          if (droppedMap) this.notePairs(this.length(end));
          else message = this.pairs(this.length(end));
        } else this.skipValue(tag & 7, end);
        valueEnd = this.pos;
      } else {
        throw NOT_PLAIN;
      }
    }
    if (this.pos !== end || (at === NO_VALUE && member === BYTES)) throw NOT_PLAIN;
    // An attribute nobody wants whose value was checked whole just now is not kept; the words a string names are checked with the entry's.
    if (droppedMap) return;
    if (this.unwantedGlobal(key)) {
      if (member === STRING_MAPS) {
        if (at !== NO_VALUE) {
          this.pos = at;
          this.notePairs(this.length(end));
        }
      } else if (member === STRINGS) {
        this.pos = at;
        this.dropped(at === NO_VALUE ? 0 : this.sint32(valueEnd));
      }
      this.pos = end;
      return;
    }
    // A new record each time: ordering moves records within the list and drops repeated keys.
    this.members[member][this.counts[member]++] = { key, at, end: valueEnd, message };
  }

  /**
   * Orders the first `n` entries as JavaScript orders the keys of the object
   * protobufjs decodes them into: indexes >= 0 ascending, then negative ones
   * in wire order; a key given again keeps its place and takes the later
   * value. Returns how many entries remain.
   */
  private inPropertyOrder(list: MapEntry[], n: number, localWords: number): number {
    if (this.firstOf.length < localWords) {
      this.seen = new Int32Array(localWords);
      this.firstOf = new Array<MapEntry>(localWords);
    }
    const stamp = ++this.stamp;
    let nonNegative = 0;
    let kept = 0;
    for (let i = 0; i < n; i++) {
      const e = list[i];
      if (e.key < 0) {
        const slot = -e.key - 1;
        if (slot >= localWords) throw NOT_PLAIN;
        if (this.seen[slot] === stamp) {
          takeValue(this.firstOf[slot], e);
          continue;
        }
        this.seen[slot] = stamp;
        this.firstOf[slot] = e;
        list[kept++] = e;
        continue;
      }
      let j = nonNegative;
      while (j > 0 && list[j - 1].key > e.key) j--;
      if (j > 0 && list[j - 1].key === e.key) {
        takeValue(list[j - 1], e);
        continue;
      }
      // The kept entries from j on move one place up (kept <= i: nothing unread is overwritten).
      for (let k = kept; k > j; k--) list[k] = list[k - 1];
      list[j] = e;
      nonNegative++;
      kept++;
    }
    return kept;
  }

  private word(index: number, local: readonly string[]): string {
    const w = index >= 0 ? this.global[index] : local[-index - 1];
    if (w === undefined) throw NOT_PLAIN;
    return w;
  }

  private value(member: number, e: MapEntry, local: readonly string[]): AttributeValue {
    const present = e.at !== NO_VALUE;
    this.pos = e.at;
    switch (member) {
      case STRINGS:
        return { stringValue: this.word(present ? this.sint32(e.end) : 0, local) };
      case INT64S:
        return { int64Value: present ? this.int64(e.end) : 0n };
      case DOUBLES:
        return { doubleValue: present ? this.buf.readDoubleLE(e.at) : 0 };
      case BOOLS:
        return { boolValue: present ? this.bool(e.end) : false };
      case TIMESTAMPS:
        return { timestampValue: (e.message as Instant | undefined) ?? { seconds: 0n, nanos: 0 } };
      case DURATIONS:
        return { durationValue: (e.message as Instant | undefined) ?? { seconds: 0n, nanos: 0 } };
      case BYTES: {
        const end = this.length(e.end);
        return { bytesValue: this.buf.subarray(this.pos, end) };
      }
      default:
        return { stringMapValue: { entries: this.stringMap((e.message as MapEntry[] | undefined) ?? [], local) } };
    }
  }

  /**
   * The value of a `member` map entry whose value starts at `at` (NO_VALUE: none) and ends at `end`, as entry() makes
   * it, for readers that keep where values are (report_slots_reader.ts); the bytes were read as strictly before.
   */
  valueAt(member: number, at: number, end: number, local: readonly string[]): AttributeValue {
    let message: Instant | MapEntry[] | undefined;
    if (at !== NO_VALUE && (member === TIMESTAMPS || member === DURATIONS || member === STRING_MAPS)) {
      this.pos = at;
      const to = this.length(end);
      message = member === STRING_MAPS ? this.pairs(to) : this.instant(to);
    }
    return this.value(member, { key: 0, at, end, message }, local);
  }

  /** What value() would refuse of an entry whose value is not wanted: the words a string or a string map names, a bytes value's length. */
  private checkValue(member: number, e: MapEntry, local: readonly string[]): void {
    const present = e.at !== NO_VALUE;
    this.pos = e.at;
    if (member === STRINGS) this.word(present ? this.sint32(e.end) : 0, local);
    else if (member === BYTES) this.length(e.end);
    else if (member === STRING_MAPS) {
      const pairs = (e.message as MapEntry[] | undefined) ?? [];
      const n = this.inPropertyOrder(pairs, pairs.length, local.length);
      for (let i = 0; i < n; i++) {
        this.word(pairs[i].key, local);
        this.word(pairs[i].at, local);
      }
    }
  }

  /** google.protobuf.Timestamp or Duration: {seconds = 1: int64, nanos = 2: int32}. */
  private instant(end: number): Instant {
    let seconds = 0n;
    let nanos = 0;
    while (this.pos < end) {
      const tag = this.varint(end);
      if (tag === ((1 << 3) | WIRE_VARINT)) seconds = this.int64(end);
      else if (tag === ((2 << 3) | WIRE_VARINT)) nanos = this.varint(end) | 0;
      else throw NOT_PLAIN;
    }
    return { seconds, nanos };
  }

  /** CompressedStringMap {entries = 1: map<sint32, sint32>}: its pairs, the value index in `at`. */
  private pairs(end: number): MapEntry[] {
    const pairs: MapEntry[] = [];
    while (this.pos < end) {
      if (this.varint(end) !== ((1 << 3) | WIRE_LEN)) throw NOT_PLAIN;
      const pairEnd = this.length(end);
      let key = 0;
      let value = 0;
      let seen = 0;
      while (this.pos < pairEnd) {
        const tag = this.varint(pairEnd);
        const bit = tag === ((1 << 3) | WIRE_VARINT) ? 1 : tag === ((2 << 3) | WIRE_VARINT) ? 2 : 0;
        if (bit === 0 || seen & bit) throw NOT_PLAIN;
        seen |= bit;
        if (bit === 1) key = this.sint32(pairEnd);
        else value = this.sint32(pairEnd);
      }
      if (this.pos !== pairEnd) throw NOT_PLAIN;
      pairs.push({ key, at: value, end: 0, message: undefined });
    }
    return pairs;
  }

  /** As pairs(), for a map nobody wants: the word indexes are noted (dropped()), nothing is made. */
  private notePairs(end: number): void {
    while (this.pos < end) {
      if (this.varint(end) !== ((1 << 3) | WIRE_LEN)) throw NOT_PLAIN;
      const pairEnd = this.length(end);
      let seen = 0;
      while (this.pos < pairEnd) {
        const tag = this.varint(pairEnd);
        const bit = tag === ((1 << 3) | WIRE_VARINT) ? 1 : tag === ((2 << 3) | WIRE_VARINT) ? 2 : 0;
        if (bit === 0 || seen & bit) throw NOT_PLAIN;
        seen |= bit;
        this.dropped(this.sint32(pairEnd));
      }
      if (this.pos !== pairEnd) throw NOT_PLAIN;
      // A pair without its key or value names word 0, as protobufjs's default.
      if (seen !== 3) this.dropped(0);
    }
  }

  /** A string map's pairs as decodeAttributes builds its entries. */
  private stringMap(pairs: MapEntry[], local: readonly string[]): Record<string, string> {
    const n = this.inPropertyOrder(pairs, pairs.length, local.length);
    const entries: Record<string, string> = Object.create(null); // a key "__proto__" is data, as in decodeAttributes
    for (let i = 0; i < n; i++) entries[this.word(pairs[i].key, local)] = this.word(pairs[i].at, local);
    return entries;
  }
}
