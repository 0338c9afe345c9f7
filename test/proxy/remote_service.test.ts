import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseRemoteService } from "../../host/proxy/remote_service.ts";

describe("--proxyAccessLogService / --proxyMetricsService values", () => {
  it("host:port, [v6]:port and upstream's RemoteService JSON", () => {
    assert.deepEqual(parseRemoteService("--f", "als.mesh-system:15000"), { address: "als.mesh-system:15000" });
    assert.deepEqual(parseRemoteService("--f", "[::1]:9000"), { address: "[::1]:9000" });
    assert.deepEqual(parseRemoteService("--f", '{"address": "127.0.0.1:9000", "tlsSettings": {"mode": "DISABLE"}}'), { address: "127.0.0.1:9000" });
  });

  it("refuses what it cannot honour, naming the flag and the field", () => {
    assert.throws(() => parseRemoteService("--proxyMetricsService", "nowhere"), /^Error: --proxyMetricsService: expected host:port/);
    assert.throws(() => parseRemoteService("--f", "host:99999"), /expected host:port/);
    assert.throws(() => parseRemoteService("--f", '{"address": "a:1", "tlsSettings": {"mode": "ISTIO_MUTUAL"}}'), /--f: tlsSettings is not supported/);
    assert.throws(() => parseRemoteService("--f", '{"address": "a:1", "tcpKeepalive": {"time": "10s"}}'), /tcpKeepalive is not supported/);
    assert.throws(() => parseRemoteService("--f", '{"adress": "a:1"}'), /unknown field "adress"/);
    assert.throws(() => parseRemoteService("--f", "{bad"), /--f: not valid JSON/);
  });
});
