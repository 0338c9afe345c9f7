import { createHmac } from "node:crypto";
import { type CryptoKey, type JWK, type KeyObject, SignJWT, exportJWK, exportSPKI, generateKeyPair } from "jose";
import { DEFAULT_EXPIRED_AGO_S, DEFAULT_NOT_YET_VALID_IN_S, DEFAULT_TOKEN_LIFETIME_S, type TokenKey, type TokenSpec } from "./scenario.ts";

/**
 * The signing keys of a simulate run and the tokens minted from descriptors:
 * `key-1` (published by every jwks-server and by `${JWKS:key-1}`), `key-2`
 * (never published) and `rogue` (never published, signs with key-1's kid:
 * an invalid signature). RS256, so algorithm confusion has an RSA public key
 * to misuse as an HMAC secret.
 */
export interface TokenKeys {
  /** The JSON Web Key Set publishing one key, `{"keys":[{kid, alg, use, n, e, kty}]}`. */
  jwks(key: TokenKey): { keys: JWK[] };
  /** A token for the descriptor, minted `clockOffsetSeconds` in the past (never sleeps). */
  mint(spec: TokenSpec, clockOffsetSeconds: number, nowMs?: number): Promise<string>;
}

/** `malformed`: not three dot-separated sections. */
export const MALFORMED_TOKEN = "deadbeef";

type Pair = { privateKey: CryptoKey | KeyObject; publicKey: CryptoKey | KeyObject };
const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");

/** Generates the three key pairs (once per run). */
export async function createTokenKeys(): Promise<TokenKeys> {
  const [k1, k2, rogue] = await Promise.all([generateKeyPair("RS256", { extractable: true }), generateKeyPair("RS256", { extractable: true }), generateKeyPair("RS256", { extractable: true })]);
  const pairs: Record<TokenKey | "rogue", Pair> = { "key-1": k1, "key-2": k2, rogue };
  const published = new Map<TokenKey, JWK>();
  for (const key of ["key-1", "key-2"] as const) published.set(key, { ...(await exportJWK(pairs[key].publicKey)), kid: key, alg: "RS256", use: "sig" });
  const publicPem = await exportSPKI(k1.publicKey);
  return {
    jwks: (key) => ({ keys: [published.get(key)!] }),
    async mint(spec, clockOffsetSeconds, nowMs = Date.now()) {
      const t = Math.floor(nowMs / 1000) - clockOffsetSeconds;
      const exp =
        spec.kind === "expired" ? t + Math.min(spec.expSecondsFromNow ?? -DEFAULT_EXPIRED_AGO_S, -1) : t + (spec.expSecondsFromNow ?? DEFAULT_TOKEN_LIFETIME_S);
      const nbf = spec.kind === "not-yet-valid" ? t + Math.max(spec.nbfSecondsFromNow ?? DEFAULT_NOT_YET_VALID_IN_S, 1) : spec.nbfSecondsFromNow === undefined ? undefined : t + spec.nbfSecondsFromNow;
      const payload: Record<string, unknown> = { ...spec.claims, iss: spec.iss, sub: spec.sub, iat: t, exp };
      if (nbf !== undefined) payload.nbf = nbf;
      if (spec.aud) payload.aud = [...spec.aud];
      switch (spec.kind) {
        case "malformed":
          return MALFORMED_TOKEN;
        case "alg-none":
          return `${b64({ alg: "none", typ: "JWT" })}.${b64(payload)}.`;
        case "alg-confusion": {
          // HS256 keyed with the published RSA public key (PEM): accepted by a
          // verifier that lets the token pick the algorithm (CVE-2015-9235 class).
          const input = `${b64({ alg: "HS256", kid: spec.key, typ: "JWT" })}.${b64(payload)}`;
          return `${input}.${createHmac("sha256", publicPem).update(input).digest("base64url")}`;
        }
        default: {
          const signer = spec.kind === "invalid-signature" ? pairs.rogue : pairs[spec.key];
          const kid = spec.kind === "invalid-signature" ? "key-1" : spec.key;
          return new SignJWT(payload).setProtectedHeader({ alg: "RS256", kid, typ: "JWT" }).sign(signer.privateKey);
        }
      }
    },
  };
}
