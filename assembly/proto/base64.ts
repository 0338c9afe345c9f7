// Standard base64 (RFC 4648 §4, with padding), as the forwarded-attributes
// header carries its protobuf payload.

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

export function base64Encode(data: Uint8Array): string {
  const n = data.length;
  const parts = new Array<string>(0);
  let out = "";
  for (let i = 0; i < n; i += 3) {
    const b0 = <u32>data[i];
    const b1 = i + 1 < n ? <u32>data[i + 1] : 0;
    const b2 = i + 2 < n ? <u32>data[i + 2] : 0;
    const triple = (b0 << 16) | (b1 << 8) | b2;
    out += ALPHABET.charAt((triple >> 18) & 63);
    out += ALPHABET.charAt((triple >> 12) & 63);
    out += i + 1 < n ? ALPHABET.charAt((triple >> 6) & 63) : "=";
    out += i + 2 < n ? ALPHABET.charAt(triple & 63) : "=";
    if (out.length >= 1024) {
      parts.push(out);
      out = "";
    }
  }
  parts.push(out);
  return parts.join("");
}

function sextet(c: i32): i32 {
  if (c >= 65 && c <= 90) return c - 65;
  if (c >= 97 && c <= 122) return c - 71;
  if (c >= 48 && c <= 57) return c + 4;
  if (c == 43) return 62;
  if (c == 47) return 63;
  return -1;
}

/** Decoded bytes, or null when the text is not valid padded base64. */
export function base64Decode(text: string): Uint8Array | null {
  const n = text.length;
  if (n % 4 != 0) return null;
  let pad = 0;
  if (n > 0 && text.charCodeAt(n - 1) == 61) pad++;
  if (n > 1 && text.charCodeAt(n - 2) == 61) pad++;
  const out = new Uint8Array((n / 4) * 3 - pad);
  let o = 0;
  for (let i = 0; i < n; i += 4) {
    let triple: u32 = 0;
    for (let j = 0; j < 4; j++) {
      const c = text.charCodeAt(i + j);
      let s = 0;
      if (c == 61 && i + j >= n - pad) s = 0;
      else {
        s = sextet(c);
        if (s < 0) return null;
      }
      triple = (triple << 6) | <u32>s;
    }
    if (o < out.length) out[o++] = <u8>(triple >> 16);
    if (o < out.length) out[o++] = <u8>(triple >> 8);
    if (o < out.length) out[o++] = <u8>triple;
  }
  return out;
}
