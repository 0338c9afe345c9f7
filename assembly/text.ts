// UTF-8 text read in place. A request's header values, its path and the
// values derived from them stay bytes in the request's own buffer
// (attributes/header_map.ts); matching, hashing and comparing them against
// the configuration's strings happens here, byte for byte, without turning
// either side into a new string. A string is compared by the UTF-8 bytes it
// encodes to (a lone surrogate as U+FFFD, as utf8.ts writes it), so a view
// and the string decoded from it are always equal.

import { FNV64_PRIME } from "./fnv64";

/**
 * `s` is null. AssemblyScript compiles `s === null` on a string to a call of
 * String.__eq, which costs far more than the test on an interpreter (WAMR):
 * the per-request paths test their nullable strings with this instead.
 */
// @ts-ignore: decorator
@inline
export function isNullString(s: string | null): bool {
  return changetype<usize>(s) == 0;
}

/**
 * `a == b` for two strings that are not null, without the call to
 * String.__eq when they are the same object or differ in length (most
 * compares on a request's path: a shared string against itself, or a method
 * against another).
 */
// @ts-ignore: decorator
@inline
export function sameString(a: string, b: string): bool {
  return changetype<usize>(a) == changetype<usize>(b) || (a.length == b.length && a == b);
}

// The UTF-8 bytes of the code point that starts at unit `i` of a string of
// `n` units at `chars`, packed little-endian: bits 0..31 the bytes, bits
// 32..39 how many (1..4), bits 40..47 how many units it took (1 or 2).
// @ts-ignore: decorator
@inline
function unitBytes(chars: usize, i: i32, n: i32): u64 {
  const c = <u32>load<u16>(chars + (<usize>i << 1));
  if (c < 0x80) return <u64>c | (1 << 32) | (1 << 40);
  if (c < 0x800) return <u64>(0xc0 | (c >> 6)) | (<u64>(0x80 | (c & 0x3f)) << 8) | (2 << 32) | (1 << 40);
  let cp = c;
  let units: u64 = 1;
  if (c >= 0xd800 && c < 0xe000) {
    cp = 0xfffd;
    if (c < 0xdc00 && i + 1 < n) {
      const d = <u32>load<u16>(chars + (<usize>(i + 1) << 1));
      if (d >= 0xdc00 && d < 0xe000) {
        cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        units = 2;
      }
    }
  }
  if (cp < 0x10000) {
    return <u64>(0xe0 | (cp >> 12)) | (<u64>(0x80 | ((cp >> 6) & 0x3f)) << 8) | (<u64>(0x80 | (cp & 0x3f)) << 16) | (3 << 32) | (units << 40);
  }
  return (
    <u64>(0xf0 | (cp >> 18)) | (<u64>(0x80 | ((cp >> 12) & 0x3f)) << 8) | (<u64>(0x80 | ((cp >> 6) & 0x3f)) << 16) |
    (<u64>(0x80 | (cp & 0x3f)) << 24) | (4 << 32) | (units << 40)
  );
}

/** Four bytes (the low 32 bits of `b`) widened to four UTF-16 code units, the first in the low bits. */
// @ts-ignore: decorator
@inline
export function widenBytes4(b: u64): u64 {
  b = (b | (b << 16)) & 0x0000ffff0000ffff;
  return (b | (b << 8)) & 0x00ff00ff00ff00ff;
}

/** Some unit of four (a u64 of code units) is not ASCII. */
// @ts-ignore: decorator
@inline
export function notAscii4(units: u64): bool {
  return (units & 0xff80ff80ff80ff80) != 0;
}

/**
 * How many bytes at the start of `ptr[0, len)` spell `s` in UTF-8, or -1 when
 * they do not: the common core of equality (the whole of it) and prefix tests.
 */
// @ts-ignore: decorator
@inline
function spelled(ptr: usize, len: usize, s: string): isize {
  const chars = changetype<usize>(s);
  const n = s.length;
  let p: usize = 0;
  let i = 0;
  // ASCII runs, the usual case: four units against four bytes at a time
  // (a unit is its byte there, so i == p), then unit by byte.
  const both = min(<usize>n, len);
  while (<usize>i + 4 <= both) {
    const units = load<u64>(chars + (<usize>i << 1));
    if (notAscii4(units)) break;
    if (units != widenBytes4(<u64>load<u32>(ptr + <usize>i))) return -1;
    i += 4;
  }
  p = <usize>i;
  while (i < n) {
    const c = <u32>load<u16>(chars + (<usize>i << 1));
    if (c >= 0x80) break;
    if (p >= len || <u32>load<u8>(ptr + p) != c) return -1;
    p++;
    i++;
  }
  while (i < n) {
    const packed = unitBytes(chars, i, n);
    const count = <usize>((packed >> 32) & 0xff);
    if (len - p < count) return -1;
    let bytes = <u32>packed;
    for (let k: usize = 0; k < count; k++) {
      if (<u32>load<u8>(ptr + p + k) != (bytes & 0xff)) return -1;
      bytes >>= 8;
    }
    p += count;
    i += <i32>((packed >> 40) & 0xff);
  }
  return <isize>p;
}

/** The `len` bytes at `ptr` are the UTF-8 of `s`. */
// @ts-ignore: decorator
@inline
export function bytesEqualString(ptr: usize, len: usize, s: string): bool {
  // A string's UTF-8 is at least one byte per unit and at most three.
  const n = <usize>s.length;
  if (len < n || len > n * 3) return false;
  return spelled(ptr, len, s) == <isize>len;
}

/** The `len` bytes at `ptr` start with the UTF-8 of `prefix`. */
export function bytesStartWithString(ptr: usize, len: usize, prefix: string): bool {
  if (len < <usize>prefix.length) return false;
  return spelled(ptr, len, prefix) >= 0;
}

/** Two byte ranges are equal. */
// @ts-ignore: decorator
@inline
export function sameBytes(a: usize, aLen: usize, b: usize, bLen: usize): bool {
  return aLen == bLen && (a == b || memory.compare(a, b, aLen) == 0);
}

/** FNV-1a 64 of the bytes, then their count: the text hash shared by views and strings. */
export function fnv64Text(hash: u64, ptr: usize, len: usize): u64 {
  const stop = ptr + len;
  let p = ptr;
  while (p < stop) {
    hash = (hash ^ <u64>load<u8>(p)) * FNV64_PRIME;
    p++;
  }
  return fnv64Count(hash, <u32>len);
}

/** fnv64Text of the UTF-8 bytes of `s`, computed from its units without encoding it. */
export function fnv64TextOfString(hash: u64, s: string): u64 {
  const chars = changetype<usize>(s);
  const n = s.length;
  let count: u32 = 0;
  let i = 0;
  while (i < n) {
    const c = <u32>load<u16>(chars + (<usize>i << 1));
    if (c < 0x80) {
      hash = (hash ^ <u64>c) * FNV64_PRIME;
      count++;
      i++;
      continue;
    }
    const packed = unitBytes(chars, i, n);
    const k = <u32>((packed >> 32) & 0xff);
    let bytes = <u32>packed;
    for (let j: u32 = 0; j < k; j++) {
      hash = (hash ^ <u64>(bytes & 0xff)) * FNV64_PRIME;
      bytes >>= 8;
    }
    count += k;
    i += <i32>((packed >> 40) & 0xff);
  }
  return fnv64Count(hash, count);
}

// @ts-ignore: decorator
@inline
function fnv64Count(hash: u64, count: u32): u64 {
  for (let i = 0; i < 4; i++) {
    hash = (hash ^ <u64>(count & 0xff)) * FNV64_PRIME;
    count >>= 8;
  }
  return hash;
}

const ONES: u64 = 0x0101010101010101;
const HIGHS: u64 = 0x8080808080808080;

/**
 * The first index in `[from, end)` of byte `b` at `ptr`, or -1. Eight bytes
 * are tested at a time while eight remain (a request's path and query are
 * scanned for `?`, `&` and `=` on every request): a byte of `x` is zero
 * where the word equals `b`, and `(x - ONES) & ~x & HIGHS` sets the high bit
 * of the first such byte (a borrow can only mark bytes after it).
 */
// @ts-ignore: decorator
@inline
export function indexOfByte(ptr: usize, from: usize, end: usize, b: u8): isize {
  let i = from;
  const pattern = <u64>b * ONES;
  while (end > i && end - i >= 8) {
    const x = load<u64>(ptr + i) ^ pattern;
    const hits = (x - ONES) & ~x & HIGHS;
    if (hits != 0) return <isize>(i + <usize>(ctz(hits) >> 3));
    i += 8;
  }
  for (; i < end; i++) {
    if (load<u8>(ptr + i) == b) return <isize>i;
  }
  return -1;
}

// The `len` bytes at `a` and `b` are the same, compared sixteen at a time
// (a header block is a few hundred bytes: one branch per two words), then
// the rest in at most four steps (names and values are short).
// @ts-ignore: decorator
@inline
export function equalBytes(a: usize, b: usize, len: usize): bool {
  const end = a + len;
  while (a + 16 <= end) {
    if (((load<u64>(a) ^ load<u64>(b)) | (load<u64>(a, 8) ^ load<u64>(b, 8))) != 0) return false;
    a += 16;
    b += 16;
  }
  if (a + 8 <= end) {
    if (load<u64>(a) != load<u64>(b)) return false;
    a += 8;
    b += 8;
  }
  if (a + 4 <= end) {
    if (load<u32>(a) != load<u32>(b)) return false;
    a += 4;
    b += 4;
  }
  if (a + 2 <= end) {
    if (load<u16>(a) != load<u16>(b)) return false;
    a += 2;
    b += 2;
  }
  return a == end || load<u8>(a) == load<u8>(b);
}
