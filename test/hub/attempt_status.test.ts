// How a failed attempt is classified: the status the module sees (with the
// message prefixes its counters key on) and whether it is retried.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { attemptStatus, CONNECT_ERROR_PREFIX, RETRYABLE_CODES, TIMEOUT_PREFIX } from "../../host/hub/attempt_status.ts";
import { GRPC_CODES, GRPC_CODE_NAMES } from "../../host/wire/status_codes.ts";

const CONNECT = `${CONNECT_ERROR_PREFIX}. reset reason: connection failure, transport failure reason: `;

describe("attemptStatus", () => {
  const rows: Array<[string, Parameters<typeof attemptStatus>[0], ReturnType<typeof attemptStatus>]> = [
    [
      "our deadline fired",
      { code: GRPC_CODES.CANCELLED, details: "Cancelled on client", answered: false, timedOut: true },
      { code: GRPC_CODES.UNAVAILABLE, message: TIMEOUT_PREFIX, retryable: true },
    ],
    [
      "our deadline fired after headers",
      { code: GRPC_CODES.CANCELLED, details: "Cancelled on client", answered: true, timedOut: true },
      { code: GRPC_CODES.UNAVAILABLE, message: TIMEOUT_PREFIX, retryable: true },
    ],
    [
      "grpc-js deadline",
      { code: GRPC_CODES.DEADLINE_EXCEEDED, details: "Deadline exceeded", answered: false, timedOut: false },
      { code: GRPC_CODES.UNAVAILABLE, message: TIMEOUT_PREFIX, retryable: true },
    ],
    [
      "hub's own deadline",
      { code: GRPC_CODES.DEADLINE_EXCEEDED, details: "too slow", answered: true, timedOut: false },
      { code: GRPC_CODES.UNAVAILABLE, message: TIMEOUT_PREFIX, retryable: true },
    ],
    [
      "refused",
      {
        code: GRPC_CODES.UNAVAILABLE,
        details: "No connection established. Last error: Error: connect ECONNREFUSED 127.0.0.1:1. Resolution note: ",
        answered: false,
        timedOut: false,
      },
      { code: GRPC_CODES.UNAVAILABLE, message: `${CONNECT}No connection established. Last error: Error: connect ECONNREFUSED 127.0.0.1:1`, retryable: true },
    ],
    [
      "reset before headers",
      { code: GRPC_CODES.INTERNAL, details: "Received RST_STREAM with code 2", answered: false, timedOut: false },
      { code: GRPC_CODES.UNAVAILABLE, message: `${CONNECT}Received RST_STREAM with code 2`, retryable: true },
    ],
    [
      "peer cancel before headers",
      { code: GRPC_CODES.CANCELLED, details: "", answered: false, timedOut: false },
      { code: GRPC_CODES.UNAVAILABLE, message: `${CONNECT}gRPC status 1`, retryable: true },
    ],
    [
      "hub sheds load",
      { code: GRPC_CODES.UNAVAILABLE, details: "hub is overloaded", answered: true, timedOut: false },
      { code: GRPC_CODES.UNAVAILABLE, message: "hub is overloaded", retryable: true },
    ],
    [
      "hub handler bug",
      { code: GRPC_CODES.INTERNAL, details: "internal error: x", answered: true, timedOut: false },
      { code: GRPC_CODES.INTERNAL, message: "internal error: x", retryable: true },
    ],
    [
      "hub rejects the bytes",
      { code: GRPC_CODES.INVALID_ARGUMENT, details: "Request could not be processed due to invalid attributes", answered: true, timedOut: false },
      { code: GRPC_CODES.INVALID_ARGUMENT, message: "Request could not be processed due to invalid attributes", retryable: false },
    ],
    [
      "message too large",
      { code: GRPC_CODES.RESOURCE_EXHAUSTED, details: "Received message larger than max", answered: false, timedOut: false },
      { code: GRPC_CODES.RESOURCE_EXHAUSTED, message: "Received message larger than max", retryable: false },
    ],
  ];
  for (const [name, end, expected] of rows) {
    it(name, () => assert.deepEqual(attemptStatus(end), expected));
  }

  it("retries exactly CANCELLED, UNKNOWN, DEADLINE_EXCEEDED, ABORTED, INTERNAL, UNAVAILABLE", () => {
    const retried = GRPC_CODE_NAMES.filter((n) => RETRYABLE_CODES.has(GRPC_CODES[n])).sort();
    assert.deepEqual(retried, ["ABORTED", "CANCELLED", "DEADLINE_EXCEEDED", "INTERNAL", "UNAVAILABLE", "UNKNOWN"]);
    for (const n of GRPC_CODE_NAMES) {
      if (n === "OK") continue;
      const s = attemptStatus({ code: GRPC_CODES[n], details: "x", answered: true, timedOut: false });
      assert.equal(s.retryable, RETRYABLE_CODES.has(GRPC_CODES[n]), n);
    }
  });
});
