// --controlPlaneAuthPolicy and friends (agent_command.ts, workload_tls.ts) and the hub's side of
// mutual TLS (hubs/mutual_tls.ts): the pure decisions, without processes.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { WorkloadCertificate } from "../../host/anchor/client.ts";
import { chooseHubTls, clientSanProblem } from "../../host/hubs/mutual_tls.ts";
import { certificateSource, controlPlaneAuth, hubIdentityMatches } from "../../host/proxy/control_plane_auth.ts";
import { caCallAuth } from "../../host/proxy/workload_tls.ts";
import { tempDir } from "../support/processes.ts";

const dir = tempDir("cp-auth-");
const tokenPath = join(dir, "token");
const rootFile = join(dir, "root-cert.pem");
writeFileSync(tokenPath, "header.payload.signature\n");
writeFileSync(rootFile, "-----BEGIN CERTIFICATE-----\nFILE\n-----END CERTIFICATE-----\n");
const NOW = Date.UTC(2026, 0, 1);
const cert = (expiresAt: number): WorkloadCertificate => ({
  identity: "spiffe://cluster.local/ns/foo/sa/bar",
  keyPem: "KEY",
  certChainPem: "CHAIN",
  rootPem: "-----BEGIN CERTIFICATE-----\nCURRENT\n-----END CERTIFICATE-----\n",
  notBefore: new Date(NOW - 1000),
  expiresAt: new Date(expiresAt),
  rotateAt: new Date(expiresAt - 1000),
  serialNumber: "01",
});

describe("controlPlaneAuth", () => {
  it("defaults: NONE, upstream's token path per JWT_POLICY, the spec's root path", () => {
    assert.deepEqual(controlPlaneAuth({}, {}), {
      policy: "NONE",
      tokenPath: "./var/run/secrets/tokens/mesh-token",
      caRootCertFile: "/etc/certs/root-cert.pem",
    });
    assert.equal(controlPlaneAuth({}, { JWT_POLICY: "first-party-jwt" }).tokenPath, "/var/run/secrets/orch.io/serviceaccount/token");
    assert.deepEqual(controlPlaneAuth({ controlPlaneAuthPolicy: "MUTUAL_TLS", tokenPath: "t", caRootCert: "r" }, {}), {
      policy: "MUTUAL_TLS",
      tokenPath: "t",
      caRootCertFile: "r",
    });
    assert.throws(() => controlPlaneAuth({ controlPlaneAuthPolicy: "TLS" }, {}), /--controlPlaneAuthPolicy: expected NONE or MUTUAL_TLS/);
    assert.throws(() => controlPlaneAuth({}, { JWT_POLICY: "x" }), /JWT_POLICY/);
  });
});

describe("caCallAuth: what one CreateCertificate call presents", () => {
  const mtls = { policy: "MUTUAL_TLS" as const, tokenPath, caRootCertFile: rootFile };

  it("NONE: the token every time, plain text", () => {
    assert.deepEqual(caCallAuth({ ...mtls, policy: "NONE" }, cert(NOW + 60_000), false, NOW), { token: "header.payload.signature" });
  });

  it("MUTUAL_TLS, first certificate: the token over TLS trusting the root file", () => {
    const auth = caCallAuth(mtls, undefined, false, NOW);
    assert.equal(auth.token, "header.payload.signature");
    assert.equal(auth.tls?.clientCertChainPem, undefined);
    assert.match(auth.tls!.rootPem, /FILE/);
  });

  it("MUTUAL_TLS, renewal: the current certificate and no token; the current roots are trusted too", () => {
    const auth = caCallAuth(mtls, cert(NOW + 60_000), false, NOW);
    assert.equal(auth.token, undefined);
    assert.deepEqual([auth.tls?.clientKeyPem, auth.tls?.clientCertChainPem], ["KEY", "CHAIN"]);
    assert.match(auth.tls!.rootPem, /FILE[\s\S]*CURRENT/);
  });

  it("MUTUAL_TLS: after a failed renewal or once the certificate expired, the token again", () => {
    assert.equal(caCallAuth(mtls, cert(NOW + 60_000), true, NOW).token, "header.payload.signature");
    assert.equal(caCallAuth(mtls, cert(NOW - 1), false, NOW).tls?.clientCertChainPem, undefined);
  });

  it("names the token file and the root file when they are missing", () => {
    assert.throws(
      () => caCallAuth({ ...mtls, tokenPath: join(dir, "nope") }, undefined, false, NOW),
      /service-account token .*nope: no such file \(--tokenPath; mint one with mesh_ca token\)/,
    );
    assert.throws(() => caCallAuth({ ...mtls, caRootCertFile: join(dir, "nope.pem") }, undefined, false, NOW), /--caRootCert .*nope.pem/);
    assert.equal(
      caCallAuth({ ...mtls, caRootCertFile: join(dir, "nope.pem") }, cert(NOW + 60_000), false, NOW).tls?.clientKeyPem,
      "KEY",
      "a renewal can do with the current roots",
    );
  });
});

describe("hub identities", () => {
  it("--hubIdentity is a suffix on a path boundary, or the whole ID", () => {
    const hub = "spiffe://cluster.local/ns/mesh-system/sa/mesh-hub-service-account";
    for (const suffix of ["mesh-hub-service-account", "sa/mesh-hub-service-account", "/ns/mesh-system/sa/mesh-hub-service-account", hub])
      assert.ok(hubIdentityMatches(hub, suffix), suffix);
    assert.equal(hubIdentityMatches("spiffe://cluster.local/ns/evil/sa/evil-mesh-hub-service-account", "mesh-hub-service-account"), false);
    assert.equal(hubIdentityMatches(hub, "hub-service-account"), false);
  });

  it("the hub takes client workload identities of its trust domain only", () => {
    const hub = { uris: ["spiffe://cluster.local/ns/mesh-system/sa/hub"], trustDomain: "cluster.local" };
    assert.equal(clientSanProblem("URI:spiffe://cluster.local/ns/foo/sa/bar", hub), undefined);
    assert.match(clientSanProblem("URI:spiffe://other.example/ns/foo/sa/bar", hub)!, /not a workload identity of cluster.local/);
    assert.match(clientSanProblem("DNS:foo.example", hub)!, /\(no URI SAN\)/);
    assert.match(clientSanProblem(undefined, hub)!, /no URI SAN/);
    assert.equal(clientSanProblem("URI:spiffe://other.example/ns/foo/sa/bar", { uris: [] }), undefined, "a hub without a SPIFFE ID takes any trust domain");
  });

  it("mutual TLS when a flag is given or all default files exist", () => {
    const files = { caCertFile: rootFile, certFile: tokenPath, keyFile: tokenPath };
    assert.deepEqual(chooseHubTls(files, false), files);
    assert.equal(chooseHubTls({ ...files, keyFile: join(dir, "missing") }, false), undefined);
    assert.deepEqual(chooseHubTls({ ...files, keyFile: join(dir, "missing") }, true), { ...files, keyFile: join(dir, "missing") });
  });
});

describe("the certificate source: mesh_ca, or the control plane", () => {
  it("--discoveryAddress alone makes the control plane the CA, over MUTUAL_TLS, with the root at upstream's mount", () => {
    const source = certificateSource({ discoveryAddress: "disco-discovery.mesh-system.svc:15012" });
    assert.deepEqual(source, { address: "disco-discovery.mesh-system.svc:15012", controlPlane: true });
    const auth = controlPlaneAuth({}, {}, source);
    assert.equal(auth.policy, "MUTUAL_TLS");
    assert.equal(auth.caRootCertFile, "/var/run/secrets/mesh/root-cert.pem");
    assert.equal(controlPlaneAuth({ caRootCert: "r" }, {}, source).caRootCertFile, "r");
  });

  it("CA_ADDR equal to the discovery address is the control plane too; another address is mesh_ca, NONE unless given", () => {
    assert.deepEqual(certificateSource({ discoveryAddress: "d:15012", caAddress: "d:15012" }), { address: "d:15012", controlPlane: true });
    const mesh = certificateSource({ discoveryAddress: "d:15012", caAddress: "mesh-ca:8060" });
    assert.deepEqual(mesh, { address: "mesh-ca:8060", controlPlane: false });
    assert.deepEqual(controlPlaneAuth({}, {}, mesh), {
      policy: "NONE",
      tokenPath: "./var/run/secrets/tokens/mesh-token",
      caRootCertFile: "/etc/certs/root-cert.pem",
    });
  });

  it("--controlPlaneAuthPolicy NONE keeps plain text without a CA, and is refused with the control plane as the CA", () => {
    assert.equal(certificateSource({ discoveryAddress: "d:15010", controlPlaneAuthPolicy: "NONE" }), undefined);
    assert.equal(certificateSource({}), undefined);
    assert.throws(
      () => controlPlaneAuth({ controlPlaneAuthPolicy: "NONE" }, {}, { address: "d:15012", controlPlane: true }),
      /--controlPlaneAuthPolicy NONE: the CA is disco-discovery \(d:15012\), which serves certificates only over TLS/,
    );
  });
});
