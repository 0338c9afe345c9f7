import { decodeUtf8, encodeUtf8Unsafe } from "./utf8";
import { StringMap } from "./attributes/string_map";

// The proxy-wasm serialized map: u32 count, then count (key length, value
// length) u32 pairs, then each key and value followed by a NUL byte; all
// little-endian. Proxies hand headers over in this form, and the pure
// embedding exports take requests in it too, so both paths share one decoder.

// Header names nearly every request carries. Decoding returns these shared
// strings instead of allocating a copy per request: allocation dominates the
// cost of the hot path in AssemblyScript.
const COMMON_NAMES: StaticArray<string> = [
  ":authority", ":method", ":path", ":scheme", ":status", "accept", "accept-encoding", "accept-language",
  "authorization", "cache-control", "content-length", "content-type", "cookie", "host", "user-agent",
  "referer", "x-api-key", "x-b3-parentspanid", "x-b3-sampled", "x-b3-spanid", "x-b3-traceid",
  "x-forwarded-for", "x-forwarded-proto", "x-mesh-attributes", "x-request-id", "date", "server",
];

/** The shared string for an ASCII name in `COMMON_NAMES`, or null. */
function commonName(ptr: usize, len: usize): string | null {
  for (let i = 0; i < COMMON_NAMES.length; i++) {
    const name = unchecked(COMMON_NAMES[i]);
    if (<usize>name.length != len) continue;
    const chars = changetype<usize>(name);
    let same = true;
    for (let j: usize = 0; j < len; j++) {
      if (<u32>load<u8>(ptr + j) != <u32>load<u16>(chars + (j << 1))) {
        same = false;
        break;
      }
    }
    if (same) return name;
  }
  return null;
}

/** Decodes a serialized map; null if the bytes are not well-formed. */
export function decodePairs(ptr: usize, len: usize): StringMap | null {
  if (len == 0) return new StringMap(0);
  if (len < 4) return null;
  const count = <usize>load<u32>(ptr);
  const m = new StringMap(<i32>min(count, 64));
  let sizes = ptr + 4;
  let data = sizes + count * 8;
  const end = ptr + len;
  if (count > len || data > end) return null;
  for (let i: usize = 0; i < count; i++) {
    const keyLen = <usize>load<u32>(sizes);
    const valueLen = <usize>load<u32>(sizes + 4);
    sizes += 8;
    // Compare against the room left, never a sum that could wrap around.
    if (data > end || keyLen > end - data || valueLen > end - data - keyLen || end - data - keyLen - valueLen < 2) return null;
    const common = commonName(data, keyLen);
    const key = common !== null ? common : decodeUtf8(data, keyLen);
    data += keyLen + 1;
    const value = decodeUtf8(data, valueLen);
    data += valueLen + 1;
    // Repeated names (e.g. two `cookie` headers): the last one wins, as the
    // upstream client's header map did.
    m.set(key, value);
  }
  return m;
}

export function decodePairsBuffer(buf: Uint8Array): StringMap | null {
  return decodePairs(buf.dataStart, <usize>buf.length);
}

/** Serializes keys and values (parallel arrays) into the proxy-wasm map form. */
export function encodePairs(keys: Array<string>, values: Array<string>): Uint8Array {
  const n = keys.length;
  let size = 4 + n * 8;
  for (let i = 0; i < n; i++) size += String.UTF8.byteLength(keys[i]) + String.UTF8.byteLength(values[i]) + 2;
  const out = new Uint8Array(size);
  const base = out.dataStart;
  store<u32>(base, <u32>n);
  let data = base + 4 + <usize>n * 8;
  for (let i = 0; i < n; i++) {
    const k = keys[i];
    const v = values[i];
    const kl = encodeUtf8Unsafe(k, data);
    store<u32>(base + 4 + <usize>i * 8, <u32>kl);
    data += kl;
    store<u8>(data++, 0);
    const vl = encodeUtf8Unsafe(v, data);
    store<u32>(base + 8 + <usize>i * 8, <u32>vl);
    data += vl;
    store<u8>(data++, 0);
  }
  return out;
}
