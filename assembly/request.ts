import { FORWARDED_HEADER } from "./attributes/forwarded";
import { HeaderMap } from "./attributes/header_map";
import { StringMap } from "./attributes/string_map";
import { knownString } from "./known_strings";
import { forEachPair } from "./pairs";
import { recentString } from "./recent_strings";
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
export function requestWithHeaders(headers: StringMap, into: RequestView | null = null): RequestView {
  let r: RequestView;
  if (into !== null) {
    r = into;
    r.reset(headers);
  } else {
    r = new RequestView(headers);
  }
  const forwarded = headers.get(FORWARDED_HEADER);
  if (forwarded !== null) {
    r.forwarded = forwarded;
    headers.remove(FORWARDED_HEADER);
  }
  return r;
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

// Every PROP_* name is a known string (known_strings.ts), so one hash finds
// it and identity tells them apart.
function setProperty(r: RequestView, keyPtr: usize, keyLen: usize, valuePtr: usize, valueLen: usize): void {
  const name = knownString(keyPtr, keyLen);
  if (name === null) return;
  if (name === PROP_MTLS) {
    r.mtls = valueLen == 4 && load<u32>(valuePtr) == 0x65757274; // "true"
    return;
  }
  // A connection's addresses and identities, and the destination service,
  // repeat across its requests.
  const value = name === PROP_AUTH_PAYLOAD ? decodeUtf8(valuePtr, valueLen) : recentString(valuePtr, valueLen);
  if (name === PROP_SOURCE_ADDRESS) r.sourceAddress = value;
  else if (name === PROP_DESTINATION_ADDRESS) r.destinationAddress = value;
  else if (name === PROP_PEER_PRINCIPAL) r.peerPrincipal = value;
  else if (name === PROP_LOCAL_PRINCIPAL) r.localPrincipal = value;
  else if (name === PROP_REQUESTED_SERVER_NAME) r.requestedServerName = value;
  else if (name === PROP_DESTINATION_SERVICE) r.destinationService = value;
  else if (name === PROP_AUTH_PAYLOAD) r.authPayload = value;
}

function orEmpty(s: string | null): string {
  return s === null ? "" : s;
}
