import { RequestView } from "../request";
import { parseSocketAddress } from "./address";
import { addAuthAttributes } from "./auth_claims";
import { AttributeBag } from "./bag";
import { namespaceOfPrincipal, principalFromSan } from "./principal";
import { queryParams, urlPath } from "./query";
import { AttributeValue } from "./value";

// Content types that make context.protocol "grpc" (exact match, as upstream).
function isGrpcContentType(ct: string | null): bool {
  if (ct === null) return false;
  return ct == "application/grpc" || ct == "application/grpc+proto" || ct == "application/grpc+json";
}

function setAddress(bag: AttributeBag, text: string, ipName: string, portName: string, alsoIp: string): void {
  if (text.length == 0) return;
  const addr = parseSocketAddress(text);
  if (addr.ip !== null) {
    bag.set(ipName, AttributeValue.ofBytes(addr.ip as Uint8Array));
    if (alsoIp.length > 0) bag.set(alsoIp, AttributeValue.ofBytes(addr.ip as Uint8Array));
  }
  if (addr.port >= 0) bag.set(portName, AttributeValue.ofInt64(addr.port));
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
  if (method !== null) bag.setString("request.method", method);

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
  bag.setString("request.scheme", scheme !== null ? scheme : "http");
  const userAgent = h.get("user-agent");
  if (userAgent !== null) bag.setString("request.useragent", userAgent);
  const requestId = h.get("x-request-id");
  if (requestId !== null) bag.setString("request.id", requestId);

  // At check time the body has not been read: the size the client announced.
  const contentLength = h.get("content-length");
  const size = contentLength !== null ? I64.parseInt(contentLength) : 0;
  bag.set("request.size", AttributeValue.ofInt64(size > 0 ? size : 0));
  bag.set("request.time", AttributeValue.ofTimestampNanos(req.timeNanos));

  setAddress(bag, req.sourceAddress, "source.ip", "source.port", "origin.ip");
  setAddress(bag, req.destinationAddress, "destination.ip", "destination.port", "");

  bag.set("connection.mtls", AttributeValue.ofBool(req.mtls));
  if (req.requestedServerName.length > 0) bag.setString("connection.requested_server_name", req.requestedServerName);
  bag.setString("context.protocol", isGrpcContentType(h.get("content-type")) ? "grpc" : "http");

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
