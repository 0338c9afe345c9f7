import { KNOWN_SLOTS, knownSlotOfString } from "../known_strings";
import { StringMap } from "./string_map";

/**
 * A header map: a StringMap that also finds the known header names
 * (known_strings.ts) by their perfect-hash slot. The dozen lookups a request
 * makes (`:path`, `:authority`, `x-request-id`…) then cost one hash each
 * instead of a scan, and a decode files each known name without comparing it
 * to the names before it. Names not known are scanned for as before, and only
 * when the map holds some. Order and the last-one-wins rule are StringMap's.
 *
 * The slot table is invalidated by a stamp, so clearing the map for the next
 * request costs nothing per slot.
 */
export class HeaderMap extends StringMap {
  // Per known slot: the entry's index plus one, valid while stamps[slot] == stamp.
  private positions: StaticArray<i32> = new StaticArray<i32>(KNOWN_SLOTS);
  private stamps: StaticArray<u32> = new StaticArray<u32>(KNOWN_SLOTS);
  private stamp: u32 = 1;
  /** Entries whose name is not a known string. */
  private unknown: i32 = 0;

  indexOf(key: string): i32 {
    return this.indexAt(knownSlotOfString(key), key);
  }

  /** indexOf for a key whose slot is already known (-1 when it has none). */
  indexAt(slot: i32, key: string): i32 {
    if (slot >= 0) return unchecked(this.stamps[slot]) == this.stamp ? unchecked(this.positions[slot]) - 1 : -1;
    return this.unknown == 0 ? -1 : super.indexOf(key);
  }

  set(key: string, value: string): void {
    this.setAt(knownSlotOfString(key), key, value);
  }

  /** set for a key whose slot is already known (-1 when it has none): the decoder's path. */
  setAt(slot: i32, key: string, value: string): void {
    const i = this.indexAt(slot, key);
    if (i >= 0) unchecked((this.values[i] = value));
    else this.append(slot, key, value);
  }

  setIfAbsent(key: string, value: string): void {
    const slot = knownSlotOfString(key);
    if (this.indexAt(slot, key) < 0) this.append(slot, key, value);
  }

  clear(): void {
    super.clear();
    this.unknown = 0;
    this.nextStamp();
  }

  remove(key: string): void {
    super.remove(key);
    // Later entries moved down one place: file them again.
    this.nextStamp();
    this.unknown = 0;
    const keys = this.keys;
    for (let i = 0, n = keys.length; i < n; i++) this.index(knownSlotOfString(unchecked(keys[i])), i);
  }

  private append(slot: i32, key: string, value: string): void {
    const i = this.keys.length;
    this.keys.push(key);
    this.values.push(value);
    this.index(slot, i);
  }

  private index(slot: i32, i: i32): void {
    if (slot < 0) {
      this.unknown++;
      return;
    }
    unchecked((this.stamps[slot] = this.stamp));
    unchecked((this.positions[slot] = i + 1));
  }

  private nextStamp(): void {
    if (++this.stamp != 0) return;
    // Wrapped around: old stamps could match again, so forget them all.
    const stamps = this.stamps;
    for (let s = 0; s < stamps.length; s++) unchecked((stamps[s] = 0));
    this.stamp = 1;
  }
}
