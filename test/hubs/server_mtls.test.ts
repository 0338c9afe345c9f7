// `hubs server` over mutual TLS (issue 15 item 6): real hub and mesh_ca processes, real workload
// certificates; a client certificate is required, chains to --caCertFile and must carry a SPIFFE
// workload identity of the hub's trust domain unless BYPASS_OOP_MTLS_SAN_VERIFICATION is true.
import * as grpc from "@grpc/grpc-js";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { requestWorkloadCertificate } from "../../host/anchor/client.ts";
import { exportPrivateKeyPem, generateKeyPair, importPrivateKeyPem, signingAlgorithmOf } from "../../host/anchor/keys.ts";
import { x509 } from "../../host/anchor/x509.ts";
import { HUBS_BIN } from "../../host/demo/binaries.ts";
import { type HubListening } from "../../host/demo/local_mesh.ts";
import { type Daemon, startDaemon } from "../../host/demo/processes.ts";
import { type MeshCa, startMeshCa, writeWorkloadCertFiles } from "../../host/demo/secure_mesh.ts";
import { rawUnaryMethod } from "../../host/wire/raw_grpc.ts";
import { tempDir } from "./support/hub_process.ts";

const REPORT = rawUnaryMethod("/mesh.hub.v1.Hub/Report");
const HUB_ID = "spiffe://cluster.local/ns/mesh-system/sa/mesh-hub-service-account";

interface ClientTls {
  rootPem: string;
  keyPem?: string;
  certChainPem?: string;
}

/** One empty Report over a channel of its own: the status code, or OK. */
function report(address: string, tls: ClientTls | undefined): Promise<{ code: number; details: string }> {
  const credentials = tls
    ? grpc.credentials.createSsl(
        Buffer.from(tls.rootPem),
        tls.keyPem ? Buffer.from(tls.keyPem) : null,
        tls.certChainPem ? Buffer.from(tls.certChainPem) : null,
        {
          // Secure naming instead of host names: the hub must be the hub's identity.
          checkServerIdentity: (_host, cert) => (cert.subjectaltname === `URI:${HUB_ID}` ? undefined : new Error(`hub is ${cert.subjectaltname}`)),
        },
      )
    : grpc.credentials.createInsecure();
  const client = new grpc.Client(address, credentials);
  return new Promise<{ code: number; details: string }>((resolve) => {
    client.makeUnaryRequest(
      REPORT.path,
      REPORT.requestSerialize,
      REPORT.responseDeserialize,
      Buffer.alloc(0),
      new grpc.Metadata(),
      { deadline: Date.now() + 20_000 },
      (err) => resolve(err ? { code: err.code, details: err.details } : { code: grpc.status.OK, details: "" }),
    );
  }).finally(() => client.close());
}

async function startTlsHub(files: { caCertFile: string; certFile: string; keyFile: string }, env: NodeJS.ProcessEnv = {}): Promise<Daemon<HubListening>> {
  return startDaemon(
    HUBS_BIN,
    [
      "server",
      "--address",
      "tcp://127.0.0.1:0",
      "--monitoringPort",
      "0",
      "--ctrlz_port",
      "0",
      "--ctrlz_address",
      "127.0.0.1",
      "--caCertFile",
      files.caCertFile,
      "--certFile",
      files.certFile,
      "--keyFile",
      files.keyFile,
    ],
    "hubs listening ",
    60_000,
    { ...process.env, ...env },
  );
}

/** A certificate signed by the mesh CA's own key but without a SPIFFE identity (a DNS SAN only). */
async function certificateWithoutIdentity(ca: MeshCa): Promise<{ keyPem: string; certChainPem: string }> {
  const caKey = await importPrivateKeyPem(readFileSync(join(ca.certDir, "ca-key.pem"), "utf8"), "ca-key.pem");
  const caCert = new x509.X509Certificate(readFileSync(join(ca.certDir, "ca-cert.pem"), "utf8"));
  const keys = await generateKeyPair("ECDSA");
  const cert = await x509.X509CertificateGenerator.create({
    subject: "CN=not-a-workload",
    issuer: caCert.subject,
    publicKey: keys.publicKey,
    signingKey: caKey.privateKey,
    signingAlgorithm: signingAlgorithmOf(caKey.privateKey),
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 3_600_000),
    extensions: [
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
      new x509.SubjectAlternativeNameExtension([{ type: "dns", value: "not-a-workload.example" }]),
    ],
  });
  return { keyPem: await exportPrivateKeyPem(keys.privateKey, true), certChainPem: cert.toString("pem") };
}

describe("hubs server over mutual TLS (processes)", () => {
  let ca: MeshCa;
  let hub: Daemon<HubListening>;
  let files: Awaited<ReturnType<typeof writeWorkloadCertFiles>>;
  let address: string;

  before(async () => {
    ca = await startMeshCa();
    files = await writeWorkloadCertFiles(ca, "mesh-system", "mesh-hub-service-account", join(tempDir("hub-certs-"), "certs"));
    hub = await startTlsHub(files);
    address = `127.0.0.1:${hub.listening.grpcPort}`;
  });
  after(async () => {
    await hub?.stop();
    await ca?.stop();
  });

  it("serves mutual TLS and says so", () => {
    assert.equal(hub.listening.grpcTls, true);
    assert.match(hub.output(), /gRPC is mutual TLS/);
    assert.match(hub.output(), new RegExp(`identity=${HUB_ID}`));
  });

  it("answers a workload that presents its mesh certificate", async () => {
    const wc = await requestWorkloadCertificate({
      address: ca.address,
      identity: "spiffe://cluster.local/ns/foo/sa/sleep",
      keyAlgorithm: "ECDSA",
      auth: await ca.firstRequestAuth("foo", "sleep"),
    });
    assert.deepEqual(await report(address, { rootPem: wc.rootPem, keyPem: wc.keyPem, certChainPem: wc.certChainPem }), { code: grpc.status.OK, details: "" });
  });

  it("refuses callers without a client certificate, and plain text, at the handshake", async () => {
    assert.equal((await report(address, { rootPem: readFileSync(files.caCertFile, "utf8") })).code, grpc.status.UNAVAILABLE);
    assert.equal((await report(address, undefined)).code, grpc.status.UNAVAILABLE);
  });

  it("refuses a certificate from another CA at the handshake", async () => {
    const other = await startMeshCa();
    try {
      const foreign = await requestWorkloadCertificate({
        address: other.address,
        identity: "spiffe://cluster.local/ns/foo/sa/sleep",
        keyAlgorithm: "ECDSA",
        auth: await other.firstRequestAuth("foo", "sleep"),
      });
      assert.equal(
        (await report(address, { rootPem: readFileSync(files.caCertFile, "utf8"), keyPem: foreign.keyPem, certChainPem: foreign.certChainPem })).code,
        grpc.status.UNAVAILABLE,
      );
    } finally {
      await other.stop();
    }
  });

  it("refuses a mesh-signed certificate without a workload identity (PERMISSION_DENIED), unless BYPASS_OOP_MTLS_SAN_VERIFICATION=true", async () => {
    const anonymous = await certificateWithoutIdentity(ca);
    const tls = { rootPem: readFileSync(files.caCertFile, "utf8"), ...anonymous };
    const refused = await report(address, tls);
    assert.equal(refused.code, grpc.status.PERMISSION_DENIED);
    assert.match(refused.details, /client certificate identity \(no URI SAN\) is not a workload identity of cluster.local/);
    const bypassing = await startTlsHub(files, { BYPASS_OOP_MTLS_SAN_VERIFICATION: "true" });
    try {
      assert.equal((await report(`127.0.0.1:${bypassing.listening.grpcPort}`, tls)).code, grpc.status.OK);
    } finally {
      await bypassing.stop();
    }
  });

  it("exits 1 naming the file when a mutual TLS file is missing or the key does not match", () => {
    const run = (args: string[]) =>
      spawnSync(process.execPath, [HUBS_BIN, "server", "--address", "tcp://127.0.0.1:0", "--monitoringPort", "0", "--ctrlz_port", "0", ...args], {
        encoding: "utf8",
        timeout: 120_000,
      });
    const missing = run(["--certFile", "/nonexistent/cert-chain.pem", "--caCertFile", files.caCertFile, "--keyFile", files.keyFile]);
    assert.equal(missing.status, 1, missing.stdout + missing.stderr);
    assert.match(missing.stdout + missing.stderr, /--certFile \/nonexistent\/cert-chain.pem/);
    const mismatch = run(["--certFile", files.certFile, "--caCertFile", files.caCertFile, "--keyFile", join(ca.issuerDir, "issuer-key.pem")]);
    assert.equal(mismatch.status, 1, mismatch.stdout + mismatch.stderr);
    assert.match(mismatch.stdout + mismatch.stderr, /--keyFile .*issuer-key.pem: the key does not match/);
  });

  it("without the flags and without /etc/certs, serves plain text and logs it", async () => {
    assert.ok(!existsSync("/etc/certs/cert-chain.pem"), "this machine mounts certificates at /etc/certs: the default is mutual TLS there");
    const plain = await startDaemon<HubListening>(
      HUBS_BIN,
      ["server", "--address", "tcp://127.0.0.1:0", "--monitoringPort", "0", "--ctrlz_port", "0", "--ctrlz_address", "127.0.0.1"],
      "hubs listening ",
      60_000,
    );
    try {
      assert.equal(plain.listening.grpcTls, false);
      assert.match(plain.output(), /gRPC is plain text/);
      assert.equal((await report(`127.0.0.1:${plain.listening.grpcPort}`, undefined)).code, grpc.status.OK);
    } finally {
      await plain.stop();
    }
  });
});
