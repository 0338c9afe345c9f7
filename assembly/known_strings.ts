// Header and property names nearly every request carries, and the most
// common header values, matched by a perfect hash built once: decoding a map
// then returns these shared strings instead of allocating a copy per
// request, at the cost of one hash of a few bytes and one compare. The
// hash's seed is searched at start until every known string has a slot of
// its own, so a lookup never probes further.

const KNOWN_STRINGS: StaticArray<string> = [
  // Request pseudo-headers and common request headers.
  ":authority", ":method", ":path", ":scheme", ":status", "accept", "accept-encoding", "accept-language",
  "authorization", "cache-control", "connection", "content-length", "content-type", "cookie", "host",
  "origin", "pragma", "referer", "te", "user-agent", "x-api-key", "x-forwarded-for", "x-forwarded-host",
  "x-forwarded-proto", "x-mesh-attributes", "x-request-id", "x-b3-parentspanid", "x-b3-sampled",
  "x-b3-spanid", "x-b3-traceid", "traceparent", "tracestate",
  // Common response headers and trailers.
  "date", "server", "content-encoding", "etag", "location", "set-cookie", "vary", "grpc-status", "grpc-message",
  // The property names the embedding exports receive (request.ts).
  "source.address", "destination.address", "connection.mtls", "connection.uri_san_peer_certificate",
  "connection.uri_san_local_certificate", "connection.requested_server_name", "mesh.destination_service",
  "mesh.authn.payload",
  // Common values: methods, schemes, content types, flags.
  "GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "http", "https", "*/*", "application/json",
  "application/grpc", "text/plain", "gzip", "no-cache", "keep-alive", "trailers", "true", "false", "0",
];

const SLOTS: u32 = 512;
const MASK: u32 = SLOTS - 1;
let longest: usize = 0;
// Bit n set when some known string has n code units (all are shorter than
// 64): most unknown values are rejected by their length alone, unhashed.
let lengths: u64 = 0;
const slots = new StaticArray<string | null>(SLOTS);
const seed: u32 = chooseSeed();
// Each slot's string as UTF-8 bytes (they are ASCII), so a lookup by bytes
// confirms its candidate eight bytes at a time.
const slotBytes = bytesOfSlots();

function bytesOfSlots(): StaticArray<ArrayBuffer | null> {
  const table = new StaticArray<ArrayBuffer | null>(SLOTS);
  for (let s: u32 = 0; s < SLOTS; s++) {
    const name = unchecked(slots[s]);
    if (name !== null) unchecked((table[s] = String.UTF8.encode(name)));
  }
  return table;
}

// The slot hashes the length and five bytes spread over the name (first,
// last, middle, quarters): cheaper than every byte, and enough to tell the
// known strings apart (the seed search below proves it at start; the
// compare in knownString rejects every other string).
function slotOf(ptr: usize, len: usize, start: u32): u32 {
  return mix(start, len, load<u8>(ptr), load<u8>(ptr + len - 1), load<u8>(ptr + (len >> 1)), load<u8>(ptr + (len >> 2)), load<u8>(ptr + len - 1 - (len >> 2)));
}

// The same five units of a string's code units (its bytes, for ASCII).
function slotOfUnits(chars: usize, len: usize, start: u32): u32 {
  return mix(
    start, len, load<u16>(chars), load<u16>(chars + ((len - 1) << 1)), load<u16>(chars + ((len >> 1) << 1)),
    load<u16>(chars + ((len >> 2) << 1)), load<u16>(chars + ((len - 1 - (len >> 2)) << 1)),
  );
}

// @ts-ignore: decorator
@inline
function mix(start: u32, len: usize, first: u32, last: u32, middle: u32, quarter: u32, threeQuarters: u32): u32 {
  let h = (start ^ <u32>len) * 0x9e3779b1;
  h = (h ^ first) * 0x85ebca6b;
  h = (h ^ last) * 0xc2b2ae35;
  h = (h ^ middle) * 0x27d4eb2f;
  h = (h ^ quarter) * 0x165667b1;
  h = (h ^ threeQuarters) * 0x9e3779b1;
  return (h ^ (h >>> 16)) & MASK;
}

function slotOfName(name: string, start: u32): u32 {
  const bytes = String.UTF8.encode(name);
  return slotOf(changetype<usize>(bytes), <usize>bytes.byteLength, start);
}

function chooseSeed(): u32 {
  for (let i = 0; i < KNOWN_STRINGS.length; i++) {
    const length = <usize>unchecked(KNOWN_STRINGS[i]).length;
    assert(length < 64, "known_strings: a known string must be shorter than 64");
    longest = max(longest, length);
    lengths |= (<u64>1) << <u64>length;
  }
  // With ~70 strings in 512 slots about one seed in a hundred succeeds; a
  // list with two strings alike in every hashed byte never would, and
  // aborts at start.
  for (let candidate: u32 = 1; candidate <= 100_000; candidate++) {
    if (placeAll(candidate)) return candidate;
  }
  throw new Error("known_strings: no seed separates the strings");
}

/** Fills the slots under `candidate`; false when two strings would share one. */
function placeAll(candidate: u32): bool {
  for (let s: u32 = 0; s < SLOTS; s++) unchecked((slots[s] = null));
  for (let i = 0; i < KNOWN_STRINGS.length; i++) {
    const name = unchecked(KNOWN_STRINGS[i]);
    const slot = slotOfName(name, candidate);
    if (unchecked(slots[slot]) !== null) return false;
    unchecked((slots[slot] = name));
  }
  return true;
}

/** The shared string for a known string given as UTF-8 bytes, or null. */
export function knownString(ptr: usize, len: usize): string | null {
  const slot = knownSlot(ptr, len);
  return slot < 0 ? null : unchecked(slots[slot]);
}

/** Slots a known string can have: 0 <= knownSlot(...) < KNOWN_SLOTS. */
export const KNOWN_SLOTS: i32 = <i32>SLOTS;

/** The slot of a known string given as UTF-8 bytes, or -1. */
export function knownSlot(ptr: usize, len: usize): i32 {
  if (len == 0 || len > longest || (lengths & ((<u64>1) << <u64>len)) == 0) return -1;
  const slot = slotOf(ptr, len, seed);
  const bytes = unchecked(slotBytes[slot]);
  if (bytes === null || <usize>bytes.byteLength != len) return -1;
  const known = changetype<usize>(bytes);
  let i: usize = 0;
  for (; i + 8 <= len; i += 8) {
    if (load<u64>(ptr + i) != load<u64>(known + i)) return -1;
  }
  for (; i < len; i++) {
    if (load<u8>(ptr + i) != load<u8>(known + i)) return -1;
  }
  return <i32>slot;
}

/** The known string in `slot` (from knownSlot). */
// @ts-ignore: decorator
@inline
export function knownAt(slot: i32): string {
  return changetype<string>(unchecked(slots[slot]));
}

/**
 * The slot of a known string given as a string, or -1: the same hash over
 * its code units (known strings are ASCII, so a unit is its byte), settled
 * by identity when `s` is the shared string itself, else by a compare.
 */
export function knownSlotOfString(s: string): i32 {
  const len = <usize>s.length;
  if (len == 0 || len > longest || (lengths & ((<u64>1) << <u64>len)) == 0) return -1;
  const chars = changetype<usize>(s);
  const slot = slotOfUnits(chars, len, seed);
  const name = unchecked(slots[slot]);
  if (name === null) return -1;
  if (changetype<usize>(name) == chars) return <i32>slot;
  return name == s ? <i32>slot : -1;
}
