import assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, describe, it } from "node:test";
import { type LocalMesh, startLocalMesh } from "../../host/demo/local_mesh.ts";
import { accessLogLines, stats, waitFor } from "./sidecar_support.ts";

function tcpConfig(): string {
  return `apiVersion: config.mesh.io/v1alpha2
kind: HttpClientConfig
metadata: {name: sidecar, namespace: demo}
spec: {}
`;
}

// The TCP mode rides in the same plugin configuration as a TcpClientConfig;
// the sidecar's config loader passes it through as tcpClientConfig.
const TCP_CLIENT = `---
apiVersion: config.mesh.io/v1alpha2
kind: TcpClientConfig
metadata: {name: tcp, namespace: demo}
spec:
  hubAttributes: {attributes: {destination.service.host: {stringValue: echo.demo.svc.cluster.local}}}
  reportInterval: 1s
  transport: {statsUpdateInterval: 0.1s, reportBatchMaxTime: 0.1s}
  connectionQuotaSpec:
    rules: [{quotas: [{quota: connections, charge: 1}]}]
`;

const DENY_TCP = `apiVersion: config.mesh.io/v1alpha2
kind: HubRule
metadata: {name: no-tcp, namespace: mesh-system}
spec:
  match: [{clause: {context.protocol: {exact: tcp}}}]
  actions: [{deny: {code: PERMISSION_DENIED, message: "no tcp"}}]
`;

/** Sends `text` and collects what comes back until the server closes or `ms` pass. */
function exchange(port: number, text: string, ms = 1500): Promise<{ received: string; closedByPeer: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    let closedByPeer = false;
    socket.on("data", (c) => {
      received += c.toString();
      if (received.length >= text.length) socket.end();
    });
    socket.on("end", () => {
      closedByPeer = received.length < text.length;
    });
    socket.on("close", () => resolve({ received, closedByPeer }));
    socket.on("error", (e) => ((e as NodeJS.ErrnoException).code === "ECONNRESET" ? resolve({ received, closedByPeer: true }) : reject(e)));
    socket.write(text);
    setTimeout(() => socket.destroy(), ms).unref();
  });
}

describe("sidecar TCP mode end to end", () => {
  let mesh: LocalMesh;
  before(async () => {
    mesh = await startLocalMesh({ tcp: true, hubConfig: "", sidecarConfig: tcpConfig() + TCP_CLIENT });
  });
  after(async () => {
    await mesh?.stop();
  });

  it("an allowed connection carries bytes both ways", async () => {
    const result = await exchange(mesh.sidecar.listening.tcp, "hello over tcp");
    assert.equal(result.received, "hello over tcp");
  });

  it("reports the connection's open and close with byte counts", async () => {
    const lines = await waitFor("tcp reports in the access log", () => {
      const l = accessLogLines(mesh.accessLog).filter((x) => x.attributes["context.protocol"]?.stringValue === "tcp");
      return l.some((x) => x.attributes["connection.event"]?.stringValue === "close") ? l : undefined;
    });
    const events = lines.map((x) => x.attributes["connection.event"].stringValue);
    assert.ok(events.includes("open"), events.join(","));
    const close = lines.find((x) => x.attributes["connection.event"].stringValue === "close")!;
    assert.deepEqual(close.attributes["connection.received.bytes_total"], { int64Value: "14" });
    assert.deepEqual(close.attributes["connection.sent.bytes_total"], { int64Value: "14" });
    const s = await stats(mesh.adminUrl);
    assert.ok((s.get("listener.tcp.connections") ?? 0) >= 1);
  });
});

describe("sidecar TCP mode: a denied connection", () => {
  let mesh: LocalMesh;
  before(async () => {
    mesh = await startLocalMesh({ tcp: true, hubConfig: DENY_TCP, sidecarConfig: tcpConfig() + TCP_CLIENT });
  });
  after(async () => {
    await mesh?.stop();
  });

  it("is closed without forwarding anything", async () => {
    const result = await exchange(mesh.sidecar.listening.tcp, "should not pass");
    assert.equal(result.received, "");
    const s = await waitFor("the denial in /stats", async () => {
      const m = await stats(mesh.adminUrl);
      return (m.get("listener.tcp.denied") ?? 0) >= 1 ? m : undefined;
    });
    assert.equal(s.get("listener.tcp.denied"), 1);
  });
});
