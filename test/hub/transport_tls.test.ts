// HubTransport over mutual TLS with real workload certificates from a real
// mesh_ca: the hub's SPIFFE identity checked instead of its host name, the
// client certificate presented, a wrong identity refused before any request,
// and renewCredentials() after a rotation: the next call goes out on a new
// connection with the new certificate.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type MeshCa, startMeshCa, writeWorkloadCertFiles } from "../../host/demo/secure_mesh.ts";
import { CONNECT_ERROR_PREFIX } from "../../host/hub/attempt_status.ts";
import { parseClusters } from "../../host/hub/clusters.ts";
import { type HubTlsOptions, HubTransport } from "../../host/hub/transport.ts";
import { controlPlaneIdentityCheck } from "../../host/proxy/control_plane_auth.ts";
import { GRPC_CODES } from "../../host/wire/status_codes.ts";
import { tempDir } from "../support/processes.ts";
import { grpcCall, startSilentServer } from "./support/peers.ts";
import { answerOk, RawHub } from "./support/raw_hub.ts";

const MESSAGE = new Uint8Array([8, 1]);
type Files = Awaited<ReturnType<typeof writeWorkloadCertFiles>>;
const tlsOf = (files: Files, hubIdentity: string): HubTlsOptions => ({
  ca: readFileSync(files.caCertFile),
  cert: readFileSync(files.certFile),
  key: readFileSync(files.keyFile),
  checkServerIdentity: controlPlaneIdentityCheck("cluster.local", hubIdentity, "hub"),
});

describe("HubTransport over mutual TLS", () => {
  let ca: MeshCa;
  let hub: RawHub;
  let petstore: Files;
  let reviews: Files;
  const open: HubTransport[] = [];

  before(async () => {
    ca = await startMeshCa();
    const dir = tempDir("hub-transport-tls-");
    const hubFiles = await writeWorkloadCertFiles(ca, "mesh-system", "mesh-hub-service-account", join(dir, "hub"));
    petstore = await writeWorkloadCertFiles(ca, "demo", "petstore", join(dir, "petstore"));
    reviews = await writeWorkloadCertFiles(ca, "demo", "reviews", join(dir, "reviews"));
    hub = await RawHub.start((stream) => answerOk(stream, MESSAGE), {
      ca: readFileSync(hubFiles.caCertFile),
      cert: readFileSync(hubFiles.certFile),
      key: readFileSync(hubFiles.keyFile),
    });
  });
  after(async () => {
    for (const t of open) t.close();
    await hub?.close();
    await ca?.stop();
  });

  it("calls a hub proving the expected identity, presenting the workload certificate; renewCredentials() moves new calls to a new connection with the new certificate", async () => {
    let current = petstore;
    const transport = new HubTransport({
      clusters: parseClusters([`hub_server=${hub.target}`]),
      credentials: () => tlsOf(current, "sa/mesh-hub-service-account"),
    });
    open.push(transport);
    assert.deepEqual(await transport.call(grpcCall()), { ok: true, message: MESSAGE, attempts: 1 });
    assert.deepEqual(await transport.call(grpcCall()), { ok: true, message: MESSAGE, attempts: 1 });
    const first = hub.requests.slice(-2);
    assert.equal(first[0].headers[":scheme"], "https");
    assert.equal(first[0].connection, first[1].connection, "one connection, kept");
    assert.match(first[0].clientSan ?? "", /URI:spiffe:\/\/cluster\.local\/ns\/demo\/sa\/petstore/);

    current = reviews;
    transport.renewCredentials();
    assert.deepEqual(await transport.call(grpcCall()), { ok: true, message: MESSAGE, attempts: 1 });
    const renewed = hub.requests.at(-1)!;
    assert.notEqual(renewed.connection, first[0].connection, "a new connection");
    assert.match(renewed.clientSan ?? "", /URI:spiffe:\/\/cluster\.local\/ns\/demo\/sa\/reviews/);
  });

  it("a hub proving another identity gets no request: UNAVAILABLE with the connect-error prefix naming the identity", async () => {
    const before = hub.requests.length;
    const transport = new HubTransport({ clusters: parseClusters([`hub_server=${hub.target}`]), credentials: () => tlsOf(petstore, "sa/some-other-hub") });
    open.push(transport);
    const result = await transport.call(grpcCall());
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.code, GRPC_CODES.UNAVAILABLE);
    assert.ok(!result.ok && result.message.startsWith(CONNECT_ERROR_PREFIX), !result.ok ? result.message : "");
    assert.match(!result.ok ? result.message : "", /hub identity: the hub presented spiffe:\/\/cluster\.local\/ns\/mesh-system\/sa\/mesh-hub-service-account/);
    assert.equal(hub.requests.length, before);
  });

  it("plain text to a hub that serves TLS fails as a connection failure", async () => {
    const transport = new HubTransport({ clusters: parseClusters([`hub_server=${hub.target}`]) });
    open.push(transport);
    const result = await transport.call(grpcCall({ timeoutMs: 10_000 }));
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.code, GRPC_CODES.UNAVAILABLE);
    assert.ok(!result.ok && result.message.startsWith(CONNECT_ERROR_PREFIX), !result.ok ? result.message : "");
  });

  it("a handshake that never completes is given up after the connect timeout, as a connection failure", async () => {
    const silent = await startSilentServer();
    const transport = new HubTransport({
      clusters: parseClusters([`hub_server=127.0.0.1:${silent.port}`]),
      credentials: () => tlsOf(petstore, "sa/mesh-hub-service-account"),
      connection: { connectTimeoutMs: 300 },
    });
    open.push(transport);
    try {
      const result = await transport.call(grpcCall({ timeoutMs: 60_000 }));
      assert.equal(result.ok, false);
      assert.match(!result.ok ? result.message : "", /^upstream connect error .*connection not established within 300 ms/);
    } finally {
      await silent.close();
    }
  });
});
