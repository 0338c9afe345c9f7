// What one failed attempt of a hub call means: the status the filter sees and
// whether the transport tries again (hub-client §6.4).
//
// Messages. The module classifies transport failures for its counters by the
// texts Envoy's async gRPC client produced (assembly/client/counters.ts
// transportOutcome): UNAVAILABLE starting with `upstream request timeout` is
// a timeout, with `upstream connect error or disconnect/reset before headers`
// a send error, anything else "other". So an attempt that ran out of time
// becomes UNAVAILABLE `upstream request timeout`, and a call that failed
// before the hub sent anything (refused, reset, no route, TLS/HTTP/2 failure)
// becomes UNAVAILABLE `upstream connect error or disconnect/reset before
// headers. reset reason: connection failure, transport failure reason:
// <details>`. A status the hub itself sent passes through unchanged.
//
// Retries. Upstream re-sent the request on any non-OK status of the call. We
// retry only statuses that say nothing final about the request:
//   UNAVAILABLE, DEADLINE_EXCEEDED (and our own deadline), CANCELLED (not by
//   us: a peer reset or GOAWAY), ABORTED, INTERNAL, UNKNOWN
// (HTTP/2 protocol errors and unexpected HTTP statuses map to
// INTERNAL/UNKNOWN, grpc_wire.ts; a hub under load sheds with UNAVAILABLE). Every other code
// — INVALID_ARGUMENT, PERMISSION_DENIED, UNAUTHENTICATED, NOT_FOUND,
// UNIMPLEMENTED, RESOURCE_EXHAUSTED (message too large), FAILED_PRECONDITION,
// OUT_OF_RANGE, ALREADY_EXISTS, DATA_LOSS — is the hub's (or the protocol's)
// verdict on these exact bytes; re-sending the same bytes gets the same
// answer, so it is returned at once. In particular INVALID_ARGUMENT `Request
// could not be processed due to invalid …` must reach the module promptly: it
// shrinks its dictionary on it.

import { GRPC_CODES } from "../wire/status_codes.ts";

/** Envoy's message for a request whose deadline passed (router `upstream request timeout`). */
export const TIMEOUT_PREFIX = "upstream request timeout";
/** Envoy's message for a request that failed before response headers. */
export const CONNECT_ERROR_PREFIX = "upstream connect error or disconnect/reset before headers";

/** Codes that count as transport errors and are retried (see the file header). */
export const RETRYABLE_CODES: ReadonlySet<number> = new Set([
  GRPC_CODES.CANCELLED,
  GRPC_CODES.UNKNOWN,
  GRPC_CODES.DEADLINE_EXCEEDED,
  GRPC_CODES.ABORTED,
  GRPC_CODES.INTERNAL,
  GRPC_CODES.UNAVAILABLE,
]);

/** How one attempt ended, as the transport saw it. */
export interface AttemptEnd {
  /** gRPC status code of the attempt. */
  code: number;
  /** Its details text. */
  details: string;
  /** True when the hub sent anything (response headers, or a trailers-only status). */
  answered: boolean;
  /** True when the transport's own per-attempt deadline fired. */
  timedOut: boolean;
}

/** The status handed to the filter for a failed attempt, and whether to try again. */
export interface AttemptStatus {
  code: number;
  message: string;
  retryable: boolean;
}

/**
 * Classifies a failed attempt.
 *
 * @example attemptStatus({ code: 14, details: "No connection established", answered: false, timedOut: false })
 * // { code: 14, message: "upstream connect error or disconnect/reset before headers. reset reason: connection failure, transport failure reason: No connection established", retryable: true }
 */
export function attemptStatus(end: AttemptEnd): AttemptStatus {
  if (end.timedOut || end.code === GRPC_CODES.DEADLINE_EXCEEDED) {
    return { code: GRPC_CODES.UNAVAILABLE, message: TIMEOUT_PREFIX, retryable: true };
  }
  if (!end.answered && RETRYABLE_CODES.has(end.code)) {
    // grpc-js appended "Resolution note: " even when it had none to give; such texts may still be passed in.
    const reason = end.details.replace(/\. Resolution note: $/, "") || `gRPC status ${end.code}`;
    return {
      code: GRPC_CODES.UNAVAILABLE,
      message: `${CONNECT_ERROR_PREFIX}. reset reason: connection failure, transport failure reason: ${reason}`,
      retryable: true,
    };
  }
  return { code: end.code, message: end.details, retryable: RETRYABLE_CODES.has(end.code) };
}
