// A string → index table for the hub's word dictionaries: open addressing
// with the hash computed once by the caller, so one hash of a string serves
// the lookup in the global words and in the message's own words (a Map
// would hash it again for every has, get and set). Emptied in O(1) by a
// stamp, as a dictionary is once per hub message.

import { bytesEqualString } from "../text";

export const NO_WORD: i32 = i32.MIN_VALUE;

/** The hash a WordTable files `s` under: four UTF-16 units a step, then mixed. */
export function wordHash(s: string): u32 {
  const ptr = changetype<usize>(s);
  const bytes = <usize>s.length << 1;
  let h: u32 = 0x811c9dc5 ^ <u32>bytes;
  let i: usize = 0;
  for (; i + 8 <= bytes; i += 8) h = (h ^ load<u32>(ptr + i) ^ (load<u32>(ptr + i + 4) << 7)) * 0x9e3779b1;
  for (; i < bytes; i += 2) h = (h ^ <u32>load<u16>(ptr + i)) * 0x01000193;
  h ^= h >>> 15;
  h *= 0x85ebca6b;
  return h ^ (h >>> 13);
}

/**
 * wordHash of the text spelled by the `len` bytes at `ptr` when they are
 * ASCII (each byte one UTF-16 unit, read four at a time as wordHash reads
 * its pairs of units), so bytes in place find the strings filed under
 * wordHash without being decoded; -1 when a byte is not ASCII.
 */
export function asciiWordHash(ptr: usize, len: usize): i64 {
  let h: u32 = 0x811c9dc5 ^ <u32>(len << 1);
  let seen: u32 = 0;
  let i: usize = 0;
  for (; i + 4 <= len; i += 4) {
    const b = load<u32>(ptr + i);
    seen |= b;
    // Bytes b0 b1 b2 b3 as the units wordHash loads: b0 | b1 << 16, b2 | b3 << 16.
    const low = (b & 0xff) | ((b & 0xff00) << 8);
    const high = ((b >>> 16) & 0xff) | ((b >>> 8) & 0xff0000);
    h = (h ^ low ^ (high << 7)) * 0x9e3779b1;
  }
  for (; i < len; i++) {
    const c = <u32>load<u8>(ptr + i);
    seen |= c;
    h = (h ^ c) * 0x01000193;
  }
  if ((seen & 0x80808080) != 0) return -1;
  h ^= h >>> 15;
  h *= 0x85ebca6b;
  return <i64>(h ^ (h >>> 13));
}

export class WordTable {
  private keys: StaticArray<string | null>;
  private hashes: StaticArray<u32>;
  private values: StaticArray<i32>;
  // A slot is taken only while its stamp is the table's.
  private stamps: StaticArray<u32>;
  private stamp: u32 = 1;
  private count: i32 = 0;

  constructor(capacity: i32 = 64) {
    let size = 16;
    while (size < capacity * 2) size <<= 1;
    this.keys = new StaticArray<string | null>(size);
    this.hashes = new StaticArray<u32>(size);
    this.values = new StaticArray<i32>(size);
    this.stamps = new StaticArray<u32>(size);
  }

  get size(): i32 {
    return this.count;
  }

  /** The index of `s` (whose wordHash is `h`), or NO_WORD. */
  find(s: string, h: u32): i32 {
    const mask = <u32>this.keys.length - 1;
    const stamp = this.stamp;
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      if (unchecked(this.stamps[slot]) != stamp) return NO_WORD;
      if (unchecked(this.hashes[slot]) == h) {
        const key = unchecked(this.keys[slot])!;
        if (changetype<usize>(key) == changetype<usize>(s) || key == s) return unchecked(this.values[slot]);
      }
    }
    return NO_WORD;
  }

  /** The index of the text spelled by the `len` UTF-8 bytes at `ptr` (whose wordHash is `h`), or NO_WORD. */
  findBytes(ptr: usize, len: usize, h: u32): i32 {
    const mask = <u32>this.keys.length - 1;
    const stamp = this.stamp;
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      if (unchecked(this.stamps[slot]) != stamp) return NO_WORD;
      if (unchecked(this.hashes[slot]) == h && bytesEqualString(ptr, len, unchecked(this.keys[slot])!)) return unchecked(this.values[slot]);
    }
    return NO_WORD;
  }

  /** Files `s` (hash `h`, not in the table) as `value`. */
  add(s: string, h: u32, value: i32): void {
    if ((this.count + 1) * 2 > this.keys.length) this.grow();
    this.place(s, h, value);
    this.count++;
  }

  /** Takes `s` (hash `h`) out of the table, when there. */
  remove(s: string, h: u32): void {
    const mask = <u32>this.keys.length - 1;
    const stamp = this.stamp;
    let slot = h & mask;
    for (; ; slot = (slot + 1) & mask) {
      if (unchecked(this.stamps[slot]) != stamp) return;
      if (unchecked(this.hashes[slot]) == h && unchecked(this.keys[slot])! == s) break;
    }
    // Linear probing: the entries after it in the run are filed again.
    unchecked((this.stamps[slot] = 0));
    unchecked((this.keys[slot] = null));
    this.count--;
    for (let next = (slot + 1) & mask; unchecked(this.stamps[next]) == stamp; next = (next + 1) & mask) {
      const key = unchecked(this.keys[next])!;
      const kh = unchecked(this.hashes[next]);
      const value = unchecked(this.values[next]);
      unchecked((this.stamps[next] = 0));
      unchecked((this.keys[next] = null));
      this.place(key, kh, value);
    }
  }

  /** Empties the table, keeping its storage. */
  clear(): void {
    this.count = 0;
    if (++this.stamp != 0) return;
    // Wrapped around: old stamps could match again.
    const stamps = this.stamps;
    for (let i = 0; i < stamps.length; i++) unchecked((stamps[i] = 0));
    this.stamp = 1;
  }

  private place(s: string, h: u32, value: i32): void {
    const mask = <u32>this.keys.length - 1;
    const stamp = this.stamp;
    let slot = h & mask;
    while (unchecked(this.stamps[slot]) == stamp) slot = (slot + 1) & mask;
    unchecked((this.stamps[slot] = stamp));
    unchecked((this.keys[slot] = s));
    unchecked((this.hashes[slot] = h));
    unchecked((this.values[slot] = value));
  }

  private grow(): void {
    const keys = this.keys;
    const hashes = this.hashes;
    const values = this.values;
    const stamps = this.stamps;
    const stamp = this.stamp;
    const size = keys.length << 1;
    this.keys = new StaticArray<string | null>(size);
    this.hashes = new StaticArray<u32>(size);
    this.values = new StaticArray<i32>(size);
    this.stamps = new StaticArray<u32>(size);
    this.stamp = 1;
    for (let i = 0; i < keys.length; i++) {
      if (unchecked(stamps[i]) == stamp) this.place(unchecked(keys[i])!, unchecked(hashes[i]), unchecked(values[i]));
    }
  }
}
