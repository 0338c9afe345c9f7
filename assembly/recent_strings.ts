import { isNullString, notAscii4, widenBytes4 } from "./text";
import { decodeUtf8 } from "./utf8";

// Header and property values that repeat from request to request (the
// authority, the user agent, a connection's addresses and identities, the
// destination service) are decoded once and shared while they keep coming:
// a direct-mapped table of recent strings, found by a hash of the bytes and
// confirmed by a compare, so a repeat costs no allocation. Strings are
// immutable, so sharing one is safe; a miss decodes and takes the slot.

const SLOTS: u32 = 128;
// Longer values are seldom repeated headers; they are decoded as they come.
const LONGEST: usize = 256;
const recent = new StaticArray<string | null>(<i32>SLOTS);

/** The value's string: a recent one with the same bytes, or a fresh decode that replaces the slot's. */
export function recentString(ptr: usize, len: usize): string {
  if (len == 0) return "";
  if (len > LONGEST) return decodeUtf8(ptr, len);
  // Four bytes a step: values are tens of bytes, and the compare below
  // confirms whatever the hash picks.
  let h: u32 = 0x811c9dc5 ^ <u32>len;
  let i: usize = 0;
  for (; i + 4 <= len; i += 4) h = (h ^ load<u32>(ptr + i)) * 0x9e3779b1;
  for (; i < len; i++) h = (h ^ <u32>load<u8>(ptr + i)) * 0x01000193;
  h = (h ^ (h >>> 16)) * 0x85ebca6b;
  const slot = <i32>((h ^ (h >>> 13)) & (SLOTS - 1));
  const known = unchecked(recent[slot]);
  if (!isNullString(known) && sameAscii(known!, ptr, len)) return known!;
  const fresh = decodeUtf8(ptr, len);
  unchecked((recent[slot] = fresh));
  return fresh;
}

/**
 * `previous` when it is the text of the `len` bytes at `ptr` (a value that
 * repeats from one request to the next, compared without hashing), else
 * recentString's.
 */
export function repeatedString(previous: string, ptr: usize, len: usize): string {
  return sameAscii(previous, ptr, len) ? previous : recentString(ptr, len);
}

// ASCII only: a non-ASCII string never equals the bytes code unit by code
// unit, so other text always takes the decoder (and its U+FFFD rules).
// Four units at a time: the bytes widened to units must equal them, and
// an ASCII unit never has its high byte or bit 7 set.
function sameAscii(s: string, ptr: usize, len: usize): bool {
  if (<usize>s.length != len) return false;
  const chars = changetype<usize>(s);
  let i: usize = 0;
  for (; i + 4 <= len; i += 4) {
    const units = load<u64>(chars + (i << 1));
    if (units != widenBytes4(<u64>load<u32>(ptr + i)) || notAscii4(units)) return false;
  }
  for (; i < len; i++) {
    const unit = <u32>load<u16>(chars + (i << 1));
    if (unit >= 0x80 || unit != <u32>load<u8>(ptr + i)) return false;
  }
  return true;
}

/**
 * A value that mostly repeats from one request to the next (a connection's
 * address, the authority): its last bytes are kept beside its string, so a
 * repeat is told by comparing bytes eight at a time, and costs no string.
 */
export class RepeatedText {
  private bytes: ArrayBuffer = new ArrayBuffer(32);
  private length: usize = 0;
  /** The string of the last bytes given to `of`. */
  value: string = "";

  /** The string of the `len` bytes at `ptr`: the last one when they are the same bytes, else recentString's. */
  // @ts-ignore: decorator
  @inline of(ptr: usize, len: usize): string {
    const kept = changetype<usize>(this.bytes);
    if (len == this.length && sameWords(kept, ptr, len)) return this.value;
    const value = recentString(ptr, len);
    if (len > <usize>this.bytes.byteLength) {
      this.bytes = new ArrayBuffer(<i32>len);
    }
    memory.copy(changetype<usize>(this.bytes), ptr, len);
    this.length = len;
    this.value = value;
    return value;
  }
}

// `len` bytes at `a` and at `b` are equal: eight at a time, the last eight
// overlapping the words before them; shorter runs one by one.
// @ts-ignore: decorator
@inline
export function sameWords(a: usize, b: usize, len: usize): bool {
  if (len < 8) {
    for (let i: usize = 0; i < len; i++) if (load<u8>(a + i) != load<u8>(b + i)) return false;
    return true;
  }
  for (let i: usize = 0; i + 8 < len; i += 8) if (load<u64>(a + i) != load<u64>(b + i)) return false;
  return load<u64>(a + len - 8) == load<u64>(b + len - 8);
}
