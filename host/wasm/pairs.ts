/**
 * The proxy-wasm serialized map (u32 count, u32 key/value lengths, then each
 * key and value NUL-terminated; little-endian): how headers and properties
 * cross into the module. Written in one buffer, without a copy per string;
 * short ASCII strings (most header names and values) are copied by hand,
 * which is cheaper than a call into the UTF-8 encoder each.
 */
export function encodePairs(entries: ReadonlyArray<readonly [string, string]>): Uint8Array {
  const out = Buffer.allocUnsafe(pairsLength(entries));
  writePairs(out, 0, entries);
  return out;
}

/** The size of `entries` serialized (encodePairs). */
export function pairsLength(entries: ReadonlyArray<readonly [string, string]>): number {
  let size = 4 + entries.length * 8;
  for (let i = 0; i < entries.length; i++) size += utf8Length(entries[i][0]) + utf8Length(entries[i][1]) + 2;
  return size;
}

/** Serializes `entries` into `out` at `at` (pairsLength bytes): straight into module memory, with no buffer in between. */
export function writePairs(out: Buffer, at: number, entries: ReadonlyArray<readonly [string, string]>): void {
  out.writeUInt32LE(entries.length, at);
  let data = at + 4 + entries.length * 8;
  for (let i = 0; i < entries.length; i++) {
    const [k, v] = entries[i];
    const kl = writeString(out, k, data);
    out[data + kl] = 0;
    data += kl + 1;
    const vl = writeString(out, v, data);
    out[data + vl] = 0;
    data += vl + 1;
    out.writeUInt32LE(kl, at + 4 + i * 8);
    out.writeUInt32LE(vl, at + 8 + i * 8);
  }
}

const SHORT = 64;

function isShortAscii(s: string): boolean {
  if (s.length > SHORT) return false;
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0x80) return false;
  return true;
}

/** UTF-8 length of `s` (its length for short ASCII, without calling the encoder). */
export function utf8Length(s: string): number {
  return isShortAscii(s) ? s.length : Buffer.byteLength(s, "utf8");
}

/** Writes `s` as UTF-8 at `at`; returns the bytes written. */
export function writeString(out: Buffer, s: string, at: number): number {
  if (!isShortAscii(s)) return out.write(s, at, "utf8");
  for (let i = 0; i < s.length; i++) out[at + i] = s.charCodeAt(i);
  return s.length;
}

export function decodePairs(bytes: Uint8Array): Array<[string, string]> {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length === 0) return [];
  const count = buf.readUInt32LE(0);
  const out: Array<[string, string]> = [];
  let data = 4 + count * 8;
  for (let i = 0; i < count; i++) {
    const kl = buf.readUInt32LE(4 + i * 8);
    const vl = buf.readUInt32LE(8 + i * 8);
    const k = buf.toString("utf8", data, data + kl);
    data += kl + 1;
    const v = buf.toString("utf8", data, data + vl);
    data += vl + 1;
    out.push([k, v]);
  }
  return out;
}
