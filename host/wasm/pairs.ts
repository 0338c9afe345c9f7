/**
 * The proxy-wasm serialized map (u32 count, u32 key/value lengths, then each
 * key and value NUL-terminated; little-endian): how headers and properties
 * cross into the module. Written in one pass straight into the destination,
 * without a copy per string; short ASCII strings (most header names and
 * values) are copied by hand, which is cheaper than a call into the UTF-8
 * encoder each.
 */
export function encodePairs(entries: ReadonlyArray<readonly [string, string]>): Uint8Array {
  const out = Buffer.allocUnsafe(pairsCapacity(entries));
  return out.subarray(0, writePairs(out, 0, entries));
}

/** The exact size of `entries` serialized (proxy_get_header_map_size). */
export function pairsLength(entries: ReadonlyArray<readonly [string, string]>): number {
  let size = 4 + entries.length * 8;
  for (let i = 0; i < entries.length; i++) size += utf8Length(entries[i][0]) + utf8Length(entries[i][1]) + 2;
  return size;
}

/** Room enough for `entries` serialized (UTF-8 is at most 3 bytes per UTF-16 unit): what writePairs may write. */
export function pairsCapacity(entries: ReadonlyArray<readonly [string, string]>): number {
  let units = 0;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    units += e[0].length + e[1].length;
  }
  return 4 + entries.length * 10 + units * 3;
}

/** Serializes `entries` into `out` at `at` (room for pairsCapacity bytes); returns the bytes written. */
export function writePairs(out: Buffer, at: number, entries: ReadonlyArray<readonly [string, string]>): number {
  const n = entries.length;
  writeU32(out, at, n);
  let sizes = at + 4;
  let data = sizes + n * 8;
  for (let i = 0; i < n; i++) {
    const e = entries[i];
    const kl = writeString(out, e[0], data);
    out[data + kl] = 0;
    data += kl + 1;
    const vl = writeString(out, e[1], data);
    out[data + vl] = 0;
    data += vl + 1;
    writeU32(out, sizes, kl);
    writeU32(out, sizes + 4, vl);
    sizes += 8;
  }
  return data - at;
}

/** A little-endian u32, byte by byte (cheaper than Buffer#writeUInt32LE's checks). */
export function writeU32(out: Uint8Array, at: number, v: number): void {
  out[at] = v;
  out[at + 1] = v >>> 8;
  out[at + 2] = v >>> 16;
  out[at + 3] = v >>> 24;
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

/** Writes `s` as UTF-8 at `at` (room for 3 bytes per unit); returns the bytes written. Short ASCII is copied as it is checked. */
export function writeString(out: Buffer, s: string, at: number): number {
  const n = s.length;
  if (n <= SHORT) {
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) break;
      out[at + i] = c;
    }
    if (i === n) return n;
  }
  return out.write(s, at, "utf8");
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
