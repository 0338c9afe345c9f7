// disco-discovery's xDS over mutual TLS (--secureGrpcAddr), real processes on loopback:
// mesh_ca issues disco-discovery's certificate and the sidecar's; the sidecar
// (`disco-agent proxy --discoveryAddress … --controlPlaneAuthPolicy MUTUAL_TLS`) gets its
// configuration over that port with its workload certificate and checks
// disco-discovery's identity (--discoIdentity); a caller without a certificate is refused.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { AGENT_BIN, DISCOVERY_BIN } from "../../host/demo/binaries.ts";
import { type MeshCa, type SecureWorkload, startMeshCa, startSecureWorkload, writeWorkloadCertFiles } from "../../host/demo/secure_mesh.ts";
import { type Daemon, spawnOwned, startDaemon, stopOwned, tempDir, waitFor } from "../support/processes.ts";
import { get, sidecarConfig } from "./sidecar_support.ts";

interface Listening {
  grpc?: string;
  secureGrpc?: string;
  http?: string;
}

const DISCO_IDENTITY = "spiffe://cluster.local/ns/mesh-system/sa/disco-discovery";

describe("disco-discovery --secureGrpcAddr: xDS over mutual TLS with mesh_ca certificates", () => {
  let ca: MeshCa;
  let disco: Daemon<Listening>;
  let certDir: string;
  const configDir = tempDir("disco-secure-config-");
  let sidecar: SecureWorkload;

  before(async () => {
    ca = await startMeshCa();
    certDir = tempDir("disco-secure-certs-");
    await writeWorkloadCertFiles(ca, "mesh-system", "disco-discovery", certDir);
    writeFileSync(join(configDir, "config.yaml"), sidecarConfig("FAIL_OPEN"));
    disco = await startDaemon<Listening>(
      DISCOVERY_BIN,
      ["discovery", "--configDir", configDir, "--grpcAddr", "", "--secureGrpcAddr", "127.0.0.1:0", "--httpAddr", "127.0.0.1:0", "--monitoringAddr", "", "--httpsAddr", ""],
      "disco-discovery listening: ",
      undefined,
      { ...process.env, DISCO_CERT_DIR: certDir },
    );
  });
  after(async () => {
    await sidecar?.stop();
    await disco?.stop();
    await ca?.stop();
  });

  it("serves only the secure port, as the certificate's identity", () => {
    assert.equal(disco.listening.grpc, undefined, "--grpcAddr '' disables the plain-text port");
    assert.match(disco.listening.secureGrpc ?? "", /^127\.0\.0\.1:\d+$/);
    assert.match(disco.output(), new RegExp(`xDS \\(mutual TLS\\) on ${disco.listening.secureGrpc} as ${DISCO_IDENTITY}; callers must be workload identities of cluster.local`));
  });

  it("a MUTUAL_TLS sidecar gets its configuration there, checking disco-discovery's identity", async () => {
    sidecar = await startSecureWorkload({ ca, name: "petstore", namespace: "demo", configDir: "", discoveryAddress: disco.listening.secureGrpc, extraArgs: ["--discoIdentity", "sa/disco-discovery"] });
    assert.match(sidecar.sidecar.output(), /disco-discovery must prove an identity ending with sa\/disco-discovery/);
    const sync = JSON.parse((await get(`http://${disco.listening.http}/debug/syncz`)).body) as Array<{ proxy: string; type: string; sent: string; acked: string }>;
    const row = sync.find((r) => r.proxy.includes("petstore.demo") && r.type === "config");
    assert.ok(row, JSON.stringify(sync));
    assert.equal(row.acked, row.sent, "the sidecar acknowledged the configuration it was sent");
  });

  it("a sidecar expecting another identity of disco-discovery does not take its configuration", async () => {
    const token = await ca.tokenFile("demo", "other");
    const agent = spawnOwned(process.execPath, [
      AGENT_BIN, "proxy", "--inboundPort", "0", "--outboundPort", "0", "--proxyAdminPort", "0",
      "--discoveryAddress", disco.listening.secureGrpc!, "--caAddress", ca.address, "--tokenPath", token, "--caRootCert", ca.rootCertFile,
      "--controlPlaneAuthPolicy", "MUTUAL_TLS", "--serviceAccount", "other", "--workloadKeyAlgorithm", "ECDSA", "--discoIdentity", "sa/some-other-control-plane",
    ], { env: { ...process.env, POD_NAME: "other", POD_NAMESPACE: "demo" }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    agent.stdout!.on("data", (b: Buffer) => (output += b.toString()));
    agent.stderr!.on("data", (b: Buffer) => (output += b.toString()));
    try {
      await waitFor("the identity refusal logged", () => (output.includes(`discovery identity: the discovery presented ${DISCO_IDENTITY}, expected an identity of cluster.local ending with sa/some-other-control-plane`) ? true : undefined));
      assert.doesNotMatch(output, /disco-agent listening/, "no configuration, so it does not serve");
    } finally {
      await stopOwned(agent);
    }
  });

  it("a caller without a client certificate is refused at the handshake", async () => {
    const roots = readFileSync(ca.rootCertFile);
    const client = new grpc.Client(disco.listening.secureGrpc!, grpc.credentials.createSsl(roots, null, null, { checkServerIdentity: () => undefined }));
    const health = "/grpc.health.v1.Health/Check";
    const error = await new Promise<grpc.ServiceError | undefined>((resolve) =>
      client.makeUnaryRequest(health, (b: Buffer) => b, (b: Buffer) => b, Buffer.alloc(0), { deadline: Date.now() + 60_000 }, (e) => resolve(e ?? undefined)),
    );
    client.close();
    assert.ok(error, "the call must fail");
    assert.equal(error.code, grpc.status.UNAVAILABLE, error.message);
  });
});
