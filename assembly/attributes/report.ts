import { httpStatusForCode, statusCodeName } from "../status_codes";
import { parseSocketAddress } from "./address";
import { AttributeBag } from "./bag";
import {
  CHECK_CACHE_HIT, CHECK_ERROR_CODE, CHECK_ERROR_MESSAGE, DESTINATION_IP, DESTINATION_PORT, QUOTA_CACHE_HIT, REQUEST_HEADERS, REQUEST_SIZE,
  REQUEST_TOTAL_SIZE, RESPONSE_CODE, RESPONSE_DURATION, RESPONSE_GRPC_MESSAGE, RESPONSE_GRPC_STATUS, RESPONSE_HEADERS, RESPONSE_SIZE,
  RESPONSE_TIME, RESPONSE_TOTAL_SIZE,
} from "./names";
import { RequestValues } from "./request_values";
import { AttributeValue, StringMap } from "./value";
import { HeaderMap } from "./header_map";
import { knownSlotOfString } from "../known_strings";

/** What the proxy knows about a request once it is complete. */
export class ResponseView {
  /** Status the upstream (or a local reply) sent; -1 when none was sent. */
  code: i64 = -1;
  headers: StringMap = new StringMap(0);
  trailers: StringMap = new StringMap(0);
  requestBodySize: i64 = 0;
  responseBodySize: i64 = 0;
  requestTotalSize: i64 = 0;
  responseTotalSize: i64 = 0;
  /** Request start to completion; 0 when unknown. */
  durationNanos: i64 = 0;
  timeNanos: i64 = 0;
  /** Upstream host address `ip:port`, "" when there was none. */
  upstreamAddress: string = "";

  /** Back to an unknown outcome, keeping the header maps' storage (emptied) for the next request. */
  // @ts-ignore: decorator
  @inline reset(): void {
    // A module's maps are header maps (emptied without a virtual call); a test's may be any.
    emptyMap(this.headers);
    this.resetForHeaders();
  }

  /**
   * `reset`, but the headers are left as they are for the caller to fill
   * again at once (HeaderMap.fill finds a block the same as the last one
   * without reading it again).
   */
  // @ts-ignore: decorator
  @inline resetForHeaders(): void {
    this.code = -1;
    emptyMap(this.trailers);
    this.requestBodySize = 0;
    this.responseBodySize = 0;
    this.requestTotalSize = 0;
    this.responseTotalSize = 0;
    this.durationNanos = 0;
    this.timeNanos = 0;
    this.upstreamAddress = "";
  }
}

// @ts-ignore: decorator
@inline
function emptyMap(map: StringMap): void {
  if (map instanceof HeaderMap) (map as HeaderMap).empty();
  else map.clear();
}

/** How the check of this request ended, for check.* and response.code. */
export class CheckOutcome {
  /** False when no check ran (disabled, or the request never reached it). */
  known: bool = false;
  code: i32 = 0;
  message: string = "";
  checkCacheHit: bool = false;
  quotaCacheHit: bool = false;
}

const B3_HEADERS: StaticArray<string> = ["x-b3-traceid", "x-b3-spanid", "x-b3-parentspanid", "x-b3-sampled"];
// Header names looked up at every report, by their known-string slot (a
// header map finds those with one load; -1 would mean a name not known).
const B3_SLOTS: StaticArray<i32> = slotsOf(B3_HEADERS);
const GRPC_STATUS_SLOT = knownSlotOfString("grpc-status");
const GRPC_MESSAGE_SLOT = knownSlotOfString("grpc-message");

function slotsOf(names: StaticArray<string>): StaticArray<i32> {
  const slots = new StaticArray<i32>(names.length);
  for (let i = 0; i < names.length; i++) unchecked((slots[i] = knownSlotOfString(unchecked(names[i]))));
  return slots;
}

// Where header `name` (known-string slot `slot`) is in `map`, or -1.
// @ts-ignore: decorator
@inline
function headerIndex(map: StringMap, slot: i32, name: string): i32 {
  return slot >= 0 && map instanceof HeaderMap ? (map as HeaderMap).indexOfSlot(slot) : map.indexOf(name);
}

/**
 * Adds the report-time attributes to the check-time bag, as the upstream
 * client did at stream end (hub-client.md §2.6). The new values are made in
 * `values`, the request's own storage, and `response.headers` becomes the
 * value of `response.headers` (the trailers merged into it): the report is
 * encoded before the request's storage or the response view are reused.
 */
// @ts-ignore: decorator
@inline
export function addReportAttributes(bag: AttributeBag, response: ResponseView, check: CheckOutcome, requestHeaders: StringMap, values: RequestValues): void {
  // Only when not already present: inbound static attributes may set them.
  const needIp = !bag.hasId(DESTINATION_IP);
  const needPort = !bag.hasId(DESTINATION_PORT);
  if (response.upstreamAddress.length > 0 && (needIp || needPort)) {
    const addr = parseSocketAddress(response.upstreamAddress);
    if (addr.ip !== null && needIp) bag.setId(DESTINATION_IP, AttributeValue.ofBytes(addr.ip as Uint8Array));
    if (addr.port >= 0 && needPort) bag.setId(DESTINATION_PORT, values.int64(addr.port));
  }
  // Same-name trailers win.
  const responseHeaders = response.headers;
  const trailers = response.trailers;
  if (trailers.size > 0) {
    const keys = trailers.keys;
    const trailerValues = trailers.values;
    for (let i = 0, n = keys.length; i < n; i++) responseHeaders.set(unchecked(keys[i]), unchecked(trailerValues[i]));
  }
  bag.setId(RESPONSE_HEADERS, values.map(responseHeaders));

  // Tracing headers may have been added after the check; put them in the
  // request map (a copy: the check-time map stays as it was).
  // (The check's map is mostly the request's own map itself: then nothing was added.)
  const existing = bag.getId(REQUEST_HEADERS);
  if (existing !== null && existing.map !== null && existing.map !== requestHeaders && tracingHeadersDiffer(existing.map as StringMap, requestHeaders)) {
    const headers = (existing.map as StringMap).clone();
    for (let i = 0; i < B3_HEADERS.length; i++) {
      const v = requestHeaders.get(B3_HEADERS[i]);
      if (v !== null) headers.set(B3_HEADERS[i], v);
    }
    bag.setId(REQUEST_HEADERS, AttributeValue.ofMap(headers));
  }

  bag.setId(RESPONSE_TIME, values.timestampNanos(response.timeNanos));
  bag.setId(REQUEST_SIZE, values.int64(response.requestBodySize));
  bag.setId(RESPONSE_SIZE, values.int64(response.responseBodySize));
  bag.setId(REQUEST_TOTAL_SIZE, values.int64(response.requestTotalSize));
  bag.setId(RESPONSE_TOTAL_SIZE, values.int64(response.responseTotalSize));
  bag.setId(RESPONSE_DURATION, values.durationNanos(response.durationNanos));

  let code = response.code >= 0 ? response.code : 500;
  if (check.known && check.code != 0) {
    code = httpStatusForCode(check.code);
    bag.setId(CHECK_ERROR_CODE, values.int64(check.code));
    bag.setId(CHECK_ERROR_MESSAGE, values.string(statusCodeName(check.code) + ":" + check.message));
  }
  bag.setId(RESPONSE_CODE, values.int64(code));

  // The trailers were merged over the headers above. The values are read in place.
  const grpcStatus = headerIndex(responseHeaders, GRPC_STATUS_SLOT, "grpc-status");
  if (grpcStatus >= 0) bag.setId(RESPONSE_GRPC_STATUS, values.header(responseHeaders, grpcStatus));
  const grpcMessage = headerIndex(responseHeaders, GRPC_MESSAGE_SLOT, "grpc-message");
  if (grpcMessage >= 0) bag.setId(RESPONSE_GRPC_MESSAGE, values.header(responseHeaders, grpcMessage));

  if (check.known) {
    bag.setId(CHECK_CACHE_HIT, AttributeValue.ofBool(check.checkCacheHit));
    bag.setId(QUOTA_CACHE_HIT, AttributeValue.ofBool(check.quotaCacheHit));
  }
}

// Some tracing header of `requestHeaders` is missing from `map` or has another value there.
function tracingHeadersDiffer(map: StringMap, requestHeaders: StringMap): bool {
  for (let i = 0; i < B3_HEADERS.length; i++) {
    const name = unchecked(B3_HEADERS[i]);
    const slot = unchecked(B3_SLOTS[i]);
    const at = headerIndex(requestHeaders, slot, name);
    if (at < 0) continue;
    const knownAt = headerIndex(map, slot, name);
    if (knownAt < 0 || map.valueAt(knownAt) != requestHeaders.valueAt(at)) return true;
  }
  return false;
}
