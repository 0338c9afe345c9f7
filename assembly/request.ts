import { FORWARDED_HEADER } from "./proto/forwarded";
import { HeaderMap } from "./attributes/header_map";
import { StringMap } from "./attributes/value";
import { KNOWN_SLOTS, knownSlotInline, knownSlotOfString } from "./known_strings";
import { forEachPair } from "./pairs";
import { RepeatedText } from "./recent_strings";
import { decodeUtf8 } from "./utf8";

/**
 * Everything the hub client needs to know about one HTTP request, as plain
 * values. The ABI layer fills it from proxy host calls; embedders and specs
 * build it directly. Pure code reads only this, never the ABI.
 */
export class RequestView {
  /**
   * Request headers with lower-case names, pseudo-headers (`:path`…)
   * included, without the forwarded-attributes header (see `forwarded`).
   */
  headers: StringMap;
  /** The incoming forwarded-attributes header, taken out of `headers`; null if absent. */
  forwarded: string | null = null;
  /** Downstream peer address `ip:port` (`[v6]:port` for IPv6), "" if unknown. */
  sourceAddress: string = "";
  /** Local address the request arrived on, "" if unknown. */
  destinationAddress: string = "";
  /** The connection is TLS and the peer presented a certificate. */
  mtls: bool = false;
  /** URI SAN of the peer certificate (`spiffe://…` or as presented), "" if none. */
  peerPrincipal: string = "";
  /** URI SAN of the local certificate, "" if none. */
  localPrincipal: string = "";
  requestedServerName: string = "";
  /** Service the request is for; selects the ServiceConfig. */
  destinationService: string = "";
  /** Payload JSON of the end-user JWT the host validated, "" if none. */
  authPayload: string = "";
  /** Wall clock when the request was seen, Unix nanoseconds. */
  timeNanos: i64 = 0;
  private copied: HeaderMap | null = null;

  constructor(headers: StringMap = new StringMap()) {
    this.headers = headers;
  }

  /** Back to an empty view over `headers`, for a request read into the same objects. */
  reset(headers: StringMap): void {
    this.headers = headers;
    this.forwarded = null;
    this.sourceAddress = "";
    this.destinationAddress = "";
    this.mtls = false;
    this.peerPrincipal = "";
    this.localPrincipal = "";
    this.requestedServerName = "";
    this.destinationService = "";
    this.authPayload = "";
    this.timeNanos = 0;
  }

  header(name: string): string | null {
    return this.headers.get(name);
  }

  /**
   * The headers as a HeaderMap, the form the derivation reads in place:
   * `headers` itself when it is one (the proxy and the embedding exports
   * fill one from the request's bytes), else a copy refilled from it at each
   * call (a view built by hand), so read it once per evaluation.
   */
  headerMap(): HeaderMap {
    const h = this.headers;
    if (h instanceof HeaderMap) return changetype<HeaderMap>(h);
    let copy = this.copied;
    if (copy === null) {
      copy = new HeaderMap(16);
      this.copied = copy;
    }
    copy.fillFrom(h);
    return copy;
  }
}

/**
 * A view over `headers` (which it takes over): the forwarded-attributes header
 * is removed from the map and kept apart, since it must never reach the
 * application nor the `request.headers` attribute.
 */
// @ts-ignore: decorator
@inline
export function requestWithHeaders(headers: StringMap, into: RequestView | null = null): RequestView {
  let r: RequestView;
  if (into !== null) {
    r = into;
    r.reset(headers);
  } else {
    r = new RequestView(headers);
  }
  // A request's own header map finds the header by its slot, unhashed.
  const at = headers instanceof HeaderMap ? changetype<HeaderMap>(headers).indexOfSlot(FORWARDED_SLOT) : headers.indexOf(FORWARDED_HEADER);
  if (at >= 0) {
    r.forwarded = headers.valueAt(at);
    headers.remove(FORWARDED_HEADER);
  }
  return r;
}

const FORWARDED_SLOT = forwardedSlot();

function forwardedSlot(): i32 {
  const slot = knownSlotOfString(FORWARDED_HEADER);
  assert(slot >= 0, "request: the forwarded-attributes header must be a known string");
  return slot;
}

// Property names under which the pure embedding exports receive the
// connection facts (the proxy-wasm attribute names where one exists).
export const PROP_SOURCE_ADDRESS = "source.address";
export const PROP_DESTINATION_ADDRESS = "destination.address";
export const PROP_MTLS = "connection.mtls";
export const PROP_PEER_PRINCIPAL = "connection.uri_san_peer_certificate";
export const PROP_LOCAL_PRINCIPAL = "connection.uri_san_local_certificate";
export const PROP_REQUESTED_SERVER_NAME = "connection.requested_server_name";
export const PROP_DESTINATION_SERVICE = "mesh.destination_service";
export const PROP_AUTH_PAYLOAD = "mesh.authn.payload";

/** Builds a view from a header map and a property map (see PROP_*). */
export function requestFromMaps(headers: StringMap, properties: StringMap, timeNanos: i64): RequestView {
  const r = requestWithHeaders(headers);
  r.sourceAddress = orEmpty(properties.get(PROP_SOURCE_ADDRESS));
  r.destinationAddress = orEmpty(properties.get(PROP_DESTINATION_ADDRESS));
  r.mtls = orEmpty(properties.get(PROP_MTLS)) == "true";
  r.peerPrincipal = orEmpty(properties.get(PROP_PEER_PRINCIPAL));
  r.localPrincipal = orEmpty(properties.get(PROP_LOCAL_PRINCIPAL));
  r.requestedServerName = orEmpty(properties.get(PROP_REQUESTED_SERVER_NAME));
  r.destinationService = orEmpty(properties.get(PROP_DESTINATION_SERVICE));
  r.authPayload = orEmpty(properties.get(PROP_AUTH_PAYLOAD));
  r.timeNanos = timeNanos;
  return r;
}

/**
 * The same view with the properties read in place from their serialized map
 * (only the PROP_* values are decoded); null if that map is malformed.
 */
export function requestFromPairs(headers: StringMap, propertiesPtr: usize, propertiesLen: usize, timeNanos: i64, into: RequestView | null = null): RequestView | null {
  const r = requestWithHeaders(headers, into);
  if (!forEachPair(propertiesPtr, propertiesLen, r, setProperty)) return null;
  r.timeNanos = timeNanos;
  return r;
}

// Every PROP_* name is a known string (known_strings.ts): one hash finds its
// slot, and the slot its place in PROPERTY_NAMES (0 for none).
const PROPERTY_NAMES: StaticArray<string> = [
  "", PROP_SOURCE_ADDRESS, PROP_DESTINATION_ADDRESS, PROP_MTLS, PROP_PEER_PRINCIPAL, PROP_LOCAL_PRINCIPAL,
  PROP_REQUESTED_SERVER_NAME, PROP_DESTINATION_SERVICE, PROP_AUTH_PAYLOAD,
];
const propertyBySlot = propertiesBySlot();

function propertiesBySlot(): StaticArray<u8> {
  const table = new StaticArray<u8>(KNOWN_SLOTS);
  for (let i = 1; i < PROPERTY_NAMES.length; i++) {
    const slot = knownSlotOfString(unchecked(PROPERTY_NAMES[i]));
    assert(slot >= 0, "request: a property name must be a known string");
    unchecked((table[slot] = <u8>i));
  }
  return table;
}

// A connection's addresses and identities, and the destination service,
// repeat across its requests: the last bytes of each are compared first,
// then the recent strings are tried.
const lastValues: StaticArray<RepeatedText> = [
  new RepeatedText(), new RepeatedText(), new RepeatedText(), new RepeatedText(), new RepeatedText(),
  new RepeatedText(), new RepeatedText(), new RepeatedText(), new RepeatedText(),
]; // one per PROPERTY_NAMES

// @ts-ignore: decorator
@inline
function repeated(property: i32, ptr: usize, len: usize): string {
  return unchecked(lastValues[property]).of(ptr, len);
}

function setProperty(r: RequestView, keyPtr: usize, keyLen: usize, valuePtr: usize, valueLen: usize): void {
  const slot = knownSlotInline(keyPtr, keyLen);
  if (slot < 0) return;
  const property = <i32>unchecked(propertyBySlot[slot]);
  switch (property) {
    case 1: r.sourceAddress = repeated(property, valuePtr, valueLen); break;
    case 2: r.destinationAddress = repeated(property, valuePtr, valueLen); break;
    case 3: r.mtls = valueLen == 4 && load<u32>(valuePtr) == 0x65757274; break; // "true"
    case 4: r.peerPrincipal = repeated(property, valuePtr, valueLen); break;
    case 5: r.localPrincipal = repeated(property, valuePtr, valueLen); break;
    case 6: r.requestedServerName = repeated(property, valuePtr, valueLen); break;
    case 7: r.destinationService = repeated(property, valuePtr, valueLen); break;
    case 8: r.authPayload = decodeUtf8(valuePtr, valueLen); break;
  }
}

function orEmpty(s: string | null): string {
  return s === null ? "" : s;
}
