// Percent-decoding of variable bindings (upstream ESP's UrlUnescapeString, as
// used by the older istio/proxy matcher before bindings were dropped).
//
// A variable covering one segment is fully decoded, so `%2F` becomes `/`.
// A variable covering several segments, or `**`, decodes every escape except
// those of RFC 6570's reserved characters (`:/?#[]@!$&'()*+,;=`), as
// upstream's UrlUnescapeString(unescape_reserved=false) did: `%20` becomes a
// space and `%C3%A9` an `é`, but a decoded `/` would be indistinguishable
// from a segment separator, so `%2F` (and the other reserved ones) stay.
//
// Escapes that are malformed (`%2`, `%zz`) stay as they are, and so do
// escapes whose bytes are not valid UTF-8: a string cannot hold raw bytes.

export const enum PercentDecoding {
  /** Decode every well-formed escape (one-segment variables). */
  All = 0,
  /** Decode every escape but reserved characters' (multi-segment variables). */
  AllButReserved = 1,
}

const PERCENT: i32 = 0x25; // '%'

/** Decodes `text[start, end)`. Example: `a%2Fb%41` → `a/bA` with `All`. */
export function percentDecode(text: string, start: i32, end: i32, mode: PercentDecoding): string {
  const firstPercent = text.indexOf("%", start);
  if (firstPercent < 0 || firstPercent >= end) return text.substring(start, end);
  // Decoding never lengthens the text: a code unit per escape at most, two
  // per four-byte UTF-8 sequence of twelve characters.
  const out = new StaticArray<u16>(end - start);
  let written = 0;
  let i = start;
  while (i < end) {
    const c = <i32>text.charCodeAt(i);
    if (c == PERCENT) {
      const byte = escapedByte(text, i, end);
      if (byte >= 0 && byte < 0x80) {
        if (mode == PercentDecoding.All || !isReserved(byte)) {
          unchecked((out[written++] = <u16>byte));
          i += 3;
          continue;
        }
      } else if (byte >= 0x80) {
        const codePoint = utf8CodePoint(text, i, end, byte);
        if (codePoint >= 0) {
          if (codePoint < 0x10000) {
            unchecked((out[written++] = <u16>codePoint));
          } else {
            const offset = codePoint - 0x10000;
            unchecked((out[written++] = <u16>(0xd800 | (offset >> 10))));
            unchecked((out[written++] = <u16>(0xdc00 | (offset & 0x3ff))));
          }
          i += 3 * utf8Length(byte);
          continue;
        }
      }
    }
    unchecked((out[written++] = <u16>c));
    i++;
  }
  return String.UTF16.decodeUnsafe(changetype<usize>(out), <usize>written << 1);
}

// The byte of the escape `%XY` at `at`, or -1 if it is not well-formed.
function escapedByte(text: string, at: i32, end: i32): i32 {
  if (at + 2 >= end) return -1;
  if (<i32>text.charCodeAt(at) != PERCENT) return -1;
  const high = hexValue(<i32>text.charCodeAt(at + 1));
  const low = hexValue(<i32>text.charCodeAt(at + 2));
  if (high < 0 || low < 0) return -1;
  return (high << 4) | low;
}

function hexValue(c: i32): i32 {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  return -1;
}

// RFC 6570 section 1.5 (RFC 3986 gen-delims and sub-delims):
// ! # $ & ' ( ) * + , / : ; = ? @ [ ]
function isReserved(c: i32): bool {
  switch (c) {
    case 0x21: case 0x23: case 0x24: case 0x26: case 0x27: case 0x28: case 0x29: case 0x2a:
    case 0x2b: case 0x2c: case 0x2f: case 0x3a: case 0x3b: case 0x3d: case 0x3f: case 0x40:
    case 0x5b: case 0x5d:
      return true;
  }
  return false;
}

// Length of the UTF-8 sequence a lead byte starts, or 0 if it cannot start
// one (RFC 3629: C0, C1 and F5-FF never appear).
function utf8Length(lead: i32): i32 {
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

// The code point of the escaped UTF-8 sequence starting with `lead` at `at`,
// or -1 if the escapes are not one complete, shortest-form, non-surrogate
// sequence (RFC 3629 section 3).
function utf8CodePoint(text: string, at: i32, end: i32, lead: i32): i32 {
  const length = utf8Length(lead);
  if (length == 0) return -1;
  let codePoint = lead & (0x7f >> length);
  for (let k = 1; k < length; k++) {
    const byte = escapedByte(text, at + 3 * k, end);
    if (byte < 0x80 || byte > 0xbf) return -1;
    codePoint = (codePoint << 6) | (byte & 0x3f);
  }
  if (length == 3 && codePoint < 0x800) return -1;
  if (length == 4 && (codePoint < 0x10000 || codePoint > 0x10ffff)) return -1;
  if (codePoint >= 0xd800 && codePoint <= 0xdfff) return -1;
  return codePoint;
}
