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
/** Slots a known string can have: 0 <= knownSlot(...) < KNOWN_SLOTS. */
export const KNOWN_SLOTS: i32 = <i32>SLOTS;
const SLOT_SHIFT: u64 = 55; // 64 - log2(SLOTS)

// A string's key: its length and two 64-bit words of its bytes, the first
// and the last eight (overlapping when shorter; for fewer than eight bytes,
// the first and last four, or the bytes themselves), so a string of up to 16
// bytes is all in its key. The slot hashes the key; a lookup confirms it by
// comparing the key (and, past 16 bytes, the middle).
// @ts-ignore: decorator
@inline
function firstWord(ptr: usize, len: usize): u64 {
  if (len >= 8) return load<u64>(ptr);
  if (len >= 4) return <u64>load<u32>(ptr) | (<u64>load<u32>(ptr + len - 4) << 32);
  let w: u64 = <u64>load<u8>(ptr);
  if (len > 1) w |= <u64>load<u8>(ptr + 1) << 8;
  if (len > 2) w |= <u64>load<u8>(ptr + 2) << 16;
  return w;
}

// @ts-ignore: decorator
@inline
function lastWord(ptr: usize, len: usize): u64 {
  return len >= 8 ? load<u64>(ptr + len - 8) : 0;
}

// @ts-ignore: decorator
@inline
function slotOf(first: u64, last: u64, len: usize, seed: u64): u32 {
  let h = (first ^ seed) * 0xbf58476d1ce4e5b9;
  h ^= (last + <u64>len) * 0x94d049bb133111eb;
  h ^= h >> 29;
  return <u32>((h * 0x9e3779b97f4a7c15) >> SLOT_SHIFT);
}

// Per slot: the string, and in one 24-byte record read together by a
// lookup, its length (0 for an empty slot), where its bytes are and its two
// key words.
const slots = new StaticArray<string | null>(SLOTS);
const RECORD: usize = 24;
const records: usize = memory.data(<i32>(SLOTS * <u32>RECORD), 8);
// Keeps each slot's bytes (the records point into them).
const slotBytes = new StaticArray<ArrayBuffer | null>(SLOTS);
let longest: usize = 0;
const seed: u64 = chooseSeed();

function chooseSeed(): u64 {
  for (let i = 0; i < KNOWN_STRINGS.length; i++) {
    const name = unchecked(KNOWN_STRINGS[i]);
    assert(name.length > 0 && String.UTF8.byteLength(name) == name.length, "known_strings: a known string must be non-empty ASCII");
    longest = max(longest, <usize>name.length);
  }
  // With ~70 strings in 512 slots about one seed in a hundred succeeds; a
  // list with a string twice never would, and aborts at start.
  for (let candidate: u64 = 1; candidate <= 100_000; candidate++) {
    const trial = candidate * 0x9e3779b97f4a7c15;
    if (placeAll(trial)) return trial;
  }
  throw new Error("known_strings: no seed separates the strings");
}

/** Fills the slots under `trial`; false when two strings would share one. */
function placeAll(trial: u64): bool {
  for (let s: u32 = 0; s < SLOTS; s++) unchecked((slots[s] = null));
  memory.fill(records, 0, <usize>SLOTS * RECORD);
  for (let i = 0; i < KNOWN_STRINGS.length; i++) {
    const name = unchecked(KNOWN_STRINGS[i]);
    const bytes = String.UTF8.encode(name);
    const ptr = changetype<usize>(bytes);
    const len = <usize>bytes.byteLength;
    const first = firstWord(ptr, len);
    const last = lastWord(ptr, len);
    const slot = slotOf(first, last, len, trial);
    if (unchecked(slots[slot]) !== null) return false;
    unchecked((slots[slot] = name));
    unchecked((slotBytes[slot] = bytes));
    const record = records + <usize>slot * RECORD;
    store<u32>(record, <u32>len);
    store<u32>(record, <u32>ptr, 4);
    store<u64>(record, first, 8);
    store<u64>(record, last, 16);
  }
  return true;
}

/** The shared string for a known string given as UTF-8 bytes, or null. */
export function knownString(ptr: usize, len: usize): string | null {
  const slot = knownSlot(ptr, len);
  return slot < 0 ? null : unchecked(slots[slot]);
}

/** The slot of a known string given as UTF-8 bytes, or -1. */
export function knownSlot(ptr: usize, len: usize): i32 {
  return knownSlotInline(ptr, len);
}

/** knownSlot, inlined where a request's every header name is looked up (header_map.ts). */
// @ts-ignore: decorator
@inline
export function knownSlotInline(ptr: usize, len: usize): i32 {
  if (len - 1 >= longest) return -1; // also rejects 0
  const first = firstWord(ptr, len);
  const last = lastWord(ptr, len);
  const slot = slotOf(first, last, len, seed);
  const record = records + <usize>slot * RECORD;
  if (<usize>load<u32>(record) != len || load<u64>(record, 8) != first || load<u64>(record, 16) != last) return -1;
  if (len > 16 && !sameMiddle(ptr, <usize>load<u32>(record, 4), len)) return -1;
  return <i32>slot;
}

// The bytes between the first and last eight of two strings of `len` > 16 bytes are equal.
function sameMiddle(a: usize, b: usize, len: usize): bool {
  for (let i: usize = 8; i < len - 8; i += 8) {
    if (load<u64>(a + i) != load<u64>(b + i)) return false;
  }
  return true;
}

/** The known string in `slot` (from knownSlot). */
// @ts-ignore: decorator
@inline
export function knownAt(slot: i32): string {
  return changetype<string>(unchecked(slots[slot]));
}

// The strings whose slot is asked for are mostly the same few (a header a
// reader looks up by name, a configured key location): recent answers are
// kept by the string's identity in a small direct-mapped table. An entry
// holds its string, which keeps it alive, so its address is never another
// string's while the entry stands.
const ASKED: usize = 32;
const askedStrings = new StaticArray<string | null>(<i32>ASKED);
const askedSlots = new StaticArray<i32>(<i32>ASKED);

/**
 * The slot of a known string given as a string, or -1: the same key, read
 * from its code units (known strings are ASCII, so a unit is its byte).
 */
// @ts-ignore: decorator
@inline
export function knownSlotOfString(s: string): i32 {
  const ptr = changetype<usize>(s);
  const at = <i32>(((ptr >> 4) ^ (ptr >> 9)) & (ASKED - 1));
  return changetype<usize>(unchecked(askedStrings[at])) == ptr ? unchecked(askedSlots[at]) : askSlotOfString(s, at);
}

function askSlotOfString(s: string, at: i32): i32 {
  const slot = slotOfString(s);
  unchecked((askedStrings[at] = s));
  unchecked((askedSlots[at] = slot));
  return slot;
}

function slotOfString(s: string): i32 {
  const len = <usize>s.length;
  if (len == 0 || len > longest) return -1;
  const chars = changetype<usize>(s);
  // Its bytes, if it has only ASCII units: a known string's would be them.
  const room = scratchBytes;
  for (let i: usize = 0; i < len; i++) {
    const unit = <u32>load<u16>(chars + (i << 1));
    if (unit >= 0x80) return -1;
    store<u8>(room + i, <u8>unit);
  }
  return knownSlot(room, len);
}

// Room for the bytes of the longest known string (knownSlotOfString).
const scratchBytes: usize = memory.data(64);
