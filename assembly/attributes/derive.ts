import { FNV64_OFFSET_BASIS, fnv64Bytes } from "../client/fnv64";
import { RequestView } from "../request";
import { parseSocketAddress } from "./address";
import { addAuthAttributes } from "./auth_claims";
import { AttributeBag } from "./bag";
import { namespaceOfPrincipal, principalFromSan } from "./principal";
import { queryParams, urlPath } from "./query";
import { sameKey } from "./string_map";
import { AttributeValue } from "./value";

// Content types that make context.protocol "grpc" (exact match, as upstream).
function isGrpcContentType(ct: string | null): bool {
  if (ct === null) return false;
  return ct == "application/grpc" || ct == "application/grpc+proto" || ct == "application/grpc+json";
}

// Values most requests share, built once (attribute values are never mutated).
const HTTP_TEXT = AttributeValue.ofString("http");
const GRPC_TEXT = AttributeValue.ofString("grpc");
const NO_SIZE = AttributeValue.ofInt64(0);
// Methods and schemes decode to shared strings (known_strings.ts); their
// values are shared as well.
const SHARED_STRING_VALUES: StaticArray<AttributeValue> = [
  HTTP_TEXT, AttributeValue.ofString("https"), AttributeValue.ofString("GET"), AttributeValue.ofString("POST"),
  AttributeValue.ofString("PUT"), AttributeValue.ofString("DELETE"), AttributeValue.ofString("PATCH"),
  AttributeValue.ofString("HEAD"), AttributeValue.ofString("OPTIONS"),
];

function stringValue(s: string): AttributeValue {
  for (let i = 0; i < SHARED_STRING_VALUES.length; i++) {
    const shared = unchecked(SHARED_STRING_VALUES[i]);
    if (sameKey(shared.str, s)) return shared;
  }
  return AttributeValue.ofString(s);
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

function setAddress(bag: AttributeBag, text: string, ipName: string, portName: string, alsoIp: string): void {
  if (text.length == 0) return;
  const addr = addressValues(text);
  const ip = addr.ip;
  if (ip !== null) {
    bag.set(ipName, ip);
    if (alsoIp.length > 0) bag.set(alsoIp, ip);
  }
  const port = addr.port;
  if (port !== null) bag.set(portName, port);
}

/**
 * Step 5 of the order of application: the attributes derived from the request
 * itself, written over whatever the static and forwarded steps put in `bag`.
 */
export function addRequestAttributes(bag: AttributeBag, req: RequestView): void {
  const h = req.headers;

  // The request's own map: the forwarded-attributes header was already taken
  // out of it (requestWithHeaders), so no copy is needed.
  if (h.size > 0) bag.set("request.headers", AttributeValue.ofMap(h));

  const authority = h.get(":authority");
  const host = authority !== null ? authority : h.get("host");
  bag.setString("request.host", host !== null ? host : "");

  const method = h.get(":method");
  if (method !== null) bag.set("request.method", stringValue(method));

  const path = h.get(":path");
  bag.setString("request.path", path !== null ? path : "");
  if (path !== null) {
    bag.setString("request.url_path", urlPath(path));
    const query = queryParams(path);
    if (query !== null) bag.set("request.query_params", AttributeValue.ofMap(query));
  }

  const referer = h.get("referer");
  if (referer !== null) bag.setString("request.referer", referer);
  const scheme = h.get(":scheme");
  bag.set("request.scheme", scheme !== null ? stringValue(scheme) : HTTP_TEXT);
  const userAgent = h.get("user-agent");
  if (userAgent !== null) bag.setString("request.useragent", userAgent);
  const requestId = h.get("x-request-id");
  if (requestId !== null) bag.setString("request.id", requestId);

  // At check time the body has not been read: the size the client announced.
  const contentLength = h.get("content-length");
  const size = contentLength !== null ? I64.parseInt(contentLength) : 0;
  bag.set("request.size", size > 0 ? AttributeValue.ofInt64(size) : NO_SIZE);
  bag.set("request.time", AttributeValue.ofTimestampNanos(req.timeNanos));

  setAddress(bag, req.sourceAddress, "source.ip", "source.port", "origin.ip");
  setAddress(bag, req.destinationAddress, "destination.ip", "destination.port", "");

  bag.set("connection.mtls", AttributeValue.ofBool(req.mtls));
  if (req.requestedServerName.length > 0) bag.setString("connection.requested_server_name", req.requestedServerName);
  bag.set("context.protocol", isGrpcContentType(h.get("content-type")) ? GRPC_TEXT : HTTP_TEXT);

  if (req.peerPrincipal.length > 0) {
    const peer = principalFromSan(req.peerPrincipal);
    bag.setString("source.principal", peer);
    bag.setString("source.user", peer);
    const ns = namespaceOfPrincipal(peer);
    if (ns !== null) bag.setString("source.namespace", ns);
  }
  if (req.localPrincipal.length > 0) bag.setString("destination.principal", principalFromSan(req.localPrincipal));

  addAuthAttributes(bag, req.authPayload);
}
