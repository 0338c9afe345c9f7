import { readFileSync, statSync } from "node:fs";
import { createLocalJWKSet, createRemoteJWKSet, errors as joseErrors, type JSONWebKeySet, type JWTVerifyGetKey, jwtVerify } from "jose";
import { AnchorConfigError, AnchorError } from "./errors.ts";

/**
 * Service-account tokens: how a workload proves its identity to mesh_ca for
 * its first certificate (upstream's JWT authenticator). A token's subject is
 * `system:serviceaccount:<namespace>:<service-account>`, as orchestrator
 * tokens have it; `host/anchor/token_issuer.ts` mints such tokens for a mesh
 * without an orchestrator.
 */

/** `JWT_POLICY` (spec 2): third-party tokens carry an audience; first-party (legacy) ones do not. */
export type JwtPolicy = "third-party-jwt" | "first-party-jwt";
export const JWT_POLICIES: readonly JwtPolicy[] = ["third-party-jwt", "first-party-jwt"];

/** The audience mesh_ca expects of third-party tokens when `AUDIENCE` is empty (upstream's `istio-ca`, renamed). */
export const DEFAULT_TOKEN_AUDIENCE = "mesh-ca";
const SUBJECT_PREFIX = "system:serviceaccount:";
/** Allowance on exp/nbf between the issuer's clock and ours. */
const CLOCK_SKEW_SECONDS = 60;

export interface TokenSettings {
  policy: JwtPolicy;
  /** `TOKEN_ISSUER`: the `iss` every token must carry; empty = any issuer whose keys are configured. */
  issuer: string;
  /** `AUDIENCE` (comma list) for third-party-jwt; empty for first-party-jwt (not checked). */
  audiences: string[];
  /** `--token-jwks` / `TOKEN_JWKS`: a JWKS file or an http(s) URL; empty = token authentication off. */
  jwks: string;
}

/** The token settings of mesh_ca from `JWT_POLICY`, `TOKEN_ISSUER`, `AUDIENCE` and `TOKEN_JWKS` (overridden by `--token-jwks`). */
export function tokenSettingsFrom(env: NodeJS.ProcessEnv, jwksFlag: string | undefined): TokenSettings {
  const policy = (env.JWT_POLICY || "third-party-jwt") as JwtPolicy;
  if (!JWT_POLICIES.includes(policy)) throw new AnchorConfigError(`JWT_POLICY=${JSON.stringify(env.JWT_POLICY)}: expected one of ${JWT_POLICIES.join(", ")}`);
  const listed = (env.AUDIENCE ?? "")
    .split(",")
    .map((a) => a.trim())
    .filter(Boolean);
  const audiences = policy === "first-party-jwt" ? [] : listed.length > 0 ? listed : [DEFAULT_TOKEN_AUDIENCE];
  const jwks = jwksFlag || env.TOKEN_JWKS || "";
  if (jwks && /^[a-z]+:\/\//i.test(jwks) && !/^https?:\/\//i.test(jwks))
    throw new AnchorConfigError(`--token-jwks ${JSON.stringify(jwks)}: expected a file or an http(s) URL`);
  return { policy, issuer: env.TOKEN_ISSUER ?? "", audiences, jwks };
}

/** Who a verified token says the caller is. */
export interface TokenCaller {
  namespace: string;
  serviceAccount: string;
  issuer: string;
  subject: string;
}

/** `system:serviceaccount:<ns>:<sa>` → namespace and service account; undefined for any other subject. */
export function serviceAccountOfSubject(subject: string | undefined): { namespace: string; serviceAccount: string } | undefined {
  if (!subject?.startsWith(SUBJECT_PREFIX)) return undefined;
  const parts = subject.slice(SUBJECT_PREFIX.length).split(":");
  if (parts.length !== 2 || !parts[0] || !parts[1]) return undefined;
  return { namespace: parts[0], serviceAccount: parts[1] };
}

/**
 * Verifies service-account tokens with jose against the configured keys: a
 * JWKS file (re-read when it changes, so a new issuer key is picked up
 * without a restart) or a URL (jose's remote key set: cached, refetched for
 * an unknown `kid`). Checks signature, `iss` (when TOKEN_ISSUER is set),
 * `aud` (third-party-jwt), `exp`/`nbf` with 60 s of skew, and the subject form.
 */
export class ServiceAccountTokenVerifier {
  private fileKeys?: { mtimeMs: number; size: number; keys: JWTVerifyGetKey };
  private readonly remoteKeys?: JWTVerifyGetKey;

  constructor(
    readonly settings: TokenSettings,
    private readonly now: () => number = Date.now,
  ) {
    if (/^https?:\/\//i.test(settings.jwks)) this.remoteKeys = createRemoteJWKSet(new URL(settings.jwks), { timeoutDuration: 5000, cooldownDuration: 5000 });
    else if (settings.jwks) this.keys(); // a missing or malformed file stops the start, naming it
  }

  /** Throws AnchorError UNAUTHENTICATED naming what is wrong with the token. */
  async verify(token: string): Promise<TokenCaller> {
    let payload;
    try {
      ({ payload } = await jwtVerify(token, this.keys(), {
        issuer: this.settings.issuer || undefined,
        audience: this.settings.audiences.length > 0 ? this.settings.audiences : undefined,
        requiredClaims: ["exp", "sub"],
        clockTolerance: CLOCK_SKEW_SECONDS,
        currentDate: new Date(this.now()),
      }));
    } catch (e) {
      throw new AnchorError("UNAUTHENTICATED", `service-account token refused: ${tokenFailure(e)}`);
    }
    const account = serviceAccountOfSubject(payload.sub);
    if (!account)
      throw new AnchorError(
        "UNAUTHENTICATED",
        `service-account token refused: subject ${JSON.stringify(payload.sub)} is not system:serviceaccount:<namespace>:<service-account>`,
      );
    return { ...account, issuer: payload.iss ?? "", subject: payload.sub! };
  }

  private keys(): JWTVerifyGetKey {
    if (this.remoteKeys) return this.remoteKeys;
    const file = this.settings.jwks;
    let stat;
    try {
      stat = statSync(file);
    } catch (e) {
      if (this.fileKeys) return this.fileKeys.keys; // keep the last good keys while the file is being replaced
      throw new AnchorConfigError(`--token-jwks ${file}: ${(e as Error).message}`);
    }
    if (this.fileKeys && this.fileKeys.mtimeMs === stat.mtimeMs && this.fileKeys.size === stat.size) return this.fileKeys.keys;
    try {
      const jwks = JSON.parse(readFileSync(file, "utf8")) as JSONWebKeySet;
      if (!Array.isArray(jwks?.keys)) throw new Error('expected a JSON Web Key Set {"keys": [...]}');
      this.fileKeys = { mtimeMs: stat.mtimeMs, size: stat.size, keys: createLocalJWKSet(jwks) };
    } catch (e) {
      if (this.fileKeys) return this.fileKeys.keys;
      throw new AnchorConfigError(`--token-jwks ${file}: ${(e as Error).message}`);
    }
    return this.fileKeys.keys;
  }
}

function tokenFailure(e: unknown): string {
  if (e instanceof joseErrors.JWTExpired) return "token is expired";
  if (e instanceof joseErrors.JWTClaimValidationFailed) return `claim ${e.claim}: ${e.message}`;
  if (e instanceof joseErrors.JWKSNoMatchingKey) return "no configured key matches the token's kid/alg";
  if (e instanceof joseErrors.JWSSignatureVerificationFailed) return "signature does not verify";
  if (e instanceof joseErrors.JWSInvalid || e instanceof joseErrors.JWTInvalid) return `not a valid JWT: ${e.message}`;
  if (e instanceof AnchorConfigError) return e.message;
  return (e as Error)?.message ?? String(e);
}
