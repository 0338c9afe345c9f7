// HubTransport against a real `hubs server` process: Check and Report carried
// as opaque bytes, a hub INVALID_ARGUMENT answered at once, and a hub stopped
// and restarted on the same port found again by the same channel.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { CONNECT_ERROR_PREFIX } from "../../host/hub/attempt_status.ts";
import { parseClusters } from "../../host/hub/clusters.ts";
import { HubTransport } from "../../host/hub/transport.ts";
import { messageType } from "../../host/wire/protos.ts";
import { GRPC_CODES } from "../../host/wire/status_codes.ts";
import { checkRequest, metricsText, metricValue, reportRequest, startHub, tempDir, writeConfig, type HubProcess } from "../hubs/support/hub_process.ts";
import { grpcCall, retryPolicy } from "./support/peers.ts";

const RULES = `
apiVersion: config.mesh.io/v1alpha2
kind: HubRule
metadata: {name: deny-admin}
spec:
  match:
  - clause:
      request.path: {prefix: /admin}
  actions:
  - deny: {code: PERMISSION_DENIED, message: "admins only"}
`;

const encode = (type: string, object: object): Uint8Array => {
  const t = messageType(type);
  return t.encode(t.fromObject(object)).finish();
};
const decodeCheck = (bytes: Uint8Array) => {
  const t = messageType("mesh.hub.v1.CheckResponse");
  return t.toObject(t.decode(bytes), { longs: Number }) as { precondition: { status?: { code?: number; message?: string } } };
};

describe("HubTransport with a real hubs server", () => {
  let hub: HubProcess;
  let transport: HubTransport;
  let configDir: string;

  before(async () => {
    configDir = tempDir("hub-transport-");
    writeConfig(configDir, "rules.yaml", RULES);
    hub = await startHub(["--configStoreURL", `fs://${configDir}`]);
    transport = new HubTransport({ clusters: parseClusters([`hub_server=${hub.listeners.grpc}`]) });
  });
  after(async () => {
    transport.close();
    await hub.stop();
  });

  it("Check: the module's bytes reach the hub and its answer comes back undecoded", async () => {
    const allowed = await transport.call(
      grpcCall({ message: encode("mesh.hub.v1.CheckRequest", checkRequest({ "request.path": "/home" }, {}, { deduplicationId: "r-1" })) }),
    );
    assert.equal(allowed.ok, true, JSON.stringify(allowed));
    assert.equal(allowed.attempts, 1);
    assert.equal(decodeCheck(allowed.ok ? allowed.message : new Uint8Array()).precondition.status?.code ?? 0, 0);

    const denied = await transport.call(
      grpcCall({ message: encode("mesh.hub.v1.CheckRequest", checkRequest({ "request.path": "/admin/users" }, {}, { deduplicationId: "r-2" })) }),
    );
    assert.equal(denied.ok, true, "a denial travels inside a successful response");
    const status = decodeCheck(denied.ok ? denied.message : new Uint8Array()).precondition.status;
    assert.deepEqual([status?.code, status?.message], [GRPC_CODES.PERMISSION_DENIED, "admins only"]);
  });

  it("Report: accepted with an empty ReportResponse", async () => {
    const result = await transport.call(
      grpcCall({ method: "Report", message: encode("mesh.hub.v1.ReportRequest", reportRequest([{ "request.path": "/a" }, { "request.path": "/b" }])) }),
    );
    assert.deepEqual(result, { ok: true, message: new Uint8Array(), attempts: 1 });
    const text = await metricsText(hub);
    assert.equal(metricValue(text, 'grpc_server_handled_total{grpc_type="unary",grpc_service="mesh.hub.v1.Hub",grpc_method="Report",grpc_code="OK"}'), 1);
  });

  it("a malformed request: the hub's INVALID_ARGUMENT is returned after one attempt despite maxRetry 3", async () => {
    const result = await transport.call(grpcCall({ message: new Uint8Array([0xff, 0xff, 0xff]), metadata: [retryPolicy(3)] }));
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.code, GRPC_CODES.INVALID_ARGUMENT);
    assert.equal(result.attempts, 1);
  });

  it("hub stopped → connect errors; hub restarted on the same port → the same channel recovers", async () => {
    const address = hub.listeners.grpc;
    const check = () =>
      transport.call(grpcCall({ message: encode("mesh.hub.v1.CheckRequest", checkRequest({ "request.path": "/home" })), metadata: [retryPolicy(1, 20, 20)] }));
    assert.equal((await check()).ok, true);
    await hub.stop();

    const down = await check();
    assert.equal(down.ok, false);
    assert.equal(down.attempts, 2);
    assert.ok(!down.ok && down.message.startsWith(CONNECT_ERROR_PREFIX), !down.ok ? down.message : "");

    hub = await startHub(["--configStoreURL", `fs://${configDir}`, "--address", `tcp://${address}`]);
    assert.equal(hub.listeners.grpc, address);
    const started = performance.now();
    let result = await check();
    while (!result.ok && performance.now() - started < 60_000) {
      await new Promise((r) => setTimeout(r, 50));
      result = await check();
    }
    assert.equal(result.ok, true, JSON.stringify(result));
    // Reconnection backoff is capped at MAX_RECONNECT_BACKOFF_MS (1 s): well before the 1 s cap plus a loaded machine's 5 s margin.
    assert.ok(performance.now() - started < 6000, `recovered after ${performance.now() - started} ms`);
  });
});
