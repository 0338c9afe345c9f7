import { FNV64_OFFSET_BASIS, fnv64Bytes } from "../client/fnv64";
import { RequestView } from "../request";
import { parseSocketAddress } from "./address";
import { addAuthAttributes } from "./auth_claims";
import { AttributeBag } from "./bag";
import { namespaceOfPrincipal, principalFromSan } from "./principal";
import { urlPathLength } from "./query";
import { RequestValues } from "./request_values";
import { KNOWN_SLOTS, knownAt, knownSlot, knownSlotOfString } from "../known_strings";
import { AttributeValue } from "./value";
import {
  CONNECTION_MTLS, CONNECTION_REQUESTED_SERVER_NAME, CONTEXT_PROTOCOL, DESTINATION_IP, DESTINATION_PORT, DESTINATION_PRINCIPAL,
  NO_ATTRIBUTE_ID, ORIGIN_IP, REQUEST_HEADERS, REQUEST_HOST, REQUEST_ID, REQUEST_METHOD, REQUEST_PATH, REQUEST_QUERY_PARAMS,
  REQUEST_REFERER, REQUEST_SCHEME, REQUEST_SIZE, REQUEST_TIME, REQUEST_URL_PATH, REQUEST_USERAGENT, SOURCE_IP, SOURCE_NAMESPACE,
  SOURCE_PORT, SOURCE_PRINCIPAL, SOURCE_USER,
} from "./names";

// The headers the derivation reads, by their known-string slot (header_map.ts).
const AUTHORITY = headerSlot(":authority");
const HOST = headerSlot("host");
const METHOD = headerSlot(":method");
const PATH = headerSlot(":path");
const REFERER = headerSlot("referer");
const SCHEME = headerSlot(":scheme");
const USER_AGENT = headerSlot("user-agent");
const X_REQUEST_ID = headerSlot("x-request-id");
const CONTENT_LENGTH = headerSlot("content-length");
const CONTENT_TYPE = headerSlot("content-type");

function headerSlot(name: string): i32 {
  const slot = knownSlotOfString(name);
  assert(slot >= 0, "derive: a header the derivation reads must be a known string");
  return slot;
}

// Content types that make context.protocol "grpc" (exact match, as upstream).
function isGrpcContentType(ct: AttributeValue): bool {
  return ct.textEquals("application/grpc") || ct.textEquals("application/grpc+proto") || ct.textEquals("application/grpc+json");
}

// Values most requests share, built once (attribute values are never mutated).
const HTTP_TEXT = AttributeValue.ofString("http");
const EMPTY_TEXT = AttributeValue.ofString("");
const GRPC_TEXT = AttributeValue.ofString("grpc");
const NO_SIZE = AttributeValue.ofInt64(0);
// Methods are known strings (known_strings.ts): a known one gets a shared
// value whose text is the shared string, so the API-spec matcher compares
// it by identity and never decodes it.
const METHODS: StaticArray<string> = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"];
const methodValues = methodValuesBySlot();

function methodValuesBySlot(): StaticArray<AttributeValue | null> {
  const table = new StaticArray<AttributeValue | null>(KNOWN_SLOTS);
  for (let i = 0; i < METHODS.length; i++) {
    const name = unchecked(METHODS[i]);
    const slot = knownSlotOfString(name);
    assert(slot >= 0, "derive: a method must be a known string");
    unchecked((table[slot] = AttributeValue.ofString(knownAt(slot))));
  }
  return table;
}

// The method's shared value when it is a known one, else the request's own.
function methodValue(own: AttributeValue): AttributeValue {
  const slot = knownSlot(own.textPtr(), own.textLen());
  if (slot < 0) return own;
  const shared = unchecked(methodValues[slot]);
  return shared !== null ? shared : own;
}

// The announced body size: decimal digits are read in place; anything else
// is read as I64.parseInt reads it (whitespace, signs, radix prefixes).
function contentLength(v: AttributeValue): i64 {
  const ptr = v.textPtr();
  const len = v.textLen();
  if (len > 0 && len <= 18) {
    let n: i64 = 0;
    let i: usize = 0;
    for (; i < len; i++) {
      const d = <u32>load<u8>(ptr + i) - 0x30;
      if (d > 9) break;
      n = n * 10 + <i64>d;
    }
    if (i == len) return n;
  }
  return I64.parseInt(v.str);
}

/** The attribute values of one socket address text. */
class AddressValues {
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
const ADDRESS_SLOTS: u64 = 64;
const recentAddresses = new StaticArray<AddressValues | null>(<i32>ADDRESS_SLOTS);
let lastSourceAddress: AddressValues | null = null;
let lastDestinationAddress: AddressValues | null = null;

function addressValues(text: string, last: AddressValues | null): AddressValues {
  if (last !== null && changetype<usize>(last.text) == changetype<usize>(text)) return last;
  const slot = <i32>(fnv64Bytes(FNV64_OFFSET_BASIS, changetype<usize>(text), <usize>text.length << 1) & (ADDRESS_SLOTS - 1));
  const recent = unchecked(recentAddresses[slot]);
  if (recent !== null && recent.text == text) return recent;
  const addr = parseSocketAddress(text);
  const values = new AddressValues(
    text,
    addr.ip !== null ? AttributeValue.ofBytes(addr.ip as Uint8Array) : null,
    addr.port >= 0 ? AttributeValue.ofInt64(addr.port) : null,
  );
  unchecked((recentAddresses[slot] = values));
  return values;
}

function setAddress(bag: AttributeBag, addr: AddressValues, ipId: i32, portId: i32, alsoIpId: i32): void {
  const ip = addr.ip;
  if (ip !== null) {
    bag.setId(ipId, ip);
    if (alsoIpId >= 0) bag.setId(alsoIpId, ip);
  }
  const port = addr.port;
  if (port !== null) bag.setId(portId, port);
}

/** The identity attribute values of one peer or local certificate SAN. */
class PrincipalValues {
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
let lastPeer: PrincipalValues | null = null;
let lastLocal: PrincipalValues | null = null;

function principalValues(san: string, last: PrincipalValues | null): PrincipalValues {
  return last !== null && (changetype<usize>(last.san) == changetype<usize>(san) || last.san == san) ? last : new PrincipalValues(san);
}

/**
 * Step 5 of the order of application: the attributes derived from the request
 * itself, written over whatever the static and forwarded steps put in `bag`.
 * The request's own values are views of its header bytes, made in `values`
 * (its evaluation's reused storage); the ones requests share come from the
 * tables above. `values` also keeps the header map, `:method` and `:path`
 * for the steps that follow (API spec, API key).
 */
export function addRequestAttributes(bag: AttributeBag, req: RequestView, values: RequestValues = new RequestValues()): void {
  const h = req.headerMap();
  values.headers = h;

  // The request's own map: the forwarded-attributes header was already taken
  // out of it (requestWithHeaders), so no copy is needed.
  if (h.size > 0) bag.setId(REQUEST_HEADERS, values.map(h));

  let at = h.indexOfSlot(AUTHORITY);
  if (at < 0) at = h.indexOfSlot(HOST);
  bag.setId(REQUEST_HOST, at >= 0 ? values.header(h, at) : EMPTY_TEXT);

  at = h.indexOfSlot(METHOD);
  if (at >= 0) {
    const method = methodValue(values.header(h, at));
    values.method = method;
    bag.setId(REQUEST_METHOD, method);
  }

  at = h.indexOfSlot(PATH);
  if (at < 0) {
    bag.setId(REQUEST_PATH, EMPTY_TEXT);
  } else {
    const path = values.header(h, at);
    values.path = path;
    bag.setId(REQUEST_PATH, path);
    // Without a query the URL path is the path itself: one value for both.
    const ptr = path.textPtr();
    const len = path.textLen();
    const urlLength = urlPathLength(ptr, len);
    bag.setId(REQUEST_URL_PATH, urlLength == len ? path : values.view(ptr, urlLength));
    if (urlLength < len && values.query.parse(ptr, len)) bag.setId(REQUEST_QUERY_PARAMS, values.map(values.query));
  }

  at = h.indexOfSlot(REFERER);
  if (at >= 0) bag.setId(REQUEST_REFERER, values.header(h, at));
  at = h.indexOfSlot(SCHEME);
  bag.setId(REQUEST_SCHEME, at >= 0 ? values.header(h, at) : HTTP_TEXT);
  at = h.indexOfSlot(USER_AGENT);
  if (at >= 0) bag.setId(REQUEST_USERAGENT, values.header(h, at));
  at = h.indexOfSlot(X_REQUEST_ID);
  if (at >= 0) bag.setId(REQUEST_ID, values.header(h, at));

  // At check time the body has not been read: the size the client announced.
  at = h.indexOfSlot(CONTENT_LENGTH);
  const size = at >= 0 ? contentLength(values.header(h, at)) : 0;
  bag.setId(REQUEST_SIZE, size > 0 ? values.int64(size) : NO_SIZE);
  bag.setId(REQUEST_TIME, values.timestampNanos(req.timeNanos));

  if (req.sourceAddress.length > 0) {
    const source = addressValues(req.sourceAddress, lastSourceAddress);
    lastSourceAddress = source;
    setAddress(bag, source, SOURCE_IP, SOURCE_PORT, ORIGIN_IP);
  }
  if (req.destinationAddress.length > 0) {
    const destination = addressValues(req.destinationAddress, lastDestinationAddress);
    lastDestinationAddress = destination;
    setAddress(bag, destination, DESTINATION_IP, DESTINATION_PORT, NO_ATTRIBUTE_ID);
  }

  bag.setId(CONNECTION_MTLS, AttributeValue.ofBool(req.mtls));
  if (req.requestedServerName.length > 0) bag.setId(CONNECTION_REQUESTED_SERVER_NAME, values.string(req.requestedServerName));
  at = h.indexOfSlot(CONTENT_TYPE);
  bag.setId(CONTEXT_PROTOCOL, at >= 0 && isGrpcContentType(values.header(h, at)) ? GRPC_TEXT : HTTP_TEXT);

  if (req.peerPrincipal.length > 0) {
    const peer = principalValues(req.peerPrincipal, lastPeer);
    lastPeer = peer;
    bag.setId(SOURCE_PRINCIPAL, peer.principal);
    bag.setId(SOURCE_USER, peer.principal);
    const ns = peer.namespace;
    if (ns !== null) bag.setId(SOURCE_NAMESPACE, ns);
  }
  if (req.localPrincipal.length > 0) {
    const local = principalValues(req.localPrincipal, lastLocal);
    lastLocal = local;
    bag.setId(DESTINATION_PRINCIPAL, local.principal);
  }

  addAuthAttributes(bag, req.authPayload);
}
