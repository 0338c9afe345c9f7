import { ResponseView } from "../attributes/report";
import { RepeatedText } from "../recent_strings";
import { RequestView } from "../request";
import { decodeUtf8 } from "../utf8";
import { boolAt, int64At, PropertySet } from "./property_set";

// The properties an HTTP stream's hub client reads, in two sets: the
// connection and routing facts when the request headers arrive, the outcome
// at log time. Every one of them feeds an attribute the hub receives (the
// check and the report carry all attributes, as the upstream client's did),
// so each set is read whole: one host call on a host that batches
// (property_set.ts), one per property on any other.

function text(ptr: usize, len: usize): string {
  return len > 0 ? decodeUtf8(ptr, len) : "";
}

const REQUEST_NAMES: StaticArray<string> = [
  "source.address",
  "destination.address",
  "connection.mtls",
  "connection.uri_san_peer_certificate",
  "connection.uri_san_local_certificate",
  "connection.requested_server_name",
  "mesh.destination_service",
  "mesh.authn_payload",
];

// A connection's addresses and identities, and the destination service,
// repeat across its requests: each property's last bytes are kept, and the
// same bytes again give the same string without a hash (RepeatedText); other
// bytes are decoded once while they keep coming (recentString).
const REPEATED_REQUEST: StaticArray<RepeatedText> = [
  new RepeatedText(), new RepeatedText(), new RepeatedText(), new RepeatedText(),
  new RepeatedText(), new RepeatedText(), new RepeatedText(), new RepeatedText(),
];

function visitRequest(r: RequestView, index: i32, ptr: usize, len: usize): void {
  if (index == 2) {
    r.mtls = boolAt(ptr, len);
    return;
  }
  if (index == 7) {
    r.authPayload = text(ptr, len);
    return;
  }
  const value = unchecked(REPEATED_REQUEST[index]).of(ptr, len);
  switch (index) {
    case 0: r.sourceAddress = value; break;
    case 1: r.destinationAddress = value; break;
    case 3: r.peerPrincipal = value; break;
    case 4: r.localPrincipal = value; break;
    case 5: r.requestedServerName = value; break;
    case 6: r.destinationService = value; break;
  }
}

const REQUEST_PROPERTIES = new PropertySet<RequestView>(REQUEST_NAMES, visitRequest);

/** The connection facts of a request (addresses, mutual TLS, principals, service, JWT payload); absent ones keep their defaults. */
// @ts-ignore: decorator
@inline
export function readRequestProperties(r: RequestView): void {
  REQUEST_PROPERTIES.read(r);
}

const RESPONSE_NAMES: StaticArray<string> = [
  "response.code",
  "request.size",
  "response.size",
  "request.total_size",
  "response.total_size",
  "upstream.address",
];

const REPEATED_UPSTREAM = new RepeatedText();

function visitResponse(v: ResponseView, index: i32, ptr: usize, len: usize): void {
  switch (index) {
    case 0: v.code = int64At(ptr, len); break;
    case 1: v.requestBodySize = max<i64>(0, int64At(ptr, len)); break;
    case 2: v.responseBodySize = max<i64>(0, int64At(ptr, len)); break;
    case 3: v.requestTotalSize = max<i64>(0, int64At(ptr, len)); break;
    case 4: v.responseTotalSize = max<i64>(0, int64At(ptr, len)); break;
    // The upstream a pooled connection reaches repeats from report to report.
    case 5: v.upstreamAddress = REPEATED_UPSTREAM.of(ptr, len); break;
  }
}

const RESPONSE_PROPERTIES = new PropertySet<ResponseView>(RESPONSE_NAMES, visitResponse);

// What readResponseProperties may leave out (its `skip`): each costs a host
// call, and a present value another (the host allocates module memory for it).
/** request.size: the request had no body (its headers ended the stream). */
export const SKIP_REQUEST_SIZE: u32 = 1 << 1;
/** response.size: the response had no body. */
export const SKIP_RESPONSE_SIZE: u32 = 1 << 2;
/** upstream.address: the report has destination.ip and destination.port already. */
export const SKIP_UPSTREAM_ADDRESS: u32 = 1 << 5;

/**
 * The outcome of a finished request (status, sizes, upstream address);
 * absent ones keep their defaults (code -1, sizes 0, no upstream), and so do
 * those `skip` leaves out (SKIP_*).
 */
// @ts-ignore: decorator
@inline
export function readResponseProperties(v: ResponseView, skip: u32 = 0): void {
  RESPONSE_PROPERTIES.read(v, skip);
}
