// `mesh_ca` as a real process on loopback, driven over gRPC: issuing, refusals, metrics, probes, ControlZ, mutual TLS, SIGTERM.
import * as grpc from "@grpc/grpc-js";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as tls from "node:tls";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { CertificateRequestError, createCertificate, requestWorkloadCertificate, splitPem, type WorkloadCertificate } from "../../host/anchor/client.ts";
import { CREATE_CERTIFICATE_METHOD } from "../../host/anchor/protocol.ts";
import { x509 } from "../../host/anchor/x509.ts";
import { type CaProcess, csrFor, MESH_CA_BIN, metricsText, metricValue, startCa, waitFor } from "./support/ca_process.ts";
import { tempDir } from "../support/processes.ts";

const run = promisify(execFile);
const H = 3_600_000;

async function meshCa(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [MESH_CA_BIN, ...args], { env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

async function refused(p: Promise<unknown>): Promise<CertificateRequestError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof CertificateRequestError, String(e));
    return e;
  }
  assert.fail("expected a refusal");
}

describe("mesh_ca process", () => {
  let ca: CaProcess;
  const probeFile = join(tempDir("mesh-ca-probe-"), "alive");
  const identity = (ns: string, sa: string) => `spiffe://cluster.local/ns/${ns}/sa/${sa}`;

  before(async () => {
    ca = await startCa([
      "--self-signed-ca",
      "--workload-cert-ttl",
      "1h",
      "--max-workload-cert-ttl",
      "24h",
      "--liveness-probe-path",
      probeFile,
      "--liveness-probe-interval",
      "200ms",
      "--probe-check-interval",
      "200ms",
    ]);
  });
  after(async () => {
    await ca?.stop("SIGKILL");
  });

  it("issues an RSA 2048 workload certificate whose chain verifies against the root, with the SPIFFE SAN and the requested TTL", async () => {
    const wc = await requestWorkloadCertificate({
      address: ca.address,
      identity: identity("foo", "bar"),
      ttl: 2 * H,
      keySize: 2048,
      auth: await ca.auth("foo", "bar"),
    });
    const leaf = new X509Certificate(wc.certChainPem);
    const [root] = splitPem(wc.rootPem).map((p) => new X509Certificate(p));
    assert.equal(leaf.subjectAltName, `URI:${identity("foo", "bar")}`);
    assert.equal(leaf.publicKey.asymmetricKeyDetails?.modulusLength, 2048);
    assert.ok(leaf.checkIssued(root) && leaf.verify(root.publicKey), "node:crypto: signed by the root");
    const chain = await new x509.X509ChainBuilder({ certificates: [new x509.X509Certificate(wc.rootPem)] }).build(new x509.X509Certificate(wc.certChainPem));
    assert.equal(chain.length, 2, "@peculiar/x509 builds leaf → root");
    assert.equal(wc.expiresAt.getTime() - wc.notBefore.getTime(), 2 * H, "TTL honored");
    assert.equal(wc.rotateAt.getTime(), wc.notBefore.getTime() + H, "grace ratio 0.5 → renew at half-life");
    assert.equal(root.subject, "O=cluster.local", "the root's organization defaults to the trust domain");
  });

  it("uses --workload-cert-ttl when the request asks for 0", async () => {
    const wc = await requestWorkloadCertificate({
      address: ca.address,
      identity: identity("foo", "bar"),
      keyAlgorithm: "ECDSA",
      auth: await ca.auth("foo", "bar"),
    });
    assert.equal(wc.expiresAt.getTime() - wc.notBefore.getTime(), H);
  });

  it("refuses with INVALID_ARGUMENT: another trust domain, a TTL above the max, garbage", async () => {
    const foreign = await refused(
      requestWorkloadCertificate({
        address: ca.address,
        identity: "spiffe://other.example/ns/foo/sa/bar",
        keyAlgorithm: "ECDSA",
        auth: await ca.auth("foo", "bar"),
      }),
    );
    assert.equal(foreign.code, grpc.status.INVALID_ARGUMENT);
    assert.match(foreign.details, /trust domain "other.example", not this CA's trust domain "cluster.local"/);
    const long = await refused(createCertificate(ca.address, await csrFor([identity("foo", "bar")]), 25 * 3600, undefined, await ca.auth("foo", "bar")));
    assert.equal(long.code, grpc.status.INVALID_ARGUMENT);
    assert.match(long.details, /requested TTL 25h0m0s is greater than the max allowed TTL 24h0m0s/);
    const junk = await refused(createCertificate(ca.address, "not a csr", 0, undefined, await ca.auth("foo", "bar")));
    assert.equal(junk.code, grpc.status.INVALID_ARGUMENT);
    // Bytes that are no CreateCertificateRequest at all.
    const Stub = grpc.makeGenericClientConstructor({ CreateCertificate: CREATE_CERTIFICATE_METHOD }, "S");
    const client = new Stub(ca.address, grpc.credentials.createSsl(Buffer.from(ca.rootPem())), { "grpc.ssl_target_name_override": "mesh-ca" });
    const status = await new Promise<grpc.ServiceError>((resolve) =>
      client.makeUnaryRequest(
        CREATE_CERTIFICATE_METHOD.path,
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.from([0x0a, 0xff, 0xff]),
        (err) => resolve(err!),
      ),
    );
    client.close();
    assert.equal(status.code, grpc.status.INVALID_ARGUMENT);
    assert.match(status.details, /malformed CreateCertificateRequest/);
  });

  it("exports the anchor_server_* counters, gRPC counters and the root expiry on /metrics", async () => {
    const text = await metricsText(ca);
    assert.equal(metricValue(text, "anchor_server_csr_count_total"), 6);
    assert.equal(metricValue(text, "anchor_server_success_cert_issuance_count_total"), 2);
    assert.equal(metricValue(text, "anchor_server_id_extraction_err_count_total"), 1);
    assert.equal(metricValue(text, 'anchor_server_csr_sign_err_count_total{error="ttl_error"}'), 1);
    assert.equal(metricValue(text, "anchor_server_csr_parsing_err_count_total"), 2);
    assert.equal(metricValue(text, "anchor_server_authentication_failure_count_total"), 0);
    const expiry = metricValue(text, "anchor_server_root_cert_expiry_timestamp")!;
    assert.ok(Math.abs(expiry - (Date.now() / 1000 + 87600 * 3600)) < 120, "ANCHOR_SELF_SIGNED_CA_CERT_TTL default 87600h");
    assert.equal(
      metricValue(
        text,
        'grpc_server_handled_total{grpc_type="unary",grpc_service="mesh.anchor.v1.CertificateService",grpc_method="CreateCertificate",grpc_code="OK"}',
      ),
      2,
    );
    assert.match(text, /mesh_build\{component="mesh_ca"/);
  });

  it("keeps the liveness probe file fresh; `mesh_ca probe` passes on it and fails on a missing file", async () => {
    assert.ok(existsSync(probeFile));
    assert.equal((await meshCa(["probe", "--probe-path", probeFile, "--interval", "2s"])).code, 0);
    const missing = await meshCa(["probe", "--probe-path", `${probeFile}.nope`, "--interval", "2s"]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /does not exist/);
  });

  it("shows the CA on ControlZ", async () => {
    const json = (await (await fetch(`${ca.ctrlzUrl}/json`)).json()) as {
      component: string;
      ca: { trustDomain: string; mode: string; roots: unknown[] };
      workloadCerts: { maxTtl: string };
    };
    assert.equal(json.component, "mesh_ca");
    assert.deepEqual([json.ca.trustDomain, json.ca.mode, json.ca.roots.length, json.workloadCerts.maxTtl], ["cluster.local", "self-signed", 1, "24h0m0s"]);
  });

  it("certificates it issues carry a mutual TLS handshake between two workloads (and a client without one is refused)", async () => {
    const [server, client] = await Promise.all([
      requestWorkloadCertificate({ address: ca.address, identity: identity("shop", "httpbin"), keyAlgorithm: "ECDSA", auth: await ca.auth("shop", "httpbin") }),
      requestWorkloadCertificate({ address: ca.address, identity: identity("shop", "sleep"), keyAlgorithm: "ECDSA", auth: await ca.auth("shop", "sleep") }),
    ]);
    const seenByServer: string[] = [];
    const srv = tls.createServer(
      { key: server.keyPem, cert: server.certChainPem, ca: server.rootPem, requestCert: true, rejectUnauthorized: true },
      (socket) => {
        seenByServer.push(socket.getPeerX509Certificate()?.subjectAltName ?? "");
        socket.end("hello over mTLS");
      },
    );
    srv.on("tlsClientError", () => {});
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    const port = (srv.address() as { port: number }).port;
    // Mesh identities live in URI SANs, so host-name checking is replaced by an identity check (secure naming).
    const checkServerIdentity = (want: string) => (_host: string, cert: tls.PeerCertificate) =>
      cert.subjectaltname === `URI:${want}` ? undefined : new Error(`server is ${cert.subjectaltname}, wanted ${want}`);
    const connect = (wc?: WorkloadCertificate) =>
      new Promise<{ data: string; peer: string }>((resolve, reject) => {
        const s = tls.connect(
          {
            port,
            host: "127.0.0.1",
            ca: client.rootPem,
            key: wc?.keyPem,
            cert: wc?.certChainPem,
            checkServerIdentity: checkServerIdentity(identity("shop", "httpbin")),
          },
          () => {
            const peer = s.getPeerX509Certificate()?.subjectAltName ?? "";
            let data = "";
            s.on("data", (c: Buffer) => (data += c.toString()));
            s.on("end", () => resolve({ data, peer }));
          },
        );
        s.on("error", reject);
        s.on("close", () => reject(new Error("closed before the response")));
      });
    try {
      const ok = await connect(client);
      assert.equal(ok.data, "hello over mTLS");
      assert.equal(ok.peer, `URI:${identity("shop", "httpbin")}`);
      assert.deepEqual(seenByServer, [`URI:${identity("shop", "sleep")}`]);
      await assert.rejects(connect(undefined), "no client certificate: the handshake fails");
      assert.equal(seenByServer.length, 1);
    } finally {
      await new Promise((r) => srv.close(r));
    }
  });

  it("exits 0 on SIGTERM and removes its probe file", async () => {
    assert.equal(await ca.stop("SIGTERM"), 0);
    assert.equal(existsSync(probeFile), false);
    assert.match(ca.output(), /SIGTERM received: shutting down/);
  });
});

describe("mesh_ca root rotation (process)", () => {
  it("rotates the self-signed root inside its grace percentile, serves both roots, keeps issuing", async () => {
    const dir = tempDir("mesh-ca-selfsigned-");
    const ca = await startCa(["--self-signed-ca", "--self-signed-ca-cert-dir", dir, "--key-size", "1024"], {
      ANCHOR_SELF_SIGNED_CA_CERT_TTL: "8s",
      ANCHOR_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL: "250ms",
      ANCHOR_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE: "75",
    });
    try {
      const before = await requestWorkloadCertificate({
        address: ca.address,
        identity: "spiffe://cluster.local/ns/a/sa/b",
        keyAlgorithm: "ECDSA",
        auth: await ca.auth("a", "b"),
      });
      // The first rotation is due 2 s after start: on a loaded machine it may come before this first request.
      assert.ok(splitPem(before.rootPem).length >= 1);
      assert.ok(before.expiresAt.getTime() - before.notBefore.getTime() <= 8000, "a leaf never outlives its root");
      const expiryBefore = metricValue(await metricsText(ca), "anchor_server_root_cert_expiry_timestamp")!;
      // 75% of 8s is grace: the first rotation comes 2s after start, at the first check after that.
      // A loaded machine may be slower than that, and may see later rotations too: only the order of events is asserted.
      await waitFor("the root expiry gauge to move to a new root", async () =>
        metricValue(await metricsText(ca), "anchor_server_root_cert_expiry_timestamp")! > expiryBefore ? true : undefined,
      );
      const after = await requestWorkloadCertificate({
        address: ca.address,
        identity: "spiffe://cluster.local/ns/a/sa/b",
        keyAlgorithm: "ECDSA",
        auth: await ca.auth("a", "b"),
      });
      const roots = splitPem(after.rootPem).map((p) => new X509Certificate(p));
      assert.ok(roots.length >= 2, `the new root and the previous one are served during the overlap (got ${roots.length})`);
      const leaf = new X509Certificate(after.certChainPem);
      assert.ok(leaf.verify(roots[0].publicKey), "issued under the newest root");
      for (let i = 1; i < roots.length; i++) assert.ok(new Date(roots[i - 1].validFrom) >= new Date(roots[i].validFrom), "newest root first");
      assert.ok(new Date(roots[0].validFrom) > new Date(new X509Certificate(before.rootPem).validFrom), "the first root is a new one");
      assert.match(ca.output(), /rotated the self-signed root/);
      assert.ok(splitPem(readFileSync(join(dir, "root-cert.pem"), "utf8")).length >= 2, "the directory holds the bundle");
      assert.equal(await ca.stop(), 0);
    } finally {
      await ca.stop("SIGKILL");
    }
  });
});

describe("mesh_ca command line", () => {
  it("prints its version", async () => {
    const r = await meshCa(["version", "-o", "json"]);
    assert.equal(r.code, 0);
    assert.equal(JSON.parse(r.stdout).version, "0.1.0");
  });

  const bad: Array<[string, string[], NodeJS.ProcessEnv, RegExp]> = [
    ["no signing mode", [], {}, /one of --self-signed-ca, --upstream-ca-address, or both --signing-cert and --signing-key is required/],
    [
      "a default TTL above the max",
      ["--self-signed-ca", "--workload-cert-ttl", "48h", "--max-workload-cert-ttl", "24h"],
      {},
      /--workload-cert-ttl 48h0m0s is greater than --max-workload-cert-ttl 24h0m0s/,
    ],
    ["a bad trust domain", ["--self-signed-ca", "--trust-domain", "Bad Domain"], {}, /--trust-domain "Bad Domain"/],
    [
      "a bad ANCHOR_* variable",
      ["--self-signed-ca"],
      { ANCHOR_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE: "x" },
      /ANCHOR_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE="x"/,
    ],
  ];
  for (const [name, args, env, message] of bad) {
    it(`exits 2 on ${name}`, async () => {
      const r = await meshCa(["--grpc-port", "0", "--monitoring-port", "0", "--ctrlz_port", "0", ...args], env);
      assert.equal(r.code, 2, r.stdout + r.stderr);
      assert.match(r.stdout + r.stderr, message);
    });
  }
});
