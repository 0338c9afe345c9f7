import { base64Decode, base64Encode } from "./base64";
import { decodeAttributes, encodeAttributes } from "./attributes_codec";
import { AttributeBag } from "../attributes/bag";
import { REPLACEMENT } from "../utf8";
import { ValueKind } from "../attributes/value";

/**
 * The request header that carries forwarded attributes from a client proxy to
 * the server proxy: a base64 (standard, padded) mesh.hub.v1.Attributes.
 */
export const FORWARDED_HEADER = "x-mesh-attributes";

// Only these names are accepted from the header, and only as non-empty
// strings: anything else a client could put there would let it spoof
// identities the hub trusts.
const ACCEPTED_NAMES: StaticArray<string> = [
  "source.uid",
  "source.namespace",
  "destination.service.name",
  "destination.service.uid",
  "destination.service.host",
  "destination.service.namespace",
];

function accepted(name: string): bool {
  for (let i = 0; i < ACCEPTED_NAMES.length; i++) if (ACCEPTED_NAMES[i] == name) return true;
  return false;
}

/**
 * Bounds on what a client can make the filter decode and forward: the header
 * (base64 text), the attribute entries read from it, and each accepted
 * value. Identities and service names are far shorter than these.
 */
export const MAX_FORWARDED_HEADER_BYTES: i32 = 8192;
export const MAX_FORWARDED_ENTRIES: i32 = 64;
export const MAX_FORWARDED_VALUE_BYTES: i32 = 1024;

/** What an incoming header yields: the accepted attributes and how many were dropped. */
export class ForwardedAttributes {
  bag: AttributeBag = new AttributeBag();
  /**
   * Dropped for being unusable: the whole header when it is too long or not
   * base64 of an Attributes message (1), each allow-listed name whose value
   * is not a non-empty, valid-UTF-8 string of at most
   * MAX_FORWARDED_VALUE_BYTES, and every entry past MAX_FORWARDED_ENTRIES.
   * Names off the allow-list are ignored by design, not counted.
   */
  dropped: i32 = 0;
}

/**
 * The allow-listed attributes of an incoming header value. Whatever is wrong
 * with the header only removes attributes: a malformed one is ignored whole
 * and never changes anything else about the request.
 */
export function readForwardedAttributes(headerValue: string | null): ForwardedAttributes {
  const out = new ForwardedAttributes();
  if (headerValue === null) return out;
  const text = headerValue as string;
  if (text.length > MAX_FORWARDED_HEADER_BYTES) {
    out.dropped = 1;
    return out;
  }
  const bytes = base64Decode(text);
  const bag = bytes !== null ? decodeAttributes(bytes) : null;
  if (bag === null) {
    out.dropped = 1;
    return out;
  }
  const n = bag.size;
  if (n > MAX_FORWARDED_ENTRIES) out.dropped += n - MAX_FORWARDED_ENTRIES;
  for (let i = 0; i < n && i < MAX_FORWARDED_ENTRIES; i++) {
    const name = bag.nameAt(i);
    if (!accepted(name)) continue;
    const v = bag.valueAt(i);
    // Invalid UTF-8 was decoded to U+FFFD: such an identity is not the one the client meant, so drop it.
    if (v.kind == ValueKind.String && v.str.length > 0 && !v.str.includes(REPLACEMENT) && String.UTF8.byteLength(v.str) <= MAX_FORWARDED_VALUE_BYTES) {
      out.bag.set(name, v);
    } else {
      out.dropped++;
    }
  }
  return out;
}

/** The header value for outgoing forwarded attributes; "" when there are none. */
export function encodeForwardedAttributes(bag: AttributeBag): string {
  if (bag.size == 0) return "";
  return base64Encode(encodeAttributes(bag));
}
