// The google.rpc codes, their names and their HTTP statuses: below the
// attributes (a report names its check's code) and the hub's wire formats.

/** google.rpc.Code numbers (google/rpc/code.proto). */
export const enum StatusCode {
  OK = 0,
  CANCELLED = 1,
  UNKNOWN = 2,
  INVALID_ARGUMENT = 3,
  DEADLINE_EXCEEDED = 4,
  NOT_FOUND = 5,
  ALREADY_EXISTS = 6,
  PERMISSION_DENIED = 7,
  RESOURCE_EXHAUSTED = 8,
  FAILED_PRECONDITION = 9,
  ABORTED = 10,
  OUT_OF_RANGE = 11,
  UNIMPLEMENTED = 12,
  INTERNAL = 13,
  UNAVAILABLE = 14,
  DATA_LOSS = 15,
  UNAUTHENTICATED = 16,
}

// Indexed by code.
const NAMES: StaticArray<string> = [
  "OK",
  "CANCELLED",
  "UNKNOWN",
  "INVALID_ARGUMENT",
  "DEADLINE_EXCEEDED",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
  "FAILED_PRECONDITION",
  "ABORTED",
  "OUT_OF_RANGE",
  "UNIMPLEMENTED",
  "INTERNAL",
  "UNAVAILABLE",
  "DATA_LOSS",
  "UNAUTHENTICATED",
];

// Indexed by code; upstream src/istio/utils/status.cc (hub-client.md §2.8).
// 499 for CANCELLED is nginx's "client closed request", as upstream.
const HTTP: StaticArray<i32> = [200, 499, 500, 400, 504, 404, 409, 403, 429, 400, 409, 400, 501, 500, 503, 500, 401];

/** `"PERMISSION_DENIED"` for 7; `"CODE_<n>"` outside the table (as host/wire/status_codes.ts). */
export function statusCodeName(code: i32): string {
  if (code >= 0 && code < NAMES.length) return unchecked(NAMES[code]);
  return "CODE_" + code.toString();
}

/** The HTTP status of a local reply for a google.rpc code: 7 -> 403; unknown codes -> 500. */
export function httpStatusForCode(code: i32): i32 {
  if (code >= 0 && code < HTTP.length) return unchecked(HTTP[code]);
  return 500;
}
