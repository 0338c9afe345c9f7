// An entry's layout as report_slots_reader.ts read it, for the entries after
// it: a sidecar's entries are mostly byte for byte the entry before's, their
// few changed values (ids, times, sizes) the same length.

import { NO_VALUE } from "./compressed_attributes_reader.ts";

/**
 * The fields (CompressedAttributes members' map entries) of an entry read
 * without words of its own, their positions relative to the entry's start:
 * where each ends, its member, key and value; the slots its fields named by
 * global words gave, and its fields named by local words (key, member, value
 * start and end), as SlotsReader.entry returns them.
 */
export class EntryLayout {
  length = 0;
  count = 0;
  end: Int32Array = new Int32Array(64);
  member: Int32Array = new Int32Array(64);
  key: Int32Array = new Int32Array(64);
  at: Int32Array = new Int32Array(64);
  valueEnd: Int32Array = new Int32Array(64);
  given: Int32Array = new Int32Array(16);
  givenCount = 0;
  local: Int32Array = new Int32Array(16);
  localCount = 0;

  /** Starts the layout of an entry of `length` bytes. */
  clear(length: number): void {
    this.length = length;
    this.count = 0;
    this.givenCount = 0;
    this.localCount = 0;
  }

  /** A field ending at `end` (all positions relative to the entry's start; NO_VALUE kept). */
  field(end: number, member: number, key: number, at: number, valueEnd: number): void {
    const k = this.count;
    if (k === this.end.length) {
      this.end = twice(this.end);
      this.member = twice(this.member);
      this.key = twice(this.key);
      this.at = twice(this.at);
      this.valueEnd = twice(this.valueEnd);
    }
    this.end[k] = end;
    this.member[k] = member;
    this.key[k] = key;
    this.at[k] = at;
    this.valueEnd[k] = valueEnd;
    this.count = k + 1;
  }

  /**
   * How many bytes later `position` (relative to the entry's start) is in an
   * entry whose fields `moves` lists (four numbers each, in field order: a
   * field, and relative to that entry's start its end, value start and
   * value end) differ: by as many as the last such field before it grew.
   */
  movedBy(position: number, moves: Int32Array, n: number): number {
    let d = 0;
    for (let m = 0; m < n; m += 4) {
      const k = moves[m];
      if (this.end[k] > position) break;
      d = moves[m + 1] - this.end[k];
    }
    return d;
  }

  /** Becomes the layout of such an entry (`length` bytes; its fields named by local words did not move). */
  move(moves: Int32Array, n: number, length: number): void {
    for (let j = 0; j < this.localCount; j += 4) {
      this.local[j + 2] = relative(this.local[j + 2], -this.movedBy(this.local[j + 2], moves, n));
      this.local[j + 3] = relative(this.local[j + 3], -this.movedBy(this.local[j + 3], moves, n));
    }
    const { end, at, valueEnd } = this;
    let m = 0;
    let d = 0;
    // The fields before the first one read are where they were.
    for (let k = n > 0 ? moves[0] : this.count; k < this.count; k++) {
      if (m < n && moves[m] === k) {
        d = moves[m + 1] - end[k];
        end[k] = moves[m + 1];
        at[k] = moves[m + 2];
        valueEnd[k] = moves[m + 3];
        m += 4;
        continue;
      }
      end[k] += d;
      const a = at[k];
      if (a !== NO_VALUE) at[k] = a + d;
      const v = valueEnd[k];
      if (v !== NO_VALUE) valueEnd[k] = v + d;
    }
    this.length = length;
  }

  /** A slot its fields gave (a global word's). */
  gave(slot: number): void {
    if (this.givenCount === this.given.length) this.given = twice(this.given);
    this.given[this.givenCount++] = slot;
  }

  /** Its fields named by local words: `n` numbers of `local` (absolute positions from `from`). */
  locals(local: Int32Array, n: number, from: number): void {
    while (this.local.length < n) this.local = twice(this.local);
    for (let j = 0; j < n; j += 4) {
      this.local[j] = local[j];
      this.local[j + 1] = local[j + 1];
      this.local[j + 2] = relative(local[j + 2], from);
      this.local[j + 3] = relative(local[j + 3], from);
    }
    this.localCount = n;
  }
}

export function relative(position: number, from: number): number {
  return position === NO_VALUE ? NO_VALUE : position - from;
}

export function twice(a: Int32Array): Int32Array {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}
