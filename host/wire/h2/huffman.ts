// HPACK's Huffman code (RFC 7541 Appendix B) and its decoder and encoder.
//
// The code is canonical: within one length, codes are consecutive in symbol
// order, and each length's first code follows the previous length's last
// (shifted). So the table is written here as which symbols have which code
// length, and the codes are derived from it; the test checks them against
// the RFC's listed codes and against nghttp2 decoding what this encodes.

/** Symbols (byte values, 256 = EOS) by code length in bits, as Appendix B lists them. */
const SYMBOLS_BY_LENGTH: ReadonlyArray<readonly [number, string | readonly number[]]> = [
  [5, "012aceiost"],
  [6, " %-./3456789=A_bdfghlmnpru"],
  [7, ":BCDEFGHIJKLMNOPQRSTUVWYjkqvwxyz"],
  [8, "&*,;XZ"],
  [10, '!"()?'],
  [11, "'+|"],
  [12, "#>"],
  [13, [0, 0x24, 0x40, 0x5b, 0x5d, 0x7e]],
  [14, "^}"],
  [15, "<`{"],
  [19, [0x5c, 195, 208]],
  [20, [128, 130, 131, 162, 184, 194, 224, 226]],
  [21, [153, 161, 167, 172, 176, 177, 179, 209, 216, 217, 227, 229, 230]],
  [22, [129, 132, 133, 134, 136, 146, 154, 156, 160, 163, 164, 169, 170, 173, 178, 181, 185, 186, 187, 189, 190, 196, 198, 228, 232, 233]],
  [23, [1, 135, 137, 138, 139, 140, 141, 143, 147, 149, 150, 151, 152, 155, 157, 158, 165, 166, 168, 174, 175, 180, 182, 183, 188, 191, 197, 231, 239]],
  [24, [9, 142, 144, 145, 148, 159, 171, 206, 215, 225, 236, 237]],
  [25, [199, 207, 234, 235]],
  [26, [192, 193, 200, 201, 202, 205, 210, 213, 218, 219, 238, 240, 242, 243, 255]],
  [27, [203, 204, 211, 212, 214, 221, 222, 223, 241, 244, 245, 246, 247, 248, 250, 251, 252, 253, 254]],
  [28, [2, 3, 4, 5, 6, 7, 8, 11, 12, 14, 15, 16, 17, 18, 19, 20, 21, 23, 24, 25, 26, 27, 28, 29, 30, 31, 127, 220, 249]],
  [30, [10, 13, 22, 256]],
];

export const EOS = 256;

/** Code length in bits of each symbol 0…256. */
export const HUFFMAN_LENGTHS = new Uint8Array(257);
/** Code of each symbol, right-aligned in its length. */
export const HUFFMAN_CODES = new Uint32Array(257);

/** Decoding tree: node n's children are TREE[2n] (bit 0) and TREE[2n+1] (bit 1); a value ≥ LEAF is a symbol (value − LEAF), 0 no child. */
const LEAF = 0x10000;
const TREE = new Int32Array(2 * 512);

{
  let code = 0;
  let previous = 0;
  for (const [length, group] of SYMBOLS_BY_LENGTH) {
    code <<= length - previous;
    previous = length;
    const symbols = typeof group === "string" ? [...group].map((c) => c.charCodeAt(0)) : group;
    for (const s of symbols) {
      HUFFMAN_LENGTHS[s] = length;
      HUFFMAN_CODES[s] = code++;
    }
  }
  let nodes = 1;
  for (let s = 0; s <= EOS; s++) {
    let node = 0;
    for (let bit = HUFFMAN_LENGTHS[s] - 1; bit >= 0; bit--) {
      const slot = 2 * node + ((HUFFMAN_CODES[s] >>> bit) & 1);
      if (bit === 0) TREE[slot] = LEAF + s;
      else {
        if (TREE[slot] === 0) TREE[slot] = nodes++;
        node = TREE[slot];
      }
    }
  }
}

export class HuffmanError extends Error {}

/** Decodes a Huffman-coded string literal to latin1 text. Throws HuffmanError on EOS in the data or padding that is not a ≤ 7-bit prefix of EOS (RFC 7541 §5.2). */
export function huffmanDecode(data: Uint8Array, start = 0, end = data.length): string {
  let out = "";
  let node = 0;
  /** Bits read since the last symbol, all of them 1s so far. */
  let pending = 0;
  let allOnes = true;
  for (let i = start; i < end; i++) {
    const byte = data[i];
    for (let bit = 7; bit >= 0; bit--) {
      const b = (byte >>> bit) & 1;
      const next = TREE[2 * node + b];
      pending++;
      if (b === 0) allOnes = false;
      if (next >= LEAF) {
        const symbol = next - LEAF;
        if (symbol === EOS) throw new HuffmanError("Huffman-coded string contains EOS");
        out += String.fromCharCode(symbol);
        node = 0;
        pending = 0;
        allOnes = true;
      } else node = next;
    }
  }
  if (pending > 7 || !allOnes) throw new HuffmanError("Huffman-coded string ends with invalid padding");
  return out;
}

/** Encoded length in bytes of latin1 `text`. */
export function huffmanLength(text: string): number {
  let bits = 0;
  for (let i = 0; i < text.length; i++) bits += HUFFMAN_LENGTHS[text.charCodeAt(i) & 0xff];
  return (bits + 7) >>> 3;
}

/** Huffman-codes latin1 `text` into `out` at `offset` (room for huffmanLength(text) bytes); returns the offset after it. Padded with 1s. */
export function huffmanEncode(text: string, out: Uint8Array, offset: number): number {
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < text.length; i++) {
    const s = text.charCodeAt(i) & 0xff;
    const length = HUFFMAN_LENGTHS[s];
    const code = HUFFMAN_CODES[s];
    // At most 30 bits per code: feed them in two parts so acc never exceeds 32 bits.
    for (let remaining = length; remaining > 0; ) {
      const take = Math.min(remaining, 24 - bits);
      acc = (acc << take) | ((code >>> (remaining - take)) & ((1 << take) - 1));
      bits += take;
      remaining -= take;
      while (bits >= 8) {
        bits -= 8;
        out[offset++] = (acc >>> bits) & 0xff;
      }
      acc &= (1 << bits) - 1;
    }
  }
  if (bits > 0) out[offset++] = ((acc << (8 - bits)) | ((1 << (8 - bits)) - 1)) & 0xff;
  return offset;
}
