import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { httpAccessLogEntry } from "../../host/proxy/access_log_service.ts";
import type { AccessRecord } from "../../host/proxy/http/connection_manager.ts";
import { envoyRoot } from "../support/envoy_protos.ts";

// The access log entry of a request an AUDIT AuthorizationPolicy matched
// carries upstream's RBAC LOG mark, as Envoy's gRPC access log would send it.

const record: AccessRecord = {
  listener: "inbound",
  startedAt: 1_700_000_000_123,
  durationNs: 2_500_000n,
  downstreamRemote: { address: "127.0.0.1", port: 40000 },
  downstreamLocal: { address: "127.0.0.1", port: 15006 },
  httpVersion: "1.1",
  method: "GET",
  path: "/admin/users",
  authority: "httpbin.foo:8000",
  headers: {},
  status: 200,
  requestBodyBytes: 0,
  responseBodyBytes: 12,
};

describe("HTTPAccessLogEntry and AUDIT", () => {
  it("an audited request carries filter_metadata envoy.common access_log_hint: true; others carry no metadata; both go through Envoy's protos", () => {
    // The entry is in the object form the gRPC stream encodes with these protos (the proto's field names, Struct as a message).
    const type = envoyRoot().lookupType("envoy.data.accesslog.v3.HTTPAccessLogEntry");
    const audited = httpAccessLogEntry({ ...record, accessLogHint: true }) as { common_properties: Record<string, unknown> };
    const bytes = type.encode(type.fromObject(audited)).finish();
    const back = type.toObject(type.decode(bytes)) as {
      common_properties: { metadata: { filter_metadata: Record<string, { fields: Record<string, { boolValue?: boolean }> }> } };
    };
    assert.equal(back.common_properties.metadata.filter_metadata["envoy.common"].fields.access_log_hint.boolValue, true);
    const plain = httpAccessLogEntry(record) as { common_properties: Record<string, unknown> };
    assert.equal(plain.common_properties.metadata, undefined);
  });
});
