import { formatGoDuration } from "../cli/duration.ts";
import { AnchorError } from "./errors.ts";
import { signingAlgorithmOf } from "./keys.ts";
import type { SigningBundle } from "./signing_bundle.ts";
import { parseSpiffeIdentity, type SpiffeIdentity } from "./spiffe.ts";
import { resolveWorkloadTtl } from "./workload_ttl.ts";
import { x509 } from "./x509.ts";

type Certificate = InstanceType<typeof x509.X509Certificate>;
type Csr = InstanceType<typeof x509.Pkcs10CertificateRequest>;

/** What decides the content of a workload certificate (flags of mesh_ca). */
export interface IssuePolicy {
  trustDomain: string;
  /** `--org`: subject O of workload certificates; empty = empty subject. */
  org: string;
  defaultTtlMs: number;
  maxTtlMs: number;
  /** `--allowed-namespaces`; empty = every namespace. */
  allowedNamespaces: ReadonlySet<string>;
}

export interface IssuedCertificate {
  cert: Certificate;
  identity: SpiffeIdentity;
  notBefore: Date;
  notAfter: Date;
}

const MAX_CSR_PEM_BYTES = 64 * 1024;

/** Parses and verifies a PEM PKCS#10 request; throws CSR_INVALID. */
export async function parseCsr(pem: string): Promise<Csr> {
  if (pem.length > MAX_CSR_PEM_BYTES) throw new AnchorError("CSR_INVALID", `CSR is larger than ${MAX_CSR_PEM_BYTES} bytes`);
  const blocks = pem.match(/-----BEGIN (NEW )?CERTIFICATE REQUEST-----[\s\S]+?-----END (NEW )?CERTIFICATE REQUEST-----/g) ?? [];
  if (blocks.length !== 1) throw new AnchorError("CSR_INVALID", blocks.length === 0 ? "csr is not a PEM-encoded PKCS#10 certificate request (no BEGIN CERTIFICATE REQUEST block)" : "csr must hold exactly one certificate request");
  let csr: Csr;
  try {
    csr = new x509.Pkcs10CertificateRequest(blocks[0].replace(/NEW CERTIFICATE REQUEST/g, "CERTIFICATE REQUEST"));
  } catch (e) {
    throw new AnchorError("CSR_INVALID", `csr does not parse as PKCS#10: ${(e as Error).message}`);
  }
  let ok = false;
  try {
    ok = await csr.verify();
  } catch (e) {
    throw new AnchorError("CSR_INVALID", `csr signature cannot be checked: ${(e as Error).message}`);
  }
  if (!ok) throw new AnchorError("CSR_INVALID", "csr signature does not verify with its own public key");
  return csr;
}

/**
 * The one SPIFFE URI SAN of a CSR, checked against the trust domain and the
 * allowed namespaces. DNS, IP and e-mail SANs are ignored (never copied).
 */
export function identityOfCsr(csr: Csr, policy: Pick<IssuePolicy, "trustDomain" | "allowedNamespaces">): SpiffeIdentity {
  const san = csr.extensions.find((e): e is InstanceType<typeof x509.SubjectAlternativeNameExtension> => e instanceof x509.SubjectAlternativeNameExtension);
  const uris = san ? san.names.items.filter((n) => n.type === "url").map((n) => n.value) : [];
  if (uris.length === 0) throw new AnchorError("IDENTITY_INVALID", "csr has no URI subject alternative name: expected one spiffe://<trust-domain>/ns/<namespace>/sa/<service-account>");
  if (uris.length > 1) throw new AnchorError("IDENTITY_INVALID", `csr has ${uris.length} URI subject alternative names (${uris.join(", ")}): expected exactly one SPIFFE identity`);
  const identity = parseSpiffeIdentity(uris[0]);
  if (identity.trustDomain !== policy.trustDomain) {
    throw new AnchorError("IDENTITY_INVALID", `identity ${identity.uri} is in trust domain ${JSON.stringify(identity.trustDomain)}, not this CA's trust domain ${JSON.stringify(policy.trustDomain)}`);
  }
  if (policy.allowedNamespaces.size > 0 && !policy.allowedNamespaces.has(identity.namespace)) {
    throw new AnchorError("NAMESPACE_NOT_ALLOWED", `namespace ${JSON.stringify(identity.namespace)} of ${identity.uri} is not in --allowed-namespaces (${[...policy.allowedNamespaces].join(", ")})`);
  }
  return identity;
}

/**
 * Signs a workload certificate for a verified CSR: the CSR's public key and
 * SPIFFE URI SAN (critical when the subject is empty, RFC 5280 §4.2.1.6),
 * key usages digitalSignature + keyEncipherment, EKU serverAuth + clientAuth,
 * CA:FALSE, subject O=--org when set. Valid from now (whole seconds) for the
 * resolved TTL, but never past the signing certificate's notAfter (a
 * certificate cannot outlive its issuer).
 */
export async function issueWorkloadCertificate(bundle: SigningBundle, policy: IssuePolicy, csr: Csr, requestedTtlSeconds: number, now: number): Promise<IssuedCertificate> {
  const identity = identityOfCsr(csr, policy);
  const ttlMs = resolveWorkloadTtl(requestedTtlSeconds, policy.defaultTtlMs, policy.maxTtlMs);
  const notBefore = new Date(Math.floor(now / 1000) * 1000);
  const issuerEnd = bundle.signingCert.notAfter.getTime();
  if (issuerEnd <= notBefore.getTime()) throw new AnchorError("CA_NOT_READY", `the signing certificate expired at ${bundle.signingCert.notAfter.toISOString()}`);
  const notAfter = new Date(Math.min(notBefore.getTime() + ttlMs, issuerEnd));
  const ski = bundle.signingCert.getExtension(x509.SubjectKeyIdentifierExtension);
  const aki = ski ? new x509.AuthorityKeyIdentifierExtension(ski.keyId) : await x509.AuthorityKeyIdentifierExtension.create(bundle.signingCert.publicKey);
  let cert: Certificate;
  try {
    cert = await x509.X509CertificateGenerator.create({
      subject: policy.org ? [{ O: [policy.org] }] : [],
      issuer: bundle.signingCert.subjectName,
      publicKey: csr.publicKey,
      signingKey: bundle.signingKey,
      signingAlgorithm: signingAlgorithmOf(bundle.signingKey),
      notBefore,
      notAfter,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
        new x509.SubjectAlternativeNameExtension([{ type: "url", value: identity.uri }], !policy.org),
        aki,
      ],
    });
  } catch (e) {
    throw new AnchorError("CERT_GENERATION_FAILED", `signing the certificate for ${identity.uri} (TTL ${formatGoDuration(ttlMs)}) failed: ${(e as Error).message}`);
  }
  return { cert, identity, notBefore, notAfter };
}
