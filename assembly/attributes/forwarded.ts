import { base64Decode, base64Encode } from "../proto/base64";
import { decodeAttributes, encodeAttributes } from "../proto/attributes_codec";
import { AttributeBag } from "./bag";
import { ValueKind } from "./value";

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

/** The allow-listed attributes of an incoming header value; empty when absent or malformed. */
export function readForwardedAttributes(headerValue: string | null): AttributeBag {
  const out = new AttributeBag();
  if (headerValue === null) return out;
  const bytes = base64Decode(headerValue as string);
  if (bytes === null) return out;
  const bag = decodeAttributes(bytes);
  if (bag === null) return out;
  for (let i = 0; i < bag.names.length; i++) {
    const v = bag.values[i];
    if (accepted(bag.names[i]) && v.kind == ValueKind.String && v.str.length > 0) out.set(bag.names[i], v);
  }
  return out;
}

/** The header value for outgoing forwarded attributes; "" when there are none. */
export function encodeForwardedAttributes(bag: AttributeBag): string {
  if (bag.size == 0) return "";
  return base64Encode(encodeAttributes(bag));
}
