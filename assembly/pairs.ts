import { knownString } from "./known_strings";
import { HeaderMap } from "./attributes/header_map";
import { recentString } from "./recent_strings";
import { decodeUtf8, encodeUtf8Unsafe } from "./utf8";
import { StringMap } from "./attributes/value";

// The proxy-wasm serialized map: u32 count, then count (key length, value
// length) u32 pairs, then each key and value followed by a NUL byte; all
// little-endian. Proxies hand headers over in this form, and the pure
// embedding exports take requests in it too, so both paths share one decoder.

/**
 * Calls `visit` with each pair's key and value bytes, in place and in order.
 * False when the bytes are not well-formed (pairs before the fault have been
 * visited: callers drop what they built). Inlined, so the visitor is a
 * direct call.
 */
// @ts-ignore: decorator
@inline
export function forEachPair<T>(ptr: usize, len: usize, target: T, visit: (target: T, keyPtr: usize, keyLen: usize, valuePtr: usize, valueLen: usize) => void): bool {
  if (len == 0) return true;
  if (len < 4) return false;
  const count = <usize>load<u32>(ptr);
  let sizes = ptr + 4;
  let data = sizes + count * 8;
  const end = ptr + len;
  if (count > len || data > end) return false;
  for (let i: usize = 0; i < count; i++) {
    const keyLen = <usize>load<u32>(sizes);
    const valueLen = <usize>load<u32>(sizes + 4);
    sizes += 8;
    // Compare against the room left, never a sum that could wrap around.
    if (data > end || keyLen > end - data || valueLen > end - data - keyLen || end - data - keyLen - valueLen < 2) return false;
    visit(target, data, keyLen, data + keyLen + 1, valueLen);
    data += keyLen + valueLen + 2;
  }
  return true;
}

// Headers whose values mostly repeat from request to request (recent_strings.ts).
// `name` is a known string (known_strings.ts), so identity settles it.
function repeats(name: string): bool {
  return name === ":authority" || name === "host" || name === "user-agent" || name === "accept-language" || name === "origin";
}

function addPair(m: StringMap, keyPtr: usize, keyLen: usize, valuePtr: usize, valueLen: usize): void {
  const knownKey = knownString(keyPtr, keyLen);
  const key = knownKey !== null ? knownKey : decodeUtf8(keyPtr, keyLen);
  const knownValue = knownString(valuePtr, valueLen);
  const value = knownValue !== null ? knownValue : knownKey !== null && repeats(knownKey) ? recentString(valuePtr, valueLen) : decodeUtf8(valuePtr, valueLen);
  // Repeated names (e.g. two `cookie` headers): the last one wins, as the
  // upstream client's header map did.
  m.set(key, value);
}

/** Decodes a serialized map; null if the bytes are not well-formed. */
export function decodePairs(ptr: usize, len: usize): StringMap | null {
  if (len == 0) return new StringMap(0);
  if (len < 4) return null;
  const m = new StringMap(<i32>min(<usize>load<u32>(ptr), 64));
  return forEachPair(ptr, len, m, addPair) ? m : null;
}

/** Decodes a serialized header map into `m` (emptied first, storage kept); false if malformed. */
export function decodeHeadersInto(ptr: usize, len: usize, m: HeaderMap): bool {
  return m.fill(ptr, len);
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
