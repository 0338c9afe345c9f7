// Issuing workload certificates in-process: identity checks, content, TTL policy, counters.
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { before, describe, it } from "node:test";
import { CertificateAuthority } from "../../host/anchor/certificate_authority.ts";
import { AnchorError } from "../../host/anchor/errors.ts";
import { generateKeyPair } from "../../host/anchor/keys.ts";
import { AnchorMetrics } from "../../host/anchor/metrics.ts";
import { createSelfSignedRoot } from "../../host/anchor/self_signed_root.ts";
import type { SigningBundle } from "../../host/anchor/signing_bundle.ts";
import { x509 } from "../../host/anchor/x509.ts";
import { csrFor, metricValue } from "./support/ca_process.ts";

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);
const HOUR = 3_600_000;
const ID = "spiffe://cluster.local/ns/foo/sa/bar";

let bundle: SigningBundle;

function newCa(over: Partial<ConstructorParameters<typeof CertificateAuthority>[0]> = {}, now = NOW) {
  const metrics = new AnchorMetrics();
  const ca = new CertificateAuthority(
    {
      trustDomain: "cluster.local",
      org: "",
      defaultTtlMs: 24 * HOUR,
      maxTtlMs: 48 * HOUR,
      allowedNamespaces: new Set(),
      dualUse: false,
      signCaCerts: false,
      ...over,
    },
    { ratio: 0.5, minGraceMs: 600_000 },
    metrics,
    () => now,
  );
  ca.setBundle(bundle);
  return { ca, metrics };
}

async function refusal(p: Promise<unknown>): Promise<AnchorError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof AnchorError, `expected an AnchorError, got ${e}`);
    return e;
  }
  assert.fail("expected a refusal");
}

describe("issuing workload certificates", () => {
  before(async () => {
    // ECDSA keeps the suite fast; the RSA path is exercised by the process tests.
    const keys = await generateKeyPair("ECDSA");
    const root = await createSelfSignedRoot({ keys, org: "cluster.local", ttlMs: 10 * 24 * HOUR, now: NOW - HOUR });
    bundle = { signingKey: keys.privateKey, signingPublicKey: keys.publicKey, signingCert: root, chain: [], roots: [root] };
  });

  it("issues a leaf with the SPIFFE URI SAN, workload key usages, CA:FALSE, empty subject, signed by the root", async () => {
    const { ca, metrics } = newCa();
    const res = await ca.createCertificate(await csrFor([ID]), 3600);
    assert.equal(res.certChain.length, 2, "leaf + root (no intermediates for a self-signed CA)");
    const leaf = new X509Certificate(res.certChain[0]);
    const root = new X509Certificate(res.certChain[1]);
    assert.equal(leaf.subjectAltName, `URI:${ID}`);
    assert.equal(leaf.subject, undefined, "empty subject, as upstream workload certificates");
    assert.equal(leaf.ca, false);
    assert.deepEqual(leaf.keyUsage, ["1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2"], "EKU serverAuth + clientAuth");
    assert.ok(leaf.checkIssued(root) && leaf.verify(root.publicKey));
    assert.equal(new Date(leaf.validFrom).getTime(), NOW);
    assert.equal(new Date(leaf.validTo).getTime(), NOW + HOUR, "the requested TTL is honored");
    assert.equal(res.gracePeriodRatio, 0.5);
    assert.equal(res.minGracePeriodSeconds, 600);
    const text = await metrics.registry.metrics();
    assert.equal(metricValue(text, "anchor_server_csr_count_total"), 1);
    assert.equal(metricValue(text, "anchor_server_success_cert_issuance_count_total"), 1);
  });

  it("marks the SAN critical only when the subject is empty; --org fills subject O", async () => {
    const sanOf = (pem: string) => new x509.X509Certificate(pem).getExtension(x509.SubjectAlternativeNameExtension)!;
    const plain = await newCa().ca.createCertificate(await csrFor([ID]), 60);
    assert.equal(sanOf(plain.certChain[0]).critical, true);
    const withOrg = await newCa({ org: "Acme" }).ca.createCertificate(await csrFor([ID]), 60);
    assert.equal(new X509Certificate(withOrg.certChain[0]).subject, "O=Acme");
    assert.equal(sanOf(withOrg.certChain[0]).critical, false);
    const ku = new x509.X509Certificate(withOrg.certChain[0]).getExtension(x509.KeyUsagesExtension)!;
    assert.equal(ku.usages, x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment);
  });

  it("applies the TTL policy: 0 = default, within max honored, above max refused, never past the issuer", async () => {
    const { ca, metrics } = newCa();
    const validTo = (r: { certChain: string[] }) => new Date(new X509Certificate(r.certChain[0]).validTo).getTime();
    assert.equal(validTo(await ca.createCertificate(await csrFor([ID]), 0)), NOW + 24 * HOUR, "0 asks for --workload-cert-ttl");
    assert.equal(validTo(await ca.createCertificate(await csrFor([ID]), 48 * 3600)), NOW + 48 * HOUR, "exactly the max is allowed");
    const e = await refusal(ca.createCertificate(await csrFor([ID]), 48 * 3600 + 1));
    assert.equal(e.code, "TTL_INVALID");
    assert.match(e.message, /requested TTL 48h0m1s is greater than the max allowed TTL 48h0m0s/);
    assert.equal((await refusal(ca.createCertificate(await csrFor([ID]), -5))).code, "TTL_INVALID");
    assert.equal(metricValue(await metrics.registry.metrics(), 'anchor_server_csr_sign_err_count_total{error="ttl_error"}'), 2);
    const late = newCa({ maxTtlMs: 1000 * 24 * HOUR }, NOW + 9 * 24 * HOUR).ca;
    assert.equal(
      validTo(await late.createCertificate(await csrFor([ID]), 5 * 24 * 3600)),
      bundle.signingCert.notAfter.getTime(),
      "clamped to the root's notAfter",
    );
  });

  it("--experimental-dual-use: the subject CommonName is the identity (the first SAN), as upstream; over 64 characters it is refused", async () => {
    const res = await newCa({ dualUse: true, org: "Acme" }).ca.createCertificate(await csrFor([ID]), 60);
    const leaf = new X509Certificate(res.certChain[0]);
    assert.equal(leaf.subject, `O=Acme\nCN=${ID}`);
    assert.equal(leaf.subjectAltName, `URI:${ID}`);
    assert.equal(new x509.X509Certificate(res.certChain[0]).getExtension(x509.SubjectAlternativeNameExtension)!.critical, false, "the subject is not empty");
    const long = `spiffe://cluster.local/ns/${"n".repeat(30)}/sa/${"s".repeat(20)}`;
    const e = await refusal(newCa({ dualUse: true }).ca.createCertificate(await csrFor([long]), 60));
    assert.equal(e.code, "IDENTITY_INVALID");
    assert.match(e.message, /--experimental-dual-use: identity .* is longer than the 64 characters a CommonName may have/);
  });

  it("--sign-ca-certs: a CSR asking for CA:TRUE gets a CA certificate for its requested TTL; without the flag it is refused", async () => {
    const refused = await refusal(newCa().ca.createCertificate(await csrFor([ID], undefined, true), 60));
    assert.equal(refused.code, "CA_CERT_NOT_ALLOWED");
    assert.match(refused.message, /asks for a CA certificate; this CA signs CA certificates only with --sign-ca-certs/);
    const { ca } = newCa({ signCaCerts: true });
    const res = await ca.createCertificate(await csrFor([ID], undefined, true), 72 * 3600);
    const cert = new X509Certificate(res.certChain[0]);
    assert.equal(cert.ca, true);
    assert.equal(cert.subjectAltName, `URI:${ID}`);
    assert.equal(new Date(cert.validTo).getTime(), NOW + 72 * HOUR, "not bounded by --max-workload-cert-ttl (48h here), only by the issuer");
    const ku = new x509.X509Certificate(res.certChain[0]).getExtension(x509.KeyUsagesExtension)!;
    assert.equal(ku.usages, x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature);
    const workload = new X509Certificate((await ca.createCertificate(await csrFor([ID]), 60)).certChain[0]);
    assert.equal(workload.ca, false, "a CSR without CA:TRUE still gets a workload certificate");
  });

  const identityRows: Array<{ name: string; uris: string[]; code: string; message: RegExp; allowed?: string[] }> = [
    { name: "no URI SAN", uris: [], code: "IDENTITY_INVALID", message: /no URI subject alternative name/ },
    {
      name: "another trust domain",
      uris: ["spiffe://evil.example/ns/foo/sa/bar"],
      code: "IDENTITY_INVALID",
      message: /trust domain "evil.example", not this CA's trust domain "cluster.local"/,
    },
    { name: "not spiffe", uris: ["https://cluster.local/ns/foo/sa/bar"], code: "IDENTITY_INVALID", message: /scheme must be spiffe/ },
    {
      name: "not a workload path",
      uris: ["spiffe://cluster.local/foo/bar"],
      code: "IDENTITY_INVALID",
      message: /path must be \/ns\/<namespace>\/sa\/<service-account>/,
    },
    { name: "two identities", uris: [ID, "spiffe://cluster.local/ns/foo/sa/other"], code: "IDENTITY_INVALID", message: /2 URI subject alternative names/ },
    {
      name: "namespace not allowed",
      uris: [ID],
      allowed: ["prod"],
      code: "NAMESPACE_NOT_ALLOWED",
      message: /namespace "foo" .* is not in --allowed-namespaces \(prod\)/,
    },
  ];
  for (const row of identityRows) {
    it(`refuses a CSR: ${row.name}`, async () => {
      const { ca } = newCa(row.allowed ? { allowedNamespaces: new Set(row.allowed) } : {});
      const e = await refusal(ca.createCertificate(await csrFor(row.uris), 60));
      assert.equal(e.code, row.code);
      assert.match(e.message, row.message);
    });
  }

  it("refuses garbage and a CSR whose signature does not verify, counted as parse errors", async () => {
    const { ca, metrics } = newCa();
    assert.equal((await refusal(ca.createCertificate("hello", 60))).code, "CSR_INVALID");
    const pem = await csrFor([ID]);
    const der = Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ""), "base64");
    der[der.length - 3] ^= 0xff; // inside the signature value
    const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString("base64")}\n-----END CERTIFICATE REQUEST-----\n`;
    const e = await refusal(ca.createCertificate(tampered, 60));
    assert.equal(e.code, "CSR_INVALID");
    assert.match(e.message, /signature/);
    assert.equal(metricValue(await metrics.registry.metrics(), "anchor_server_csr_parsing_err_count_total"), 2);
  });

  it("refuses with CA_NOT_READY before a signing bundle is set", async () => {
    const ca = new CertificateAuthority(
      { trustDomain: "cluster.local", org: "", defaultTtlMs: HOUR, maxTtlMs: HOUR, allowedNamespaces: new Set(), dualUse: false, signCaCerts: false },
      { ratio: 0.5, minGraceMs: 0 },
      new AnchorMetrics(),
    );
    assert.equal((await refusal(ca.createCertificate(await csrFor([ID]), 0))).code, "CA_NOT_READY");
  });
});
