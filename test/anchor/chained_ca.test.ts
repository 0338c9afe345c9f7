// Chained CAs as real processes: a mesh_ca with --upstream-ca-address gets its CA certificate from
// another mesh_ca running --sign-ca-certs, signs workload certificates with it and renews it over
// mutual TLS; the workload's chain verifies to the upstream's root in a real TLS handshake.
// Also --experimental-dual-use, and a CA that does not sign CA certificates.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import * as tls from "node:tls";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { CertificateRequestError, requestWorkloadCertificate, splitPem, type WorkloadCertificate } from "../../host/anchor/client.ts";
import { tempDir } from "../support/processes.ts";
import { type CaProcess, MESH_CA_BIN, startCa, waitFor } from "./support/ca_process.ts";

const run = promisify(execFile);
const DOWNSTREAM_ID = "spiffe://cluster.local/ns/mesh-system/sa/mesh-ca-east";
const WORKLOAD_ID = "spiffe://cluster.local/ns/foo/sa/bar";

/** A TLS handshake on loopback: the server presents the workload chain, the client trusts only `rootPem`. */
async function handshake(cert: WorkloadCertificate, rootPem: string): Promise<{ authorized: boolean; error?: string }> {
  const server = tls.createServer({ key: cert.keyPem, cert: cert.certChainPem }, (s) => s.end());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  try {
    return await new Promise((resolve) => {
      const socket = tls.connect({ host: "127.0.0.1", port, ca: rootPem, checkServerIdentity: () => undefined, rejectUnauthorized: false }, () => {
        resolve({ authorized: socket.authorized, ...(socket.authorizationError ? { error: String(socket.authorizationError) } : {}) });
        socket.destroy();
      });
    });
  } finally {
    server.close();
  }
}

describe("mesh_ca chained: --upstream-ca-address with --sign-ca-certs upstream", () => {
  let upstream: CaProcess;
  let downstream: CaProcess;
  let dir: string;
  before(async () => {
    upstream = await startCa(["--self-signed-ca", "--sign-ca-certs"]);
    dir = tempDir("chained-ca-");
    writeFileSync(join(dir, "upstream-root.pem"), upstream.rootPem());
    writeFileSync(join(dir, "token"), await upstream.token("mesh-system", "mesh-ca-east"));
    // 20 s CA certificates: the upstream's grace ratio (0.5) renews them after 10 s.
    downstream = await startCa([
      "--upstream-ca-address",
      upstream.address,
      "--root-cert",
      join(dir, "upstream-root.pem"),
      "--upstream-ca-token",
      join(dir, "token"),
      "--requested-ca-cert-ttl",
      "20s",
      "--key-size",
      "2048",
    ]);
  });
  after(async () => {
    await downstream?.stop();
    await upstream?.stop();
  });

  it("issues workload certificates whose chain (leaf, the downstream's CA certificate) verifies to the upstream's root", async () => {
    const cert = await requestWorkloadCertificate({
      address: downstream.address,
      identity: WORKLOAD_ID,
      keyAlgorithm: "ECDSA",
      auth: await downstream.auth("foo", "bar"),
    });
    const [leafPem, caPem, ...rest] = splitPem(cert.certChainPem);
    assert.equal(rest.length, 0, "leaf + the downstream's CA certificate");
    const leaf = new X509Certificate(leafPem);
    const intermediate = new X509Certificate(caPem);
    const root = new X509Certificate(upstream.rootPem());
    assert.equal(cert.rootPem.trim(), upstream.rootPem().trim(), "the root handed out is the upstream's");
    assert.equal(intermediate.ca, true);
    assert.equal(intermediate.subjectAltName, `URI:${DOWNSTREAM_ID}`, "the downstream CA's identity comes from its token");
    assert.ok(leaf.checkIssued(intermediate) && leaf.verify(intermediate.publicKey));
    assert.ok(intermediate.checkIssued(root) && intermediate.verify(root.publicKey));
    assert.ok(new Date(intermediate.validTo).getTime() - new Date(intermediate.validFrom).getTime() <= 20_000, "--requested-ca-cert-ttl 20s");
    assert.deepEqual(await handshake(cert, upstream.rootPem()), { authorized: true });
    assert.match(upstream.output(), /issued certificate.*identity=spiffe:\/\/cluster.local\/ns\/mesh-system\/sa\/mesh-ca-east.*authenticatedBy=token/);
  });

  it("renews its CA certificate inside the grace period over mutual TLS with the current one", async () => {
    const serials = () => [...downstream.output().matchAll(/CA certificate from the upstream CA.*serial=(\w+)/g)].map((m) => m[1]);
    const first = serials()[0];
    await waitFor("a renewed CA certificate", () => (serials().some((s) => s !== first) ? true : undefined), 120_000);
    assert.match(upstream.output(), /issued certificate.*identity=spiffe:\/\/cluster.local\/ns\/mesh-system\/sa\/mesh-ca-east.*authenticatedBy=certificate/);
    const renewed = serials().at(-1)!;
    const cert = await requestWorkloadCertificate({
      address: downstream.address,
      identity: WORKLOAD_ID,
      keyAlgorithm: "ECDSA",
      auth: await downstream.auth("foo", "bar"),
    });
    const intermediate = new X509Certificate(splitPem(cert.certChainPem)[1]);
    assert.ok(
      serials().includes(intermediate.serialNumber),
      `signed by a CA certificate the downstream logged (${intermediate.serialNumber}; latest ${renewed})`,
    );
    assert.deepEqual(await handshake(cert, upstream.rootPem()), { authorized: true });
  });
});

describe("mesh_ca without --sign-ca-certs; --experimental-dual-use", () => {
  let ca: CaProcess;
  before(async () => {
    ca = await startCa(["--self-signed-ca", "--experimental-dual-use"]);
  });
  after(async () => {
    await ca?.stop();
  });

  it("--experimental-dual-use: the workload certificate's CommonName is its identity", async () => {
    const cert = await requestWorkloadCertificate({ address: ca.address, identity: WORKLOAD_ID, keyAlgorithm: "ECDSA", auth: await ca.auth("foo", "bar") });
    assert.equal(new X509Certificate(splitPem(cert.certChainPem)[0]).subject, `CN=${WORKLOAD_ID}`);
  });

  it("refuses a CA certificate (PERMISSION_DENIED); a downstream mesh_ca pointed at it exits 1 saying why", async () => {
    const e = await requestWorkloadCertificate({
      address: ca.address,
      identity: DOWNSTREAM_ID,
      forCa: true,
      keyAlgorithm: "ECDSA",
      auth: await ca.auth("mesh-system", "mesh-ca-east"),
    }).then(
      () => assert.fail("a CA certificate was issued"),
      (err: unknown) => err as CertificateRequestError,
    );
    assert.equal(e.code, 7);
    assert.match(e.details, /asks for a CA certificate; this CA signs CA certificates only with --sign-ca-certs/);
    const dir = tempDir("chained-ca-refused-");
    writeFileSync(join(dir, "root.pem"), ca.rootPem());
    writeFileSync(join(dir, "token"), await ca.token("mesh-system", "mesh-ca-east"));
    const r = await run(
      process.execPath,
      [
        MESH_CA_BIN,
        "--upstream-ca-address",
        ca.address,
        "--root-cert",
        join(dir, "root.pem"),
        "--upstream-ca-token",
        join(dir, "token"),
        "--grpc-port",
        "0",
        "--monitoring-port",
        "0",
        "--ctrlz_port",
        "0",
      ],
      { timeout: 600_000 },
    ).then(
      () => assert.fail("the downstream started"),
      (err: { code: number; stderr: string }) => err,
    );
    assert.equal(r.code, 1);
    assert.match(r.stderr, /the upstream CA .* did not issue this CA's certificate: .*this CA signs CA certificates only with --sign-ca-certs/);
  });

  it("--upstream-ca-address without --upstream-ca-token is a configuration error (exit 2)", async () => {
    const r = await run(
      process.execPath,
      [MESH_CA_BIN, "--upstream-ca-address", ca.address, "--root-cert", "/dev/null", "--grpc-port", "0", "--monitoring-port", "0", "--ctrlz_port", "0"],
      { timeout: 600_000 },
    ).then(
      () => assert.fail("started"),
      (err: { code: number; stderr: string }) => err,
    );
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--upstream-ca-address needs --upstream-ca-token/);
  });
});
