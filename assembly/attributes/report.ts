import { httpStatusForCode, statusCodeName } from "../hub/status";
import { parseSocketAddress } from "./address";
import { AttributeBag } from "./bag";
import { StringMap } from "./string_map";
import {
  CHECK_CACHE_HIT, CHECK_ERROR_CODE, CHECK_ERROR_MESSAGE, DESTINATION_IP, DESTINATION_PORT, QUOTA_CACHE_HIT, REQUEST_HEADERS, REQUEST_SIZE,
  REQUEST_TOTAL_SIZE, RESPONSE_CODE, RESPONSE_DURATION, RESPONSE_GRPC_MESSAGE, RESPONSE_GRPC_STATUS, RESPONSE_HEADERS, RESPONSE_SIZE,
  RESPONSE_TIME, RESPONSE_TOTAL_SIZE,
} from "./names";
import { AttributeValue } from "./value";

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

/**
 * Adds the report-time attributes to a copy of the check-time bag, as the
 * upstream client did at stream end (hub-client.md §2.6).
 */
export function addReportAttributes(bag: AttributeBag, response: ResponseView, check: CheckOutcome, requestHeaders: StringMap): void {
  if (response.upstreamAddress.length > 0) {
    const addr = parseSocketAddress(response.upstreamAddress);
    // Only when not already present: inbound static attributes may set them.
    if (addr.ip !== null && !bag.hasId(DESTINATION_IP)) bag.setId(DESTINATION_IP, AttributeValue.ofBytes(addr.ip as Uint8Array));
    if (addr.port >= 0 && !bag.hasId(DESTINATION_PORT)) bag.setId(DESTINATION_PORT, AttributeValue.ofInt64(addr.port));
  }
  const responseHeaders = response.headers.clone();
  for (let i = 0; i < response.trailers.keys.length; i++) responseHeaders.set(response.trailers.keys[i], response.trailers.values[i]);
  bag.setId(RESPONSE_HEADERS, AttributeValue.ofMap(responseHeaders));

  // Tracing headers may have been added after the check; put them in the
  // request map (a copy: the check-time map stays as it was).
  const existing = bag.getId(REQUEST_HEADERS);
  if (existing !== null && existing.map !== null && tracingHeadersDiffer(existing.map as StringMap, requestHeaders)) {
    const headers = (existing.map as StringMap).clone();
    for (let i = 0; i < B3_HEADERS.length; i++) {
      const v = requestHeaders.get(B3_HEADERS[i]);
      if (v !== null) headers.set(B3_HEADERS[i], v);
    }
    bag.setId(REQUEST_HEADERS, AttributeValue.ofMap(headers));
  }

  bag.setId(RESPONSE_TIME, AttributeValue.ofTimestampNanos(response.timeNanos));
  bag.setId(REQUEST_SIZE, AttributeValue.ofInt64(response.requestBodySize));
  bag.setId(RESPONSE_SIZE, AttributeValue.ofInt64(response.responseBodySize));
  bag.setId(REQUEST_TOTAL_SIZE, AttributeValue.ofInt64(response.requestTotalSize));
  bag.setId(RESPONSE_TOTAL_SIZE, AttributeValue.ofInt64(response.responseTotalSize));
  bag.setId(RESPONSE_DURATION, AttributeValue.ofDurationNanos(response.durationNanos));

  let code = response.code >= 0 ? response.code : 500;
  if (check.known && check.code != 0) {
    code = httpStatusForCode(check.code);
    bag.setId(CHECK_ERROR_CODE, AttributeValue.ofInt64(check.code));
    bag.setIdString(CHECK_ERROR_MESSAGE, statusCodeName(check.code) + ":" + check.message);
  }
  bag.setId(RESPONSE_CODE, AttributeValue.ofInt64(code));

  const grpcStatus = response.trailers.has("grpc-status") ? response.trailers.get("grpc-status") : response.headers.get("grpc-status");
  if (grpcStatus !== null) bag.setIdString(RESPONSE_GRPC_STATUS, grpcStatus as string);
  const grpcMessage = response.trailers.has("grpc-message") ? response.trailers.get("grpc-message") : response.headers.get("grpc-message");
  if (grpcMessage !== null) bag.setIdString(RESPONSE_GRPC_MESSAGE, grpcMessage as string);

  if (check.known) {
    bag.setId(CHECK_CACHE_HIT, AttributeValue.ofBool(check.checkCacheHit));
    bag.setId(QUOTA_CACHE_HIT, AttributeValue.ofBool(check.quotaCacheHit));
  }
}

// Some tracing header of `requestHeaders` is missing from `map` or has another value there.
function tracingHeadersDiffer(map: StringMap, requestHeaders: StringMap): bool {
  for (let i = 0; i < B3_HEADERS.length; i++) {
    const v = requestHeaders.get(B3_HEADERS[i]);
    if (v === null) continue;
    const known = map.get(B3_HEADERS[i]);
    if (known === null || known != v) return true;
  }
  return false;
}
