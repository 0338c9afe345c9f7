// --proxyAccessLogService and --proxyMetricsService on real processes: a `disco-agent proxy` in front of
// the echo app streams to real gRPC servers implementing Envoy's AccessLogService and MetricsService
// (envoy.service.accesslog.v3 / envoy.service.metrics.v3, from the protos @grpc/grpc-js-xds ships).
import * as grpc from "@grpc/grpc-js";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { after, before, describe, it } from "node:test";
import { type LocalMesh, startLocalMesh } from "../../host/demo/local_mesh.ts";
import { ACCESS_LOG_SERVICE, METRICS_SERVICE, envoyService } from "../../host/wire/envoy_grpc.ts";
import { HUB_RULES, get, sidecarConfig, waitFor } from "./sidecar_support.ts";

type Message = Record<string, any>;

/** A gRPC server with both sinks, recording every message of every stream. */
async function startSinks(): Promise<{ server: grpc.Server; address: string; accessLogs: Message[][]; metrics: Message[][] }> {
  const server = new grpc.Server();
  const accessLogs: Message[][] = [];
  const metrics: Message[][] = [];
  const record = (streams: Message[][]) => (call: grpc.ServerReadableStream<Message, Message>, callback: grpc.sendUnaryData<Message>) => {
    const messages: Message[] = [];
    streams.push(messages);
    call.on("data", (m: Message) => messages.push(m));
    call.on("end", () => callback(null, {}));
    call.on("error", () => undefined);
  };
  server.addService(envoyService(ACCESS_LOG_SERVICE.file, ACCESS_LOG_SERVICE.service).service, { StreamAccessLogs: record(accessLogs) });
  server.addService(envoyService(METRICS_SERVICE.file, METRICS_SERVICE.service).service, { StreamMetrics: record(metrics) });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  return { server, address: `127.0.0.1:${port}`, accessLogs, metrics };
}

describe("disco-agent --proxyAccessLogService, --proxyMetricsService", () => {
  let sinks: Awaited<ReturnType<typeof startSinks>>;
  let mesh: LocalMesh;
  before(async () => {
    sinks = await startSinks();
    mesh = await startLocalMesh({
      hubConfig: HUB_RULES,
      sidecarConfig: sidecarConfig("FAIL_OPEN"),
      agentArgs: ["--proxyAccessLogService", sinks.address, "--proxyMetricsService", JSON.stringify({ address: sinks.address })],
    });
  });
  after(async () => {
    await mesh?.stop();
    sinks?.server.forceShutdown();
  });

  const entries = () => sinks.accessLogs.flat().flatMap((m) => (m.http_logs?.log_entry ?? []) as Message[]);

  it("streams an HTTPAccessLogEntry per request, the first message of the stream naming the node and the log", async () => {
    assert.equal((await get(`${mesh.inboundUrl}/pets/1?x=1`, { "user-agent": "als-test", "x-request-id": "req-1" })).status, 200);
    assert.equal((await get(`${mesh.inboundUrl}/admin/users`)).status, 403);
    const ok = await waitFor("the entry of GET /pets/1", () => entries().find((e) => e.request?.path === "/pets/1?x=1"));
    const denied = await waitFor("the entry of GET /admin/users", () => entries().find((e) => e.request?.path === "/admin/users"));
    const first = sinks.accessLogs.find((s) => s.length > 0)![0];
    assert.match(first.identifier.node.id, /^sidecar~/);
    assert.equal(first.identifier.node.cluster, "mesh-proxy");
    assert.equal(first.identifier.log_name, "http_envoy_accesslog");
    assert.ok(
      sinks.accessLogs
        .flat()
        .slice(1)
        .every((m) => m.identifier === undefined || sinks.accessLogs.some((s) => s[0] === m)),
      "the identifier only on a stream's first message",
    );

    assert.equal(ok.protocol_version, "HTTP11");
    assert.equal(ok.request.request_method, "GET");
    assert.equal(ok.request.scheme, "http");
    assert.equal(ok.request.user_agent, "als-test");
    assert.equal(ok.request.request_id, "req-1");
    assert.equal(ok.response.response_code.value, 200);
    assert.ok(Number(ok.response.response_body_bytes) > 0);
    assert.equal(ok.response.response_code_details, "via_upstream");
    assert.equal(ok.common_properties.downstream_remote_address.socket_address.address, "127.0.0.1");
    assert.equal(ok.common_properties.upstream_remote_address.socket_address.address, "127.0.0.1");
    assert.ok(Number(ok.common_properties.start_time.seconds) * 1000 <= Date.now());
    assert.ok(ok.common_properties.duration !== undefined);

    assert.equal(denied.response.response_code.value, 403);
    assert.equal(denied.common_properties.upstream_remote_address, undefined, "the hub denied it: no upstream was called");
  });

  it("the proxy's own answers carry Envoy's response flags and details (outbound listener, upstream refusing connections)", async () => {
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, "127.0.0.1", () => {
        const port = (probe.address() as { port: number }).port;
        probe.close(() => resolve(port));
      });
    });
    assert.equal((await get(`http://127.0.0.1:${mesh.sidecar.listening.outbound}/refused`, { host: `127.0.0.1:${closed}` })).status, 503);
    const entry = await waitFor("the entry of GET /refused", () => entries().find((e) => e.request?.path === "/refused"));
    assert.equal(entry.response.response_code.value, 503);
    assert.equal(entry.response.response_code_details, "upstream_connect_error");
    assert.deepEqual(entry.common_properties.response_flags, { upstream_connection_failure: true });
    assert.equal(entry.request.authority, `127.0.0.1:${closed}`);
    assert.equal(entry.request.port.value, closed);
  });

  it("streams the sidecar's stats as Prometheus-model MetricFamily messages every flush", async () => {
    const families = (m: Message) => (m.envoy_metrics ?? []) as Message[];
    const requests = () =>
      sinks.metrics
        .flat()
        .flatMap(families)
        .filter((f) => f.name === "listener.inbound.requests");
    // The requests of the test above, once a flush after them carries them.
    const family = await waitFor("listener.inbound.requests counted", () => requests().find((f) => Number(f.metric[0].counter.value) >= 2));
    assert.equal(family.type, "COUNTER");
    assert.ok(Number(family.metric[0].timestamp_ms) > 0);
    const gauge = sinks.metrics
      .flat()
      .flatMap(families)
      .find((f) => f.name === "listener.inbound.active");
    assert.equal(gauge?.type, "GAUGE");
    const first = sinks.metrics.find((s) => s.length > 0)![0];
    assert.match(first.identifier.node.id, /^sidecar~/);
    // Counters are cumulative (Envoy's default), so a later flush never reports less.
    const values = requests().map((f) => Number(f.metric[0].counter.value));
    assert.deepEqual(
      values,
      [...values].sort((a, b) => a - b),
    );
  });
});
