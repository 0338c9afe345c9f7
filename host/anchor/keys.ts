import { createPrivateKey, webcrypto } from "node:crypto";
import { AnchorConfigError } from "./errors.ts";

/** Keys as WebCrypto wants them for signing certificates and CSRs. */
export type KeyAlgorithm = "RSA" | "ECDSA";

/** RSA PKCS#1 v1.5 with SHA-256 (what upstream CAs sign with). */
export const RSA_SIGNING = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" } as const;
/** ECDSA on P-256 with SHA-256. */
export const ECDSA_SIGNING = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;

export const DEFAULT_RSA_KEY_SIZE = 2048;
const RSA_PUBLIC_EXPONENT = new Uint8Array([1, 0, 1]);

export function signingAlgorithmOf(key: CryptoKey): Algorithm | EcdsaParams {
  return key.algorithm.name === "ECDSA" ? { name: "ECDSA", hash: "SHA-256" } : RSA_SIGNING;
}

/** A fresh extractable key pair: RSA of keySize bits, or ECDSA P-256. */
export async function generateKeyPair(algorithm: KeyAlgorithm = "RSA", keySize = DEFAULT_RSA_KEY_SIZE): Promise<CryptoKeyPair> {
  if (algorithm === "ECDSA") return (await webcrypto.subtle.generateKey(ECDSA_SIGNING, true, ["sign", "verify"])) as CryptoKeyPair;
  return (await webcrypto.subtle.generateKey({ ...RSA_SIGNING, modulusLength: keySize, publicExponent: RSA_PUBLIC_EXPONENT }, true, [
    "sign",
    "verify",
  ])) as CryptoKeyPair;
}

/**
 * PEM of a private key: PKCS#8 (`BEGIN PRIVATE KEY`) when pkcs8 is set,
 * otherwise the traditional form upstream writes by default (`BEGIN RSA
 * PRIVATE KEY` for RSA, `BEGIN EC PRIVATE KEY` for EC).
 */
export async function exportPrivateKeyPem(key: CryptoKey, pkcs8: boolean): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey("pkcs8", key));
  const keyObject = createPrivateKey({ key: der, format: "der", type: "pkcs8" });
  if (pkcs8) return keyObject.export({ format: "pem", type: "pkcs8" }) as string;
  return keyObject.export({ format: "pem", type: keyObject.asymmetricKeyType === "ec" ? "sec1" : "pkcs1" }) as string;
}

/** Imports a PEM private key (PKCS#1, SEC1 or PKCS#8; RSA or EC P-256) for signing. */
export async function importPrivateKeyPem(pem: string, source: string): Promise<{ privateKey: CryptoKey; publicKey: CryptoKey }> {
  let keyObject;
  try {
    keyObject = createPrivateKey(pem);
  } catch (e) {
    throw new AnchorConfigError(`${source}: not a PEM private key: ${(e as Error).message}`);
  }
  const type = keyObject.asymmetricKeyType;
  const der = keyObject.export({ format: "der", type: "pkcs8" });
  let algorithm: RsaHashedImportParams | EcKeyImportParams;
  if (type === "rsa") algorithm = { name: RSA_SIGNING.name, hash: "SHA-256" };
  else if (type === "ec" && keyObject.asymmetricKeyDetails?.namedCurve === "prime256v1") algorithm = { name: "ECDSA", namedCurve: "P-256" };
  else
    throw new AnchorConfigError(
      `${source}: unsupported key type ${type}${keyObject.asymmetricKeyDetails?.namedCurve ? ` (${keyObject.asymmetricKeyDetails.namedCurve})` : ""}; use RSA or EC P-256`,
    );
  const privateKey = await webcrypto.subtle.importKey("pkcs8", der, algorithm, true, ["sign"]);
  const jwk = await webcrypto.subtle.exportKey("jwk", privateKey);
  const publicJwk = type === "rsa" ? { kty: jwk.kty, n: jwk.n, e: jwk.e } : { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y };
  const publicKey = await webcrypto.subtle.importKey("jwk", publicJwk, algorithm, true, ["verify"]);
  return { privateKey, publicKey };
}
