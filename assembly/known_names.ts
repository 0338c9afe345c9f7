// Header and property names nearly every request carries, matched by a
// perfect hash built once: decoding a map then returns these shared strings
// instead of allocating a copy per request, at the cost of one hash of the
// name's bytes and one compare. The hash's seed is searched at start until
// every known name has a slot of its own, so a lookup never probes further.

import { FNV64_OFFSET_BASIS, fnv64Bytes } from "./client/fnv64";

const KNOWN_NAMES: StaticArray<string> = [
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
];

const SLOTS: u32 = 512;
const MASK: u32 = SLOTS - 1;
let longest: usize = 0;
const slots = new StaticArray<string | null>(SLOTS);
const seed: u32 = chooseSeed();

// FNV-1a over the name's UTF-8 bytes, started from the seed.
function slotOf(ptr: usize, len: usize, start: u32): u32 {
  const h = fnv64Bytes(FNV64_OFFSET_BASIS ^ <u64>start, ptr, len);
  return <u32>(h ^ (h >>> 32)) & MASK;
}

function slotOfName(name: string, start: u32): u32 {
  const bytes = String.UTF8.encode(name);
  return slotOf(changetype<usize>(bytes), <usize>bytes.byteLength, start);
}

function chooseSeed(): u32 {
  for (let i = 0; i < KNOWN_NAMES.length; i++) longest = max(longest, <usize>unchecked(KNOWN_NAMES[i]).length);
  let candidate: u32 = 1;
  while (!placeAll(candidate)) candidate++;
  return candidate;
}

/** Fills the slots under `candidate`; false when two names would share one. */
function placeAll(candidate: u32): bool {
  for (let s: u32 = 0; s < SLOTS; s++) unchecked((slots[s] = null));
  for (let i = 0; i < KNOWN_NAMES.length; i++) {
    const name = unchecked(KNOWN_NAMES[i]);
    const slot = slotOfName(name, candidate);
    if (unchecked(slots[slot]) !== null) return false;
    unchecked((slots[slot] = name));
  }
  return true;
}

/** The shared string for a known name given as bytes, or null. */
export function knownName(ptr: usize, len: usize): string | null {
  if (len == 0 || len > longest) return null;
  const name = unchecked(slots[slotOf(ptr, len, seed)]);
  if (name === null || <usize>name.length != len) return null;
  const chars = changetype<usize>(name);
  for (let i: usize = 0; i < len; i++) {
    if (<u32>load<u8>(ptr + i) != <u32>load<u16>(chars + (i << 1))) return null;
  }
  return name;
}
