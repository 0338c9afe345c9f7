// Backslash escapes of ECMAScript patterns without the `u` flag: the class
// escapes (`\d` and friends) and CharacterEscape as extended by Annex B.1.2
// (identity escapes of any character, legacy octal, `\c` without a letter).
import { CharSet, digitSet, spaceSet, wordSet } from "./char_set";

const BACKSLASH: i32 = 0x5c;

export function isDigit(c: i32): bool {
  return c >= 0x30 && c <= 0x39;
}

export function isAsciiLetter(c: i32): bool {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

function isOctalDigit(c: i32): bool {
  return c >= 0x30 && c <= 0x37;
}

function hexValue(c: i32): i32 {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  return -1;
}

function at(src: string, i: i32): i32 {
  return i < src.length ? src.charCodeAt(i) : -1;
}

/** `\d \D \w \W \s \S` for the letter after the backslash, or null for any other letter. */
export function classEscape(c: i32): CharSet | null {
  switch (c) {
    case 0x64 /* d */: return digitSet();
    case 0x44 /* D */: return digitSet().negated();
    case 0x77 /* w */: return wordSet();
    case 0x57 /* W */: return wordSet().negated();
    case 0x73 /* s */: return spaceSet().normalize();
    case 0x53 /* S */: return spaceSet().normalize().negated();
  }
  return null;
}

/** What readCharacterEscape read: the code unit and where reading stopped. */
export class Escape {
  value: i32 = 0;
  end: i32 = 0;
}

/**
 * Reads the CharacterEscape starting at `p`, just after a backslash, into
 * `out`. Where Annex B reads the backslash alone as a literal (`\c` without
 * a control letter), `out.end` is `p`, so the `c` is read next as itself.
 * Example: `\x41` at p gives value 0x41, end p + 3.
 */
export function readCharacterEscape(src: string, p: i32, inClass: bool, out: Escape): void {
  const c = at(src, p);
  out.end = p + 1;
  out.value = c; // IdentityEscape unless a case below says otherwise
  switch (c) {
    case 0x74 /* t */: out.value = 0x09; return;
    case 0x6e /* n */: out.value = 0x0a; return;
    case 0x76 /* v */: out.value = 0x0b; return;
    case 0x66 /* f */: out.value = 0x0c; return;
    case 0x72 /* r */: out.value = 0x0d; return;
    case 0x62 /* b */: out.value = 0x08; return; // only reached inside a class: [\b] is backspace
    case 0x63 /* c */: {
      const letter = at(src, p + 1);
      // Annex B ClassControlLetter also allows digits and `_` inside a class.
      if (isAsciiLetter(letter) || (inClass && (isDigit(letter) || letter == 0x5f))) {
        out.value = letter % 32;
        out.end = p + 2;
      } else {
        out.value = BACKSLASH;
        out.end = p;
      }
      return;
    }
    case 0x78 /* x */: {
      const h1 = hexValue(at(src, p + 1));
      const h2 = hexValue(at(src, p + 2));
      if (h1 < 0 || h2 < 0) return; // Annex B: `\x` alone is "x"
      out.value = (h1 << 4) | h2;
      out.end = p + 3;
      return;
    }
    case 0x75 /* u */: {
      let v = 0;
      for (let i = 1; i <= 4; i++) {
        const h = hexValue(at(src, p + i));
        if (h < 0) return; // Annex B: `\u` alone is "u" (`\u{...}` needs the u flag)
        v = (v << 4) | h;
      }
      out.value = v;
      out.end = p + 5;
      return;
    }
  }
  if (c == 0x30 && !isDigit(at(src, p + 1))) {
    out.value = 0;
    return;
  }
  if (isOctalDigit(c)) {
    // Annex B LegacyOctalEscapeSequence: up to three digits, at most \377.
    let v = c - 0x30;
    let end = p + 1;
    if (isOctalDigit(at(src, end))) {
      v = v * 8 + (at(src, end++) - 0x30);
      if (c <= 0x33 && isOctalDigit(at(src, end))) v = v * 8 + (at(src, end++) - 0x30);
    }
    out.value = v;
    out.end = end;
  }
}
