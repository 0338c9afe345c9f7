import type { experimental } from "@grpc/grpc-js";
import { exportPrivateKeyPem, generateKeyPair, signingAlgorithmOf } from "./keys.ts";
import { pemOf, rootBundlePem, type SigningBundle } from "./signing_bundle.ts";
import { x509 } from "./x509.ts";

type CertificateProvider = experimental.CertificateProvider;
type CaListener = Parameters<CertificateProvider["addCaCertificateListener"]>[0];
type IdentityListener = Parameters<CertificateProvider["addIdentityCertificateListener"]>[0];

/** Lifetime of the CA's own TLS certificate; it is reissued at half of it and on every root change. */
export const SERVING_CERT_TTL_MS = 24 * 3_600_000;

/**
 * The CA's own TLS certificate for its gRPC port: DNS SANs from
 * `--grpc-host-identities` (clients dial with one of them as the TLS server
 * name, upstream's `istio-ca`/`istiod` names renamed), EKU serverAuth,
 * signed by the current signing key. A fresh ECDSA key each time.
 */
export async function issueServingCertificate(
  bundle: SigningBundle,
  dnsNames: readonly string[],
  now: number,
): Promise<{ certChainPem: string; keyPem: string }> {
  const keys = await generateKeyPair("ECDSA");
  const notBefore = new Date(Math.floor(now / 1000) * 1000 - 60_000);
  const notAfter = new Date(Math.min(notBefore.getTime() + SERVING_CERT_TTL_MS, bundle.signingCert.notAfter.getTime()));
  const cert = await x509.X509CertificateGenerator.create({
    subject: [],
    issuer: bundle.signingCert.subjectName,
    publicKey: keys.publicKey,
    signingKey: bundle.signingKey,
    signingAlgorithm: signingAlgorithmOf(bundle.signingKey),
    notBefore,
    notAfter,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(
        dnsNames.map((value) => ({ type: "dns" as const, value })),
        true,
      ),
    ],
  });
  return {
    certChainPem: [pemOf(cert), ...bundle.chain.map(pemOf)].map((p) => `${p.trim()}\n`).join(""),
    keyPem: await exportPrivateKeyPem(keys.privateKey, true),
  };
}

/**
 * A grpc-js certificate provider fed by the CA itself: the serving
 * certificate (identity) and the current roots (the trust anchors a client
 * certificate must chain to). `update` pushes a new pair to the gRPC server
 * without a restart: new connections use it at once.
 */
export class ServingCertificateProvider implements CertificateProvider {
  private ca?: { caCertificate: Buffer };
  private identity?: { certificate: Buffer; privateKey: Buffer };
  private readonly caListeners = new Set<CaListener>();
  private readonly identityListeners = new Set<IdentityListener>();

  async update(bundle: SigningBundle, dnsNames: readonly string[], now: number): Promise<void> {
    const serving = await issueServingCertificate(bundle, dnsNames, now);
    this.ca = { caCertificate: Buffer.from(rootBundlePem(bundle)) };
    this.identity = { certificate: Buffer.from(serving.certChainPem), privateKey: Buffer.from(serving.keyPem) };
    for (const l of this.caListeners) l(this.ca);
    for (const l of this.identityListeners) l(this.identity);
  }

  // A new listener hears the current value on the next microtask: grpc-js
  // registers its server watcher only after adding the listener, and an update
  // delivered synchronously in between would be lost.
  addCaCertificateListener(listener: CaListener): void {
    this.caListeners.add(listener);
    queueMicrotask(() => this.ca && this.caListeners.has(listener) && listener(this.ca));
  }

  removeCaCertificateListener(listener: CaListener): void {
    this.caListeners.delete(listener);
  }

  addIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.add(listener);
    queueMicrotask(() => this.identity && this.identityListeners.has(listener) && listener(this.identity));
  }

  removeIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.delete(listener);
  }
}
