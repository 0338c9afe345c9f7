// Authenticated issuance (issue 15 item 1): a real mesh_ca process; first certificates need a
// service-account token for exactly the CSR's identity, renewals present the current certificate
// over mutual TLS; every refusal is UNAUTHENTICATED or PERMISSION_DENIED with a reason, and counted.
import * as grpc from "@grpc/grpc-js";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { type CaCallAuth, CertificateRequestError, createCertificate, requestWorkloadCertificate, type WorkloadCertificate } from "../../host/anchor/client.ts";
import { loadOrCreateIssuerKey, mintServiceAccountToken } from "../../host/anchor/token_issuer.ts";
import { type CaProcess, csrFor, MESH_CA_BIN, metricsText, metricValue, startCa } from "./support/ca_process.ts";
import { tempDir } from "../support/processes.ts";

const run = promisify(execFile);
const id = (ns: string, sa: string) => `spiffe://cluster.local/ns/${ns}/sa/${sa}`;

async function refusal(p: Promise<unknown>): Promise<CertificateRequestError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof CertificateRequestError, String(e));
    return e;
  }
  assert.fail("expected a refusal");
}

describe("mesh_ca authenticated issuance (process, TLS)", () => {
  let ca: CaProcess;
  let failures = 0;
  const ask = (identity: string, auth: CaCallAuth) => requestWorkloadCertificate({ address: ca.address, identity, keyAlgorithm: "ECDSA", auth });
  const tlsOnly = (): CaCallAuth => ({ tls: { rootPem: ca.rootPem() } });

  before(async () => {
    ca = await startCa(["--self-signed-ca", "--workload-cert-ttl", "1h"]);
  });
  after(async () => {
    await ca?.stop("SIGKILL");
  });

  it("refuses an anonymous CSR with UNAUTHENTICATED, for any identity", async () => {
    for (const identity of [id("foo", "bar"), id("mesh-system", "admin"), id("kube-system", "default")]) {
      const e = await refusal(ask(identity, tlsOnly()));
      assert.equal(e.code, grpc.status.UNAUTHENTICATED);
      assert.match(e.details, /no credential: a first certificate needs a service-account token/);
      failures++;
    }
  });

  it("refuses a token used for another namespace's identity and for another service account, with PERMISSION_DENIED", async () => {
    const token = await ca.token("foo", "bar");
    const otherNamespace = await refusal(ask(id("mesh-system", "bar"), { ...tlsOnly(), token }));
    assert.equal(otherNamespace.code, grpc.status.PERMISSION_DENIED);
    assert.match(otherNamespace.details, /the token of system:serviceaccount:foo:bar may not ask for spiffe:\/\/cluster.local\/ns\/mesh-system\/sa\/bar/);
    const otherAccount = await refusal(ask(id("foo", "admin"), { ...tlsOnly(), token }));
    assert.equal(otherAccount.code, grpc.status.PERMISSION_DENIED);
    assert.match(otherAccount.details, /may not ask for spiffe:\/\/cluster.local\/ns\/foo\/sa\/admin/);
    failures += 2;
  });

  it("refuses tokens that do not verify with UNAUTHENTICATED, naming why", async () => {
    const stranger = await loadOrCreateIssuerKey(tempDir("stranger-issuer-"));
    const cases: Array<[string, Promise<string>, RegExp]> = [
      [
        "signed by a key the CA does not know",
        mintServiceAccountToken(stranger, { namespace: "foo", serviceAccount: "bar" }),
        /no configured key matches|signature does not verify/,
      ],
      ["expired", ca.token("foo", "bar", { now: Date.now() - 3 * 3_600_000, ttlMs: 3_600_000 }), /token is expired/],
      ["for another audience", ca.token("foo", "bar", { audiences: ["some-api"] }), /claim aud/],
      ["from another issuer", ca.token("foo", "bar", { issuer: "https://elsewhere.example" }), /claim iss/],
      ["not a JWT", Promise.resolve("not.a.jwt"), /not a valid JWT|Invalid/],
    ];
    for (const [what, token, reason] of cases) {
      const e = await refusal(ask(id("foo", "bar"), { ...tlsOnly(), token: await token }));
      assert.equal(e.code, grpc.status.UNAUTHENTICATED, what);
      assert.match(e.details, /service-account token refused/, what);
      assert.match(e.details, reason, what);
      failures++;
    }
  });

  let first: WorkloadCertificate;
  it("issues the legitimate workload its certificate for its token", async () => {
    first = await ask(id("foo", "bar"), await ca.auth("foo", "bar"));
    assert.equal(first.identity, id("foo", "bar"));
    assert.match(ca.output(), /issued certificate.*identity=spiffe:\/\/cluster.local\/ns\/foo\/sa\/bar.*authenticatedBy=token/);
  });

  it("renews it over mutual TLS with the current certificate and no token", async () => {
    const renewal = await ask(id("foo", "bar"), { tls: { rootPem: ca.rootPem(), clientKeyPem: first.keyPem, clientCertChainPem: first.certChainPem } });
    assert.equal(renewal.identity, id("foo", "bar"));
    assert.notEqual(renewal.serialNumber, first.serialNumber);
    assert.match(ca.output(), /authenticatedBy=certificate/);
  });

  it("refuses a certificate holder asking for another identity, even with a token for it (the certificate decides)", async () => {
    const mtls = { rootPem: ca.rootPem(), clientKeyPem: first.keyPem, clientCertChainPem: first.certChainPem };
    const e = await refusal(ask(id("foo", "admin"), { tls: mtls, token: await ca.token("foo", "admin") }));
    assert.equal(e.code, grpc.status.PERMISSION_DENIED);
    assert.match(
      e.details,
      /the client certificate proves spiffe:\/\/cluster.local\/ns\/foo\/sa\/bar; it may not ask for spiffe:\/\/cluster.local\/ns\/foo\/sa\/admin/,
    );
    failures++;
  });

  it("does not take a client certificate from another CA as proof", async () => {
    const other = await startCa(["--self-signed-ca"]);
    try {
      const foreign = await requestWorkloadCertificate({
        address: other.address,
        identity: id("foo", "bar"),
        keyAlgorithm: "ECDSA",
        auth: await other.auth("foo", "bar"),
      });
      const e = await refusal(
        ask(id("foo", "bar"), { tls: { rootPem: ca.rootPem(), clientKeyPem: foreign.keyPem, clientCertChainPem: foreign.certChainPem } }),
      );
      assert.equal(e.code, grpc.status.UNAUTHENTICATED, "an unverified certificate is no credential");
      failures++;
    } finally {
      await other.stop("SIGKILL");
    }
  });

  it("refuses plain text on its TLS port (the CA's certificate names mesh-ca; clients check it)", async () => {
    const e = await refusal(createCertificate(ca.address, await csrFor([id("foo", "bar")]), 0, 20_000, { token: await ca.token("foo", "bar") }));
    assert.equal(e.code, grpc.status.UNAVAILABLE);
    const wrongName = await refusal(
      createCertificate(ca.address, await csrFor([id("foo", "bar")]), 0, 20_000, {
        token: await ca.token("foo", "bar"),
        tls: { rootPem: ca.rootPem(), serverName: "impostor" },
      }),
    );
    assert.equal(wrongName.code, grpc.status.UNAVAILABLE, "the CA's certificate does not name impostor");
  });

  it("counts every refusal in anchor_server_authentication_failure_count_total", async () => {
    const text = await metricsText(ca);
    assert.equal(metricValue(text, "anchor_server_authentication_failure_count_total"), failures);
    assert.equal(metricValue(text, "anchor_server_success_cert_issuance_count_total"), 2);
    assert.equal(
      metricValue(
        text,
        'grpc_server_handled_total{grpc_type="unary",grpc_service="mesh.anchor.v1.CertificateService",grpc_method="CreateCertificate",grpc_code="UNAUTHENTICATED"}',
      ),
      failures - 3,
    );
    assert.equal(
      metricValue(
        text,
        'grpc_server_handled_total{grpc_type="unary",grpc_service="mesh.anchor.v1.CertificateService",grpc_method="CreateCertificate",grpc_code="PERMISSION_DENIED"}',
      ),
      3,
    );
  });

  it("`mesh_ca token` mints a token the CA accepts, from the same issuer directory", async () => {
    const out = join(tempDir("mesh-token-"), "token");
    await run(process.execPath, [
      MESH_CA_BIN,
      "token",
      "--issuer-dir",
      ca.issuerDir,
      "--namespace",
      "shop",
      "--service-account",
      "web",
      "--ttl",
      "10m",
      "--out",
      out,
    ]);
    const token = readFileSync(out, "utf8").trim();
    const wc = await ask(id("shop", "web"), { tls: { rootPem: ca.rootPem() }, token });
    assert.equal(wc.identity, id("shop", "web"));
    const { stdout } = await run(process.execPath, [MESH_CA_BIN, "token", "--issuer-dir", ca.issuerDir, "--namespace", "shop", "--service-account", "web"]);
    const payload = JSON.parse(Buffer.from(stdout.trim().split(".")[1], "base64url").toString()) as Record<string, unknown>;
    assert.equal(payload.sub, "system:serviceaccount:shop:web");
    assert.deepEqual([payload.iss, payload.aud], ["mesh-token-issuer", ["mesh-ca"]]);
    assert.equal((payload.exp as number) - (payload.iat as number), 24 * 3600, "24h by default");
  });
});

describe("mesh_ca --grpc-plaintext and token settings", () => {
  it("plain text: the token authenticates; anonymous is still refused; the mode is logged", async () => {
    const ca = await startCa(["--self-signed-ca", "--grpc-plaintext"]);
    try {
      assert.equal(ca.listening.grpcTls, false);
      assert.match(ca.output(), /gRPC is plain text \(--grpc-plaintext\)/);
      const wc = await requestWorkloadCertificate({
        address: ca.address,
        identity: id("foo", "bar"),
        keyAlgorithm: "ECDSA",
        auth: { token: await ca.token("foo", "bar") },
      });
      assert.equal(wc.identity, id("foo", "bar"));
      const e = await refusal(requestWorkloadCertificate({ address: ca.address, identity: id("foo", "bar"), keyAlgorithm: "ECDSA" }));
      assert.equal(e.code, grpc.status.UNAUTHENTICATED);
    } finally {
      await ca.stop("SIGKILL");
    }
  });

  it("first-party-jwt does not check the audience; AUDIENCE sets the expected one for third-party-jwt", async () => {
    const firstParty = await startCa(["--self-signed-ca"], { JWT_POLICY: "first-party-jwt" });
    const custom = await startCa(["--self-signed-ca"], { AUDIENCE: "my-ca,other" });
    try {
      const anyAudience = await firstParty.token("foo", "bar", { audiences: ["whatever"] });
      assert.equal(
        (
          await requestWorkloadCertificate({
            address: firstParty.address,
            identity: id("foo", "bar"),
            keyAlgorithm: "ECDSA",
            auth: { token: anyAudience, tls: { rootPem: firstParty.rootPem() } },
          })
        ).identity,
        id("foo", "bar"),
      );
      const e = await refusal(
        requestWorkloadCertificate({ address: custom.address, identity: id("foo", "bar"), keyAlgorithm: "ECDSA", auth: await custom.auth("foo", "bar") }),
      );
      assert.equal(e.code, grpc.status.UNAUTHENTICATED, "the default audience mesh-ca is not listed");
      const mine = await custom.token("foo", "bar", { audiences: ["my-ca"] });
      assert.equal(
        (
          await requestWorkloadCertificate({
            address: custom.address,
            identity: id("foo", "bar"),
            keyAlgorithm: "ECDSA",
            auth: { token: mine, tls: { rootPem: custom.rootPem() } },
          })
        ).identity,
        id("foo", "bar"),
      );
    } finally {
      await Promise.all([firstParty.stop("SIGKILL"), custom.stop("SIGKILL")]);
    }
  });

  it("exits 2 on a bad JWT_POLICY or a missing key set file", async () => {
    for (const [env, args, message] of [
      [{ JWT_POLICY: "none" }, [], /JWT_POLICY="none": expected one of third-party-jwt, first-party-jwt/],
      [{}, ["--token-jwks", "/nonexistent/jwks.json"], /--token-jwks \/nonexistent\/jwks.json/],
    ] as Array<[NodeJS.ProcessEnv, string[], RegExp]>) {
      const r = await run(process.execPath, [MESH_CA_BIN, "--self-signed-ca", "--grpc-port", "0", "--monitoring-port", "0", "--ctrlz_port", "0", ...args], {
        env: { ...process.env, ...env },
      }).then(
        () => ({ code: 0, out: "" }),
        (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
      );
      assert.equal(r.code, 2, r.out);
      assert.match(r.out, message);
    }
  });
});
