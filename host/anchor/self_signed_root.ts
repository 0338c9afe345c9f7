import { x509 } from "./x509.ts";
import { signingAlgorithmOf } from "./keys.ts";

type Certificate = InstanceType<typeof x509.X509Certificate>;

export interface SelfSignedRootOptions {
  keys: CryptoKeyPair;
  /** Subject organization: `--org`, else the trust domain (as upstream). */
  org: string;
  ttlMs: number;
  now: number;
}

/**
 * A self-signed root CA certificate for the key pair. Rotation passes the
 * existing key (upstream: GenRootCertFromExistingKey), so certificates issued
 * under the previous root still verify against the new one: same subject,
 * same key, same key identifier.
 */
export async function createSelfSignedRoot(options: SelfSignedRootOptions): Promise<Certificate> {
  const notBefore = new Date(Math.floor(options.now / 1000) * 1000);
  return x509.X509CertificateGenerator.createSelfSigned({
    name: [{ O: [options.org] }],
    keys: options.keys,
    notBefore,
    notAfter: new Date(notBefore.getTime() + options.ttlMs),
    signingAlgorithm: signingAlgorithmOf(options.keys.privateKey),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(options.keys.publicKey),
    ],
  });
}
