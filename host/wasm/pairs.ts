/**
 * The proxy-wasm serialized map (u32 count, u32 key/value lengths, then each
 * key and value NUL-terminated; little-endian): how headers and properties
 * cross into the module.
 */
export function encodePairs(entries: ReadonlyArray<readonly [string, string]>): Uint8Array {
  const encoded = entries.map(([k, v]) => [Buffer.from(k, "utf8"), Buffer.from(v, "utf8")] as const);
  let size = 4 + entries.length * 8;
  for (const [k, v] of encoded) size += k.length + v.length + 2;
  const out = Buffer.alloc(size);
  out.writeUInt32LE(entries.length, 0);
  let data = 4 + entries.length * 8;
  encoded.forEach(([k, v], i) => {
    out.writeUInt32LE(k.length, 4 + i * 8);
    out.writeUInt32LE(v.length, 8 + i * 8);
    k.copy(out, data);
    data += k.length + 1;
    v.copy(out, data);
    data += v.length + 1;
  });
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
