// equalBytes, which decides whether a header block is the one a map was
// last filled from and whether a report entry's header block or view is
// copied from an earlier entry: every length a step of it handles (sixteen,
// eight, four, two, one bytes), and a difference at every place, against a
// compare a byte at a time.
import { equalBytes } from "../../assembly/text";

function byByte(a: usize, b: usize, len: usize): bool {
  for (let i: usize = 0; i < len; i++) if (load<u8>(a + i) != load<u8>(b + i)) return false;
  return true;
}

describe("equalBytes", () => {
  it("agrees with a byte-by-byte compare for lengths 0 to 70, equal or differing at any place", () => {
    const a = new Uint8Array(80);
    const b = new Uint8Array(80);
    for (let i = 0; i < 80; i++) {
      a[i] = <u8>(i * 7 + 3);
      b[i] = a[i];
    }
    // Unaligned starts too: header values sit anywhere in a block.
    for (let offset: usize = 0; offset < 3; offset++) {
      const pa = a.dataStart + offset;
      const pb = b.dataStart + 2 - offset;
      for (let i = 0; i < 80; i++) b[i] = a[i];
      for (let len: usize = 0; len <= 70; len++) {
        // b shifted against a: make the compared windows equal first.
        memory.copy(pb, pa, len);
        expect(equalBytes(pa, pb, len)).toBe(true, "equal, length " + len.toString());
        for (let at: usize = 0; at < len; at++) {
          store<u8>(pb + at, load<u8>(pb + at) ^ 0x10);
          expect(equalBytes(pa, pb, len)).toBe(byByte(pa, pb, len), "differing at " + at.toString() + " of " + len.toString());
          expect(equalBytes(pa, pb, len)).toBe(false);
          store<u8>(pb + at, load<u8>(pb + at) ^ 0x10);
        }
        // A difference just past the end is not looked at.
        store<u8>(pb + len, load<u8>(pa + len) ^ 0x01);
        expect(equalBytes(pa, pb, len)).toBe(true, "past the end, length " + len.toString());
      }
    }
  });
});
