import { FNV64_OFFSET_BASIS, fnv64Bytes } from "../client/fnv64";
import { RequestView } from "../request";
import { parseSocketAddress } from "./address";
import { addAuthAttributes } from "./auth_claims";
import { AttributeBag } from "./bag";
import { namespaceOfPrincipal, principalFromSan } from "./principal";
import { queryParamsInto, urlPath } from "./query";
import { RequestValues } from "./request_values";
import { sameKey } from "./string_map";
import { AttributeValue } from "./value";
import {
  CONNECTION_MTLS, CONNECTION_REQUESTED_SERVER_NAME, CONTEXT_PROTOCOL, DESTINATION_IP, DESTINATION_PORT, DESTINATION_PRINCIPAL,
  NO_ATTRIBUTE_ID, ORIGIN_IP, REQUEST_HEADERS, REQUEST_HOST, REQUEST_ID, REQUEST_METHOD, REQUEST_PATH, REQUEST_QUERY_PARAMS,
  REQUEST_REFERER, REQUEST_SCHEME, REQUEST_SIZE, REQUEST_TIME, REQUEST_URL_PATH, REQUEST_USERAGENT, SOURCE_IP, SOURCE_NAMESPACE,
  SOURCE_PORT, SOURCE_PRINCIPAL, SOURCE_USER,
} from "./names";

// Content types that make context.protocol "grpc" (exact match, as upstream).
function isGrpcContentType(ct: string | null): bool {
  if (ct === null) return false;
  return ct == "application/grpc" || ct == "application/grpc+proto" || ct == "application/grpc+json";
}

// Values most requests share, built once (attribute values are never mutated).
const HTTP_TEXT = AttributeValue.ofString("http");
const EMPTY_TEXT = AttributeValue.ofString("");
const GRPC_TEXT = AttributeValue.ofString("grpc");
const NO_SIZE = AttributeValue.ofInt64(0);
// Methods and schemes decode to shared strings (known_strings.ts); their
// values are shared as well.
const SHARED_STRING_VALUES: StaticArray<AttributeValue> = [
  HTTP_TEXT, AttributeValue.ofString("https"), AttributeValue.ofString("GET"), AttributeValue.ofString("POST"),
  AttributeValue.ofString("PUT"), AttributeValue.ofString("DELETE"), AttributeValue.ofString("PATCH"),
  AttributeValue.ofString("HEAD"), AttributeValue.ofString("OPTIONS"),
];

// The values of recent strings, by the string's address: a shared string
// (known_strings.ts, recent_strings.ts) keeps its value too. A slot's value
// holds its string, so an equal address is the same string.
const VALUE_SLOTS: usize = 64;
const recentValues = new StaticArray<AttributeValue | null>(<i32>VALUE_SLOTS);

function stringValue(s: string): AttributeValue {
  for (let i = 0; i < SHARED_STRING_VALUES.length; i++) {
    const shared = unchecked(SHARED_STRING_VALUES[i]);
    if (sameKey(shared.str, s)) return shared;
  }
  const slot = <i32>((changetype<usize>(s) >> 4) & (VALUE_SLOTS - 1));
  const recent = unchecked(recentValues[slot]);
  if (recent !== null && changetype<usize>(recent.str) == changetype<usize>(s)) return recent;
  const value = AttributeValue.ofString(s);
  unchecked((recentValues[slot] = value));
  return value;
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
const ADDRESS_SLOTS: u64 = 64;
const recentAddresses = new StaticArray<AddressValues | null>(<i32>ADDRESS_SLOTS);

function addressValues(text: string): AddressValues {
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

function setAddress(bag: AttributeBag, text: string, ipId: i32, portId: i32, alsoIpId: i32): void {
  if (text.length == 0) return;
  const addr = addressValues(text);
  const ip = addr.ip;
  if (ip !== null) {
    bag.setId(ipId, ip);
    if (alsoIpId >= 0) bag.setId(alsoIpId, ip);
  }
  const port = addr.port;
  if (port !== null) bag.setId(portId, port);
}

/**
 * Step 5 of the order of application: the attributes derived from the request
 * itself, written over whatever the static and forwarded steps put in `bag`.
 * The values only this request has are made in `values` (its evaluation's
 * reused storage), the ones requests share come from the tables above.
 */
export function addRequestAttributes(bag: AttributeBag, req: RequestView, values: RequestValues = new RequestValues()): void {
  const h = req.headers;

  // The request's own map: the forwarded-attributes header was already taken
  // out of it (requestWithHeaders), so no copy is needed.
  if (h.size > 0) bag.setId(REQUEST_HEADERS, values.map(h));

  const authority = h.get(":authority");
  const host = authority !== null ? authority : h.get("host");
  bag.setId(REQUEST_HOST, host !== null ? stringValue(host) : EMPTY_TEXT);

  const method = h.get(":method");
  if (method !== null) bag.setId(REQUEST_METHOD, stringValue(method));

  const path = h.get(":path");
  if (path === null) {
    bag.setId(REQUEST_PATH, EMPTY_TEXT);
  } else {
    const pathValue = values.string(path);
    bag.setId(REQUEST_PATH, pathValue);
    // Without a query the URL path is the path itself: one value for both.
    const url = urlPath(path);
    bag.setId(REQUEST_URL_PATH, changetype<usize>(url) == changetype<usize>(path) ? pathValue : values.string(url));
    if (queryParamsInto(path, values.query)) bag.setId(REQUEST_QUERY_PARAMS, values.map(values.query));
  }

  const referer = h.get("referer");
  if (referer !== null) bag.setId(REQUEST_REFERER, values.string(referer));
  const scheme = h.get(":scheme");
  bag.setId(REQUEST_SCHEME, scheme !== null ? stringValue(scheme) : HTTP_TEXT);
  const userAgent = h.get("user-agent");
  if (userAgent !== null) bag.setId(REQUEST_USERAGENT, stringValue(userAgent));
  const requestId = h.get("x-request-id");
  if (requestId !== null) bag.setId(REQUEST_ID, values.string(requestId));

  // At check time the body has not been read: the size the client announced.
  const contentLength = h.get("content-length");
  const size = contentLength !== null ? I64.parseInt(contentLength) : 0;
  bag.setId(REQUEST_SIZE, size > 0 ? values.int64(size) : NO_SIZE);
  bag.setId(REQUEST_TIME, values.timestampNanos(req.timeNanos));

  setAddress(bag, req.sourceAddress, SOURCE_IP, SOURCE_PORT, ORIGIN_IP);
  setAddress(bag, req.destinationAddress, DESTINATION_IP, DESTINATION_PORT, NO_ATTRIBUTE_ID);

  bag.setId(CONNECTION_MTLS, AttributeValue.ofBool(req.mtls));
  if (req.requestedServerName.length > 0) bag.setId(CONNECTION_REQUESTED_SERVER_NAME, stringValue(req.requestedServerName));
  bag.setId(CONTEXT_PROTOCOL, isGrpcContentType(h.get("content-type")) ? GRPC_TEXT : HTTP_TEXT);

  if (req.peerPrincipal.length > 0) {
    const peer = principalFromSan(req.peerPrincipal);
    bag.setIdString(SOURCE_PRINCIPAL, peer);
    bag.setIdString(SOURCE_USER, peer);
    const ns = namespaceOfPrincipal(peer);
    if (ns !== null) bag.setIdString(SOURCE_NAMESPACE, ns);
  }
  if (req.localPrincipal.length > 0) bag.setIdString(DESTINATION_PRINCIPAL, principalFromSan(req.localPrincipal));

  addAuthAttributes(bag, req.authPayload);
}
