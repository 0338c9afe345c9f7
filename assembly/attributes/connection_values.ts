import { FNV64_OFFSET_BASIS, fnv64Bytes } from "../fnv64";
import { parseSocketAddress } from "./address";
import { namespaceOfPrincipal, principalFromSan } from "./principal";
import { AttributeValue } from "./value";

/** The attribute values of one socket address text. */
export class AddressValues {
  constructor(
    public text: string,
    public ip: AttributeValue | null,
    public port: AttributeValue | null,
  ) {}
}

// Keep-alive connections send many requests from one peer to one local
// address. The values of recently seen address texts are kept (attribute
// values are never mutated once built), so a repeat costs a hash and a
// compare instead of a parse and five allocations. Direct-mapped: bounded.
// The properties' texts are themselves shared while they repeat
// (recent_strings.ts), so the same text is mostly the same string: the last
// one found is tried first, by identity.
// A second table is found by the text's identity (a hash of its address, no
// byte read): the connections of one peer take turns, each text the same
// string from request to request.
const ADDRESS_SLOTS: u64 = 64;
const recentAddresses = new StaticArray<AddressValues | null>(<i32>ADDRESS_SLOTS);
const addressesByIdentity = new StaticArray<AddressValues | null>(<i32>ADDRESS_SLOTS);

function addressValues(text: string, last: AddressValues | null): AddressValues {
  if (last !== null && changetype<usize>(last.text) == changetype<usize>(text)) return last;
  const identitySlot = <i32>(((<u32>changetype<usize>(text) >>> 4) * 0x9e3779b1) >>> 26);
  const known = unchecked(addressesByIdentity[identitySlot]);
  if (known !== null && changetype<usize>(known.text) == changetype<usize>(text)) return known;
  const slot = <i32>(fnv64Bytes(FNV64_OFFSET_BASIS, changetype<usize>(text), <usize>text.length << 1) & (ADDRESS_SLOTS - 1));
  const recent = unchecked(recentAddresses[slot]);
  if (recent !== null && recent.text == text) {
    unchecked((addressesByIdentity[identitySlot] = recent));
    return recent;
  }
  const addr = parseSocketAddress(text);
  const values = new AddressValues(
    text,
    addr.ip !== null ? AttributeValue.ofBytes(addr.ip as Uint8Array) : null,
    addr.port >= 0 ? AttributeValue.ofInt64(addr.port) : null,
  );
  unchecked((recentAddresses[slot] = values));
  unchecked((addressesByIdentity[identitySlot] = values));
  return values;
}

/** The identity attribute values of one peer or local certificate SAN. */
export class PrincipalValues {
  principal: AttributeValue;
  namespace: AttributeValue | null;

  constructor(public san: string) {
    const principal = principalFromSan(san);
    this.principal = AttributeValue.ofString(principal);
    const ns = namespaceOfPrincipal(principal);
    this.namespace = ns !== null ? AttributeValue.ofString(ns) : null;
  }
}

// A connection's identities repeat across its requests, shared strings
// (recent_strings.ts) the same way as its addresses: the last one's values
// are kept, by the SAN's identity.

function principalValues(san: string, last: PrincipalValues | null): PrincipalValues {
  return last !== null && (changetype<usize>(last.san) == changetype<usize>(san) || last.san == san) ? last : new PrincipalValues(san);
}

let lastSourceAddress: AddressValues | null = null;
let lastDestinationAddress: AddressValues | null = null;
let lastPeer: PrincipalValues | null = null;
let lastLocal: PrincipalValues | null = null;

export function sourceAddressValues(text: string): AddressValues {
  const values = addressValues(text, lastSourceAddress);
  lastSourceAddress = values;
  return values;
}

export function destinationAddressValues(text: string): AddressValues {
  const values = addressValues(text, lastDestinationAddress);
  lastDestinationAddress = values;
  return values;
}

export function peerPrincipalValues(san: string): PrincipalValues {
  const values = principalValues(san, lastPeer);
  lastPeer = values;
  return values;
}

export function localPrincipalValues(san: string): PrincipalValues {
  const values = principalValues(san, lastLocal);
  lastLocal = values;
  return values;
}
