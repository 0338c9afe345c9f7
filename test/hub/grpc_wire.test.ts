// The gRPC wire rules of hub calls as pure functions: deadline units,
// metadata validation, response framing, status from trailers.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { grpcTimeout, httpStatusToGrpc, metadataHeaders, trailerStatus, unaryResponseMessage } from "../../host/hub/grpc_wire.ts";
import { GRPC_CODES } from "../../host/wire/status_codes.ts";

describe("gRPC wire rules of hub calls", () => {
  it("grpc-timeout: milliseconds while they fit in 8 digits, then seconds, then hours (rounded up)", () => {
    assert.equal(grpcTimeout(5000), "5000m");
    assert.equal(grpcTimeout(0.2), "1m");
    assert.equal(grpcTimeout(99_999_999), "99999999m");
    assert.equal(grpcTimeout(100_000_000), "100000S");
    assert.equal(grpcTimeout(1e11 + 1), "27778H");
  });

  it("metadata: keys lower-cased, the retry policy dropped, -bin base64, repeated keys kept; illegal keys and values refused", () => {
    assert.deepEqual(
      metadataHeaders([
        ["X-Request-Id", "a"],
        ["x-mesh-retry-policy", "max-retry=1"],
        ["x-b-bin", "\x00\xff"],
        ["x-r", "1"],
        ["x-r", "2"],
      ]),
      { "x-request-id": "a", "x-b-bin": "AP8=", "x-r": ["1", "2"] },
    );
    assert.throws(() => metadataHeaders([["x key", "v"]]), /metadata key "x key" contains characters gRPC does not allow/);
    assert.throws(() => metadataHeaders([["connection", "close"]]), /connection-specific header/);
    assert.throws(() => metadataHeaders([["x-a", "line\nbreak"]]), /outside printable ASCII/);
  });

  it("a unary response has exactly one uncompressed, complete message", () => {
    const ok = unaryResponseMessage(Buffer.from([0, 0, 0, 0, 2, 8, 1]));
    assert.deepEqual("message" in ok && [...ok.message], [8, 1]);
    assert.deepEqual(unaryResponseMessage(Buffer.from([0, 0, 0, 0, 3, 8, 1])), {
      status: { code: GRPC_CODES.INTERNAL, details: "Response ended inside a message (2 of 3 bytes)" },
    });
    assert.deepEqual(unaryResponseMessage(Buffer.from([0, 0, 0])), {
      status: { code: GRPC_CODES.INTERNAL, details: "Response ended inside a message prefix (3 of 5 bytes)" },
    });
  });

  it("status: grpc-status wins over the HTTP status; without it the HTTP status maps; neither is UNKNOWN", () => {
    assert.deepEqual(trailerStatus({ "grpc-status": "3", "grpc-message": "bad%25arg" }, 200), { code: 3, details: "bad%arg" });
    assert.deepEqual(trailerStatus({ "grpc-status": "14" }, 503), { code: 14, details: "" });
    assert.deepEqual(trailerStatus({ "grpc-message": "%zz", "grpc-status": "2" }, 200), { code: 2, details: "%zz" });
    assert.deepEqual(trailerStatus({}, 502), httpStatusToGrpc(502));
    assert.deepEqual(trailerStatus({}, 200), { code: GRPC_CODES.UNKNOWN, details: "No status information received" });
    assert.equal(trailerStatus({ "grpc-status": "banana" }, 200).code, GRPC_CODES.UNKNOWN);
  });
});
