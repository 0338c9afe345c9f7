import { createHmac } from "node:crypto";
import { type CryptoKey, type JWK, type KeyObject, SignJWT, exportJWK, exportSPKI, generateKeyPair } from "jose";
import {
  DEFAULT_EXPIRED_AGO_S,
  DEFAULT_NOT_YET_VALID_IN_S,
  DEFAULT_TOKEN_LIFETIME_S,
  type Scenario,
  TOKEN_KEYS,
  type TokenKey,
  type TokenSpec,
} from "./scenario.ts";

/** `${JWKS:key-1}`: that key's JSON Web Key Set, in any string of a resource. */
export const PLACEHOLDER = /\$\{JWKS:([^}]*)\}/g;

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

type KeyName = TokenKey | "rogue";

/**
 * The key pairs a file's scenarios use: `${JWKS:key-N}` in a resource, a
 * jwks-server (key-1), a token's key (`invalid-signature`: rogue,
 * `alg-confusion`: key-1's public key). An RSA key pair costs a quarter of a
 * second of CPU: a file without tokens makes none.
 */
export function tokenKeysNeeded(scenarios: readonly Scenario[]): Set<KeyName> {
  const needed = new Set<KeyName>();
  for (const s of scenarios) {
    for (const r of s.resources)
      for (const m of JSON.stringify(r.value ?? null).matchAll(PLACEHOLDER)) if ((TOKEN_KEYS as readonly string[]).includes(m[1])) needed.add(m[1] as TokenKey);
    if (s.workloads.some((w) => w.kind === "jwks-server")) needed.add("key-1");
    for (const t of s.request.tokens) {
      if (t.kind === "invalid-signature") needed.add("rogue");
      else if (t.kind === "alg-confusion") needed.add("key-1");
      else if (t.kind !== "malformed" && t.kind !== "alg-none") needed.add(t.key);
    }
  }
  return needed;
}

/** Generates the key pairs named (once per run); the others are never used. */
export async function createTokenKeys(names: Iterable<KeyName> = ["key-1", "key-2", "rogue"]): Promise<TokenKeys> {
  const list = [...new Set(names)];
  const generated = await Promise.all(list.map(() => generateKeyPair("RS256", { extractable: true })));
  const pairs = new Map<KeyName, Pair>(list.map((name, i) => [name, generated[i]]));
  const pair = (name: KeyName): Pair => {
    const p = pairs.get(name);
    if (!p) throw new Error(`token key ${name} was not generated (tokenKeysNeeded missed it)`);
    return p;
  };
  const published = new Map<TokenKey, JWK>();
  for (const key of TOKEN_KEYS) if (pairs.has(key)) published.set(key, { ...(await exportJWK(pair(key).publicKey)), kid: key, alg: "RS256", use: "sig" });
  const publicPem = pairs.has("key-1") ? await exportSPKI(pair("key-1").publicKey) : "";
  return {
    jwks: (key) => {
      pair(key);
      return { keys: [published.get(key)!] };
    },
    async mint(spec, clockOffsetSeconds, nowMs = Date.now()) {
      const t = Math.floor(nowMs / 1000) - clockOffsetSeconds;
      const exp =
        spec.kind === "expired" ? t + Math.min(spec.expSecondsFromNow ?? -DEFAULT_EXPIRED_AGO_S, -1) : t + (spec.expSecondsFromNow ?? DEFAULT_TOKEN_LIFETIME_S);
      const nbf =
        spec.kind === "not-yet-valid"
          ? t + Math.max(spec.nbfSecondsFromNow ?? DEFAULT_NOT_YET_VALID_IN_S, 1)
          : spec.nbfSecondsFromNow === undefined
            ? undefined
            : t + spec.nbfSecondsFromNow;
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
          const signer = pair(spec.kind === "invalid-signature" ? "rogue" : spec.key);
          const kid = spec.kind === "invalid-signature" ? "key-1" : spec.key;
          return new SignJWT(payload).setProtectedHeader({ alg: "RS256", kid, typ: "JWT" }).sign(signer.privateKey);
        }
      }
    },
  };
}
