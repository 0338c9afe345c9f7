import { formatGoDuration } from "../daemon/duration.ts";
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
  /** `--experimental-dual-use`: workload certificates carry their identity as subject CN too. */
  dualUse: boolean;
  /** `--sign-ca-certs`: a CSR asking for CA:TRUE gets a CA certificate (else it is refused). */
  signCaCerts: boolean;
}

export interface IssuedCertificate {
  cert: Certificate;
  identity: SpiffeIdentity;
  /** A CA certificate (`--sign-ca-certs`), not a workload certificate. */
  isCa: boolean;
  notBefore: Date;
  notAfter: Date;
}

const MAX_CSR_PEM_BYTES = 64 * 1024;

/** Parses and verifies a PEM PKCS#10 request; throws CSR_INVALID. */
export async function parseCsr(pem: string): Promise<Csr> {
  if (pem.length > MAX_CSR_PEM_BYTES) throw new AnchorError("CSR_INVALID", `CSR is larger than ${MAX_CSR_PEM_BYTES} bytes`);
  const blocks = pem.match(/-----BEGIN (NEW )?CERTIFICATE REQUEST-----[\s\S]+?-----END (NEW )?CERTIFICATE REQUEST-----/g) ?? [];
  if (blocks.length !== 1)
    throw new AnchorError(
      "CSR_INVALID",
      blocks.length === 0
        ? "csr is not a PEM-encoded PKCS#10 certificate request (no BEGIN CERTIFICATE REQUEST block)"
        : "csr must hold exactly one certificate request",
    );
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
  if (uris.length === 0)
    throw new AnchorError(
      "IDENTITY_INVALID",
      "csr has no URI subject alternative name: expected one spiffe://<trust-domain>/ns/<namespace>/sa/<service-account>",
    );
  if (uris.length > 1)
    throw new AnchorError(
      "IDENTITY_INVALID",
      `csr has ${uris.length} URI subject alternative names (${uris.join(", ")}): expected exactly one SPIFFE identity`,
    );
  const identity = parseSpiffeIdentity(uris[0]);
  if (identity.trustDomain !== policy.trustDomain) {
    throw new AnchorError(
      "IDENTITY_INVALID",
      `identity ${identity.uri} is in trust domain ${JSON.stringify(identity.trustDomain)}, not this CA's trust domain ${JSON.stringify(policy.trustDomain)}`,
    );
  }
  if (policy.allowedNamespaces.size > 0 && !policy.allowedNamespaces.has(identity.namespace)) {
    throw new AnchorError(
      "NAMESPACE_NOT_ALLOWED",
      `namespace ${JSON.stringify(identity.namespace)} of ${identity.uri} is not in --allowed-namespaces (${[...policy.allowedNamespaces].join(", ")})`,
    );
  }
  return identity;
}

/** Whether a CSR asks for a CA certificate (a basicConstraints CA:TRUE extension request). */
export function csrAsksForCa(csr: Csr): boolean {
  return csr.extensions.some((e) => e instanceof x509.BasicConstraintsExtension && e.ca);
}

/** Longest subject CommonName X.509 allows (RFC 5280 ub-common-name). */
const MAX_COMMON_NAME = 64;

/**
 * Signs a certificate for a verified CSR: the CSR's public key and SPIFFE
 * URI SAN (critical when the subject is empty, RFC 5280 §4.2.1.6), subject
 * O=--org when set. Valid from now (whole seconds), never past the signing
 * certificate's notAfter (a certificate cannot outlive its issuer).
 * - A workload certificate: key usages digitalSignature + keyEncipherment,
 *   EKU serverAuth + clientAuth, CA:FALSE, for the resolved TTL; with
 *   dual use the subject CN is the identity too (as upstream, at most 64
 *   characters).
 * - A CA certificate (the CSR asks for CA:TRUE, --sign-ca-certs on):
 *   CA:TRUE, keyCertSign + cRLSign + digitalSignature (so the CA can
 *   present it over mutual TLS to renew it), for the requested TTL (0 = the
 *   default workload TTL); it is not bounded by --max-workload-cert-ttl, only
 *   by the issuer's own validity.
 */
export async function issueCertificate(
  bundle: SigningBundle,
  policy: IssuePolicy,
  csr: Csr,
  requestedTtlSeconds: number,
  now: number,
): Promise<IssuedCertificate> {
  const identity = identityOfCsr(csr, policy);
  const isCa = csrAsksForCa(csr);
  if (isCa && !policy.signCaCerts)
    throw new AnchorError(
      "CA_CERT_NOT_ALLOWED",
      `the CSR for ${identity.uri} asks for a CA certificate; this CA signs CA certificates only with --sign-ca-certs`,
    );
  const ttlMs = isCa ? resolveCaTtl(requestedTtlSeconds, policy.defaultTtlMs) : resolveWorkloadTtl(requestedTtlSeconds, policy.defaultTtlMs, policy.maxTtlMs);
  const commonName = policy.dualUse && !isCa ? identity.uri : undefined;
  if (commonName !== undefined && commonName.length > MAX_COMMON_NAME) {
    throw new AnchorError(
      "IDENTITY_INVALID",
      `--experimental-dual-use: identity ${identity.uri} is longer than the ${MAX_COMMON_NAME} characters a CommonName may have`,
    );
  }
  const notBefore = new Date(Math.floor(now / 1000) * 1000);
  const issuerEnd = bundle.signingCert.notAfter.getTime();
  if (issuerEnd <= notBefore.getTime())
    throw new AnchorError("CA_NOT_READY", `the signing certificate expired at ${bundle.signingCert.notAfter.toISOString()}`);
  const notAfter = new Date(Math.min(notBefore.getTime() + ttlMs, issuerEnd));
  const ski = bundle.signingCert.getExtension(x509.SubjectKeyIdentifierExtension);
  const aki = ski ? new x509.AuthorityKeyIdentifierExtension(ski.keyId) : await x509.AuthorityKeyIdentifierExtension.create(bundle.signingCert.publicKey);
  const subject: Array<Record<string, string[]>> = [...(policy.org ? [{ O: [policy.org] }] : []), ...(commonName !== undefined ? [{ CN: [commonName] }] : [])];
  const usage = isCa
    ? [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
        await x509.SubjectKeyIdentifierExtension.create(csr.publicKey),
      ]
    : [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
      ];
  let cert: Certificate;
  try {
    cert = await x509.X509CertificateGenerator.create({
      subject,
      issuer: bundle.signingCert.subjectName,
      publicKey: csr.publicKey,
      signingKey: bundle.signingKey,
      signingAlgorithm: signingAlgorithmOf(bundle.signingKey),
      notBefore,
      notAfter,
      extensions: [...usage, new x509.SubjectAlternativeNameExtension([{ type: "url", value: identity.uri }], subject.length === 0), aki],
    });
  } catch (e) {
    throw new AnchorError(
      "CERT_GENERATION_FAILED",
      `signing the certificate for ${identity.uri} (TTL ${formatGoDuration(ttlMs)}) failed: ${(e as Error).message}`,
    );
  }
  return { cert, identity, isCa, notBefore, notAfter };
}

function resolveCaTtl(requestedSeconds: number, defaultTtlMs: number): number {
  if (!Number.isFinite(requestedSeconds) || requestedSeconds < 0)
    throw new AnchorError("TTL_INVALID", `validity_duration ${requestedSeconds} must be a non-negative number of seconds`);
  return requestedSeconds === 0 ? defaultTtlMs : requestedSeconds * 1000;
}
