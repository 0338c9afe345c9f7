/**
 * The proxy-wasm serialized map (u32 count, u32 key/value lengths, then each
 * key and value NUL-terminated; little-endian): how headers and properties
 * cross into the module. Written in one buffer, without a copy per string.
 */
export function encodePairs(entries: ReadonlyArray<readonly [string, string]>): Uint8Array {
  let size = 4 + entries.length * 8;
  for (const [k, v] of entries) size += Buffer.byteLength(k, "utf8") + Buffer.byteLength(v, "utf8") + 2;
  const out = Buffer.allocUnsafe(size);
  out.writeUInt32LE(entries.length, 0);
  let data = 4 + entries.length * 8;
  for (let i = 0; i < entries.length; i++) {
    const [k, v] = entries[i];
    const kl = out.write(k, data, "utf8");
    out[data + kl] = 0;
    data += kl + 1;
    const vl = out.write(v, data, "utf8");
    out[data + vl] = 0;
    data += vl + 1;
    out.writeUInt32LE(kl, 4 + i * 8);
    out.writeUInt32LE(vl, 8 + i * 8);
  }
  return out;
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
