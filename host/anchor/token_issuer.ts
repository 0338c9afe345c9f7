import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { calculateJwkThumbprint, exportJWK, exportPKCS8, generateKeyPair, importPKCS8, SignJWT } from "jose";
import { DEFAULT_LOCAL_ISSUER, DEFAULT_TOKEN_TTL_MS } from "./options.ts";
import { DEFAULT_TOKEN_AUDIENCE } from "./service_account_token.ts";

/**
 * A small service-account token issuer for a mesh without an orchestrator
 * (`mesh_ca token`, docs/mesh_ca.md "Workload tokens"): one ES256 key kept in
 * a directory, its public half published as `jwks.json` (what mesh_ca's
 * `--token-jwks` reads), and tokens shaped like an orchestrator's projected
 * service-account tokens.
 */

export const ISSUER_KEY_FILE = "issuer-key.pem";
export const ISSUER_JWKS_FILE = "jwks.json";
export { DEFAULT_LOCAL_ISSUER, DEFAULT_TOKEN_TTL_MS };
const ALG = "ES256";

export interface TokenIssuerKey {
  key: CryptoKey;
  kid: string;
  /** Path of the published key set. */
  jwksFile: string;
}

/**
 * The issuer key of `dir`: loaded when `issuer-key.pem` exists, otherwise
 * generated and written (key mode 0600, `jwks.json` beside it).
 */
export async function loadOrCreateIssuerKey(dir: string): Promise<TokenIssuerKey> {
  const keyFile = join(dir, ISSUER_KEY_FILE);
  const jwksFile = join(dir, ISSUER_JWKS_FILE);
  let key: CryptoKey;
  if (existsSync(keyFile)) {
    key = (await importPKCS8(readFileSync(keyFile, "utf8"), ALG, { extractable: true })) as CryptoKey;
  } else {
    mkdirSync(dir, { recursive: true });
    ({ privateKey: key } = (await generateKeyPair(ALG, { extractable: true })) as CryptoKeyPair);
    writeAtomically(keyFile, await exportPKCS8(key), 0o600);
  }
  const { d: _private, ...publicJwk } = await exportJWK(key);
  const kid = await calculateJwkThumbprint(publicJwk);
  const jwks = JSON.stringify({ keys: [{ ...publicJwk, kid, alg: ALG, use: "sig" }] }, null, 2) + "\n";
  if (!existsSync(jwksFile) || readFileSync(jwksFile, "utf8") !== jwks) writeAtomically(jwksFile, jwks, 0o644);
  return { key, kid, jwksFile };
}

export interface TokenClaims {
  namespace: string;
  serviceAccount: string;
  /** `iss`; default `mesh-token-issuer`. */
  issuer?: string;
  /** `aud`; default `mesh-ca`. */
  audiences?: string[];
  ttlMs?: number;
  now?: number;
}

/**
 * A token for `system:serviceaccount:<namespace>:<serviceAccount>`, with the
 * orchestrator's service-account claim (`orch.io`) beside the subject.
 */
export async function mintServiceAccountToken(issuerKey: TokenIssuerKey, claims: TokenClaims): Promise<string> {
  const now = Math.floor((claims.now ?? Date.now()) / 1000);
  const ttlSeconds = Math.max(1, Math.round((claims.ttlMs ?? DEFAULT_TOKEN_TTL_MS) / 1000));
  return await new SignJWT({ "orch.io": { namespace: claims.namespace, serviceaccount: { name: claims.serviceAccount } } })
    .setProtectedHeader({ alg: ALG, kid: issuerKey.kid, typ: "JWT" })
    .setIssuer(claims.issuer ?? DEFAULT_LOCAL_ISSUER)
    .setSubject(`system:serviceaccount:${claims.namespace}:${claims.serviceAccount}`)
    .setAudience(claims.audiences ?? [DEFAULT_TOKEN_AUDIENCE])
    .setIssuedAt(now)
    .setNotBefore(now)
    .setExpirationTime(now + ttlSeconds)
    .sign(issuerKey.key);
}

/** Writes a token file (mode 0600) atomically, so a reader never sees half a token. */
export function writeTokenFile(path: string, token: string): void {
  writeAtomically(path, `${token}\n`, 0o600);
}

function writeAtomically(path: string, text: string, mode: number): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode });
  renameSync(tmp, path);
}
