// UTF-8 text that is valid by construction. Bytes from the proxy (headers,
// properties, status messages) and from clients (forwarded attributes) may
// be anything; AssemblyScript's own decoder turns invalid sequences into
// lone surrogates or wrong characters, and its default encoder writes lone
// surrogates back as the bytes ED A0 80…ED BF BF, which are not UTF-8 — a
// hub that checks its proto3 strings refuses the whole message. Here
// invalid input becomes U+FFFD (one per maximal invalid subpart, as the
// WHATWG and Unicode decoders do), and encoding writes U+FFFD for a lone
// surrogate, so every string that reaches the wire is valid UTF-8.

/** The replacement character, U+FFFD. */
export const REPLACEMENT = "\uFFFD";

// Length of the valid UTF-8 sequence at `p` (1..4), or -n when its first n
// bytes are the maximal invalid subpart (Unicode Table 3-7 ranges).
function sequenceAt(p: usize, end: usize): i32 {
  const b0 = <u32>load<u8>(p);
  if (b0 < 0x80) return 1;
  let need = 0;
  let lo: u32 = 0x80;
  let hi: u32 = 0xbf;
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    need = 1;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    need = 2;
    if (b0 == 0xe0) lo = 0xa0;
    else if (b0 == 0xed) hi = 0x9f; // no surrogates
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    need = 3;
    if (b0 == 0xf0) lo = 0x90;
    else if (b0 == 0xf4) hi = 0x8f; // nothing above U+10FFFF
  } else {
    return -1;
  }
  for (let k = 1; k <= need; k++) {
    if (p + <usize>k >= end) return -k;
    const b = <u32>load<u8>(p + <usize>k);
    if (b < lo || b > hi) return -k;
    lo = 0x80;
    hi = 0xbf;
  }
  return need + 1;
}

/** True when the `len` bytes at `ptr` are valid UTF-8. */
export function isValidUtf8(ptr: usize, len: usize): bool {
  const end = ptr + len;
  let p = ptr;
  while (p < end) {
    if (load<u8>(p) < 0x80) {
      p++;
      continue;
    }
    const n = sequenceAt(p, end);
    if (n < 0) return false;
    p += <usize>n;
  }
  return true;
}

// Header names and values, addresses and paths are nearly always ASCII:
// checked eight bytes at a time, then widened into a string allocated at its
// exact size (the general decoder allocates for the worst case and shrinks).
/** True when the `len` bytes at `ptr` are all ASCII (checked eight at a time). */
export function isAscii(ptr: usize, len: usize): bool {
  const end = ptr + len;
  let p = ptr;
  while (end - p >= 8) {
    if ((load<u64>(p) & 0x8080808080808080) != 0) return false;
    p += 8;
  }
  if (end - p >= 4) {
    if ((load<u32>(p) & 0x80808080) != 0) return false;
    p += 4;
  }
  while (p < end) {
    if ((load<u8>(p) & 0x80) != 0) return false;
    p++;
  }
  return true;
}

function widenAscii(ptr: usize, len: usize): string {
  const out = __new(len << 1, idof<String>());
  let i: usize = 0;
  for (; len - i >= 4; i += 4) {
    const b = <u64>load<u32>(ptr + i);
    store<u64>(out + (i << 1), (b & 0xff) | ((b & 0xff00) << 8) | ((b & 0xff0000) << 16) | ((b & 0xff000000) << 24));
  }
  for (; i < len; i++) store<u16>(out + (i << 1), load<u8>(ptr + i));
  return changetype<string>(out);
}

/** Decodes `len` bytes at `ptr`; invalid sequences become U+FFFD. */
export function decodeUtf8(ptr: usize, len: usize): string {
  if (len == 0) return "";
  if (isAscii(ptr, len)) return widenAscii(ptr, len);
  if (isValidUtf8(ptr, len)) return String.UTF8.decodeUnsafe(ptr, len);
  // Rewrite into valid UTF-8 first (EF BF BD for each invalid subpart): at most 3 bytes per input byte.
  const out = new Uint8Array(<i32>len * 3);
  const written = writeValidUtf8(ptr, len, out.dataStart);
  return String.UTF8.decodeUnsafe(out.dataStart, written);
}

/** True when the `len` bytes at `ptr` are ASCII or valid UTF-8: copied as they are, they decode to themselves. */
// @ts-ignore: decorator
@inline
export function isCleanUtf8(ptr: usize, len: usize): bool {
  return isAscii(ptr, len) || isValidUtf8(ptr, len);
}

/**
 * Writes the `len` bytes at `ptr` to `out` as valid UTF-8 (EF BF BD for
 * each maximal invalid subpart, as decodeUtf8 reads them); `out` has room
 * for 3 × `len` bytes. Returns the bytes written.
 */
export function writeValidUtf8(ptr: usize, len: usize, out: usize): usize {
  const end = ptr + len;
  let p = ptr;
  let w = out;
  while (p < end) {
    const n = sequenceAt(p, end);
    if (n > 0) {
      memory.copy(w, p, <usize>n);
      w += <usize>n;
      p += <usize>n;
    } else {
      store<u8>(w, 0xef);
      store<u8>(w, 0xbf, 1);
      store<u8>(w, 0xbd, 2);
      w += 3;
      p += <usize>-n;
    }
  }
  return w - out;
}

export function decodeUtf8Bytes(bytes: Uint8Array): string {
  return decodeUtf8(bytes.dataStart, <usize>bytes.length);
}

/** Encodes `s` as UTF-8, a lone surrogate as U+FFFD. */
export function encodeUtf8(s: string): ArrayBuffer {
  return String.UTF8.encode(s, false, String.UTF8.ErrorMode.REPLACE);
}

/** Writes `s` at `buf` (room for String.UTF8.byteLength(s) bytes), a lone surrogate as U+FFFD; returns the bytes written. */
export function encodeUtf8Unsafe(s: string, buf: usize): usize {
  return String.UTF8.encodeUnsafe(changetype<usize>(s), s.length, buf, false, String.UTF8.ErrorMode.REPLACE);
}
