import { X509Certificate as NodeX509 } from "node:crypto";
import { readFileSync } from "node:fs";
import { webcrypto } from "node:crypto";
import { AnchorConfigError } from "./errors.ts";
import { importPrivateKeyPem } from "./keys.ts";
import { x509 } from "./x509.ts";

type Certificate = InstanceType<typeof x509.X509Certificate>;

/**
 * What the CA signs with and what it hands out (upstream: KeyCertBundle):
 * the signing key and certificate, the intermediates between the signing
 * certificate and a root, and the roots clients should trust (the current
 * root first, then earlier roots still inside their validity).
 */
export interface SigningBundle {
  readonly signingKey: CryptoKey;
  readonly signingPublicKey: CryptoKey;
  readonly signingCert: Certificate;
  /** Certificates from the signing certificate (included when it is not a root) up to, excluding, the root. */
  readonly chain: readonly Certificate[];
  readonly roots: readonly Certificate[];
}

export function pemOf(cert: Certificate): string {
  return `${cert.toString("pem").trim()}\n`;
}

/** The roots as one PEM string, current root first. */
export function rootBundlePem(bundle: SigningBundle): string {
  return bundle.roots.map(pemOf).join("");
}

/** Every certificate of a PEM file, in order; throws naming the source. */
export function parseCertificates(pem: string, source: string): Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new AnchorConfigError(`${source}: no PEM certificate found`);
  return blocks.map((b, i) => {
    try {
      return new x509.X509Certificate(b);
    } catch (e) {
      throw new AnchorConfigError(`${source}: certificate ${i + 1} does not parse: ${(e as Error).message}`);
    }
  });
}

function sameCert(a: Certificate, b: Certificate): boolean {
  return Buffer.from(a.rawData).equals(Buffer.from(b.rawData));
}

function isCa(cert: Certificate): boolean {
  const bc = cert.getExtension(x509.BasicConstraintsExtension);
  return bc?.ca === true;
}

/** Node's view of a certificate, for issuer checks and signature verification. */
export function nodeCert(cert: Certificate): NodeX509 {
  return new NodeX509(Buffer.from(cert.rawData));
}

/**
 * Checks what upstream's VerifyAndSetAll checks: the key belongs to the
 * signing certificate, the signing certificate may sign certificates, and
 * every certificate of the chain is signed by the next one, the last by a root.
 */
export async function verifyBundle(bundle: SigningBundle, source: string): Promise<void> {
  const spkiOfKey = Buffer.from(await webcrypto.subtle.exportKey("spki", bundle.signingPublicKey));
  if (!spkiOfKey.equals(Buffer.from(bundle.signingCert.publicKey.rawData))) {
    throw new AnchorConfigError(`${source}: the signing key does not match the signing certificate's public key`);
  }
  if (!isCa(bundle.signingCert)) throw new AnchorConfigError(`${source}: the signing certificate is not a CA certificate (basicConstraints CA:TRUE missing)`);
  const ku = bundle.signingCert.getExtension(x509.KeyUsagesExtension);
  if (ku && (ku.usages & x509.KeyUsageFlags.keyCertSign) === 0) throw new AnchorConfigError(`${source}: the signing certificate's key usage lacks keyCertSign`);
  if (bundle.roots.length === 0) throw new AnchorConfigError(`${source}: no root certificate`);
  const path = [bundle.signingCert, ...bundle.chain.filter((c) => !sameCert(c, bundle.signingCert))];
  for (let i = 0; i < path.length - 1; i++) {
    if (!nodeCert(path[i]).checkIssued(nodeCert(path[i + 1])) || !nodeCert(path[i]).verify(nodeCert(path[i + 1]).publicKey)) {
      throw new AnchorConfigError(`${source}: certificate chain is broken: ${path[i].subject} is not signed by ${path[i + 1].subject}`);
    }
  }
  const top = nodeCert(path[path.length - 1]);
  const anchored = bundle.roots.some((r) => {
    const root = nodeCert(r);
    return top.checkIssued(root) && top.verify(root.publicKey);
  });
  if (!anchored) throw new AnchorConfigError(`${source}: the signing certificate does not chain up to the root certificate`);
}

export interface PluggedCertFiles {
  signingCert: string;
  signingKey: string;
  /** Empty: none (the signing certificate itself is sent when it is not a root). */
  certChain: string;
  /** Empty: allowed only when the signing certificate is self-signed. */
  rootCert: string;
}

/** Loads `--signing-cert`, `--signing-key`, `--cert-chain` and `--root-cert` and verifies them. */
export async function loadPluggedBundle(files: PluggedCertFiles): Promise<SigningBundle> {
  const read = (path: string, flag: string) => {
    try {
      return readFileSync(path, "utf8");
    } catch (e) {
      throw new AnchorConfigError(`${flag} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  };
  if (!files.signingCert || !files.signingKey) throw new AnchorConfigError("--signing-cert and --signing-key are both required unless --self-signed-ca is set");
  const [signingCert, ...extra] = parseCertificates(read(files.signingCert, "--signing-cert"), `--signing-cert ${files.signingCert}`);
  const { privateKey, publicKey } = await importPrivateKeyPem(read(files.signingKey, "--signing-key"), `--signing-key ${files.signingKey}`);
  const selfSigned = await signingCert.isSelfSigned();
  let roots: Certificate[];
  if (files.rootCert) roots = parseCertificates(read(files.rootCert, "--root-cert"), `--root-cert ${files.rootCert}`);
  else if (selfSigned) roots = [signingCert];
  else throw new AnchorConfigError("--root-cert is required when the signing certificate is not self-signed");
  const isRoot = (c: Certificate) => roots.some((r) => sameCert(r, c));
  let chain: Certificate[] = files.certChain
    ? parseCertificates(read(files.certChain, "--cert-chain"), `--cert-chain ${files.certChain}`)
    : [signingCert, ...extra];
  // The chain sent to clients holds no root: the root travels separately, as the last element.
  chain = chain.filter((c) => !isRoot(c));
  if (!isRoot(signingCert) && !chain.some((c) => sameCert(c, signingCert))) chain.unshift(signingCert);
  const bundle: SigningBundle = { signingKey: privateKey, signingPublicKey: publicKey, signingCert, chain, roots };
  await verifyBundle(bundle, "--signing-cert/--signing-key/--cert-chain/--root-cert");
  return bundle;
}
