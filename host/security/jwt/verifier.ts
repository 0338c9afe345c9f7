import { type JWTPayload, type JWTVerifyGetKey, type JWTVerifyOptions, type JWSHeaderParameters, errors as joseErrors, jwtVerify } from "jose";
import { JwksError, type KeySet } from "./jwks.ts";

/**
 * One token against the rules that read its location (Envoy jwt_authn
 * authenticator + google/jwt_verify_lib; security.md §4.3). The check order
 * decides which message a bad token gets: parse → issuer → time window →
 * audience → key lookup and signature. The first four look at the unverified
 * envelope only to pick the upstream message; acceptance is always jose's
 * `jwtVerify` with the rule's issuer and audiences, the algorithms the key's
 * type allows, and the injected clock.
 */

export type JwtFailureCode =
  | "JWT_BAD_FORMAT"
  | "JWT_HEADER_BAD_BASE64"
  | "JWT_HEADER_BAD_JSON"
  | "JWT_HEADER_BAD_ALG"
  | "JWT_HEADER_ALG_NOT_SUPPORTED"
  | "JWT_HEADER_BAD_KID"
  | "JWT_PAYLOAD_BAD_BASE64"
  | "JWT_PAYLOAD_BAD_JSON"
  | "JWT_PAYLOAD_BAD_CLAIM"
  | "JWT_SIGNATURE_BAD_BASE64"
  | "JWT_UNKNOWN_ISSUER"
  | "JWT_NOT_YET_VALID"
  | "JWT_EXPIRED"
  | "JWT_AUDIENCE_NOT_ALLOWED"
  | "JWKS_NO_MATCHING_KEY"
  | "JWT_VERIFICATION_FAILED"
  | "JWKS_FETCH_FAILED";

export interface JwtFailure {
  readonly code: JwtFailureCode;
  /** 403 for an audience mismatch, 401 otherwise (security.md §4.3). */
  readonly status: 401 | 403;
  /** The exact text upstream users see as the response body. */
  readonly message: string;
}

/** jwt_verify_lib `src/status.cc` texts. */
export const JWT_MESSAGES = Object.freeze({
  JWT_BAD_FORMAT: "Jwt is not in the form of Header.Payload.Signature with two dots and 3 sections",
  JWT_HEADER_BAD_BASE64: "Jwt header is an invalid Base64url encoded",
  JWT_HEADER_BAD_JSON: "Jwt header is an invalid JSON",
  JWT_HEADER_BAD_ALG: "Jwt header [alg] field is required and must be a string",
  JWT_HEADER_ALG_NOT_SUPPORTED: "Jwt header [alg] is not supported",
  JWT_HEADER_BAD_KID: "Jwt header [kid] field is not a string",
  JWT_PAYLOAD_BAD_BASE64: "Jwt payload is an invalid Base64url encoded",
  JWT_PAYLOAD_BAD_JSON: "Jwt payload is an invalid JSON",
  JWT_SIGNATURE_BAD_BASE64: "Jwt signature is an invalid Base64url encoded",
  JWT_UNKNOWN_ISSUER: "Jwt issuer is not configured",
  JWT_NOT_YET_VALID: "Jwt not yet valid",
  JWT_EXPIRED: "Jwt is expired",
  JWT_AUDIENCE_NOT_ALLOWED: "Audiences in Jwt are not allowed",
  JWKS_NO_MATCHING_KEY: "Jwks doesn't have key to match kid or alg from Jwt",
  JWT_VERIFICATION_FAILED: "Jwt verification fails",
  JWKS_FETCH_FAILED: "Jwks remote fetch is failed",
});

export function failure(code: Exclude<JwtFailureCode, "JWT_PAYLOAD_BAD_CLAIM">): JwtFailure {
  return Object.freeze({ code, status: code === "JWT_AUDIENCE_NOT_ALLOWED" ? 403 : 401, message: JWT_MESSAGES[code] });
}

function claimFailure(message: string): JwtFailure {
  return Object.freeze({ code: "JWT_PAYLOAD_BAD_CLAIM", status: 401, message });
}

/** The algorithms upstream accepts at parse time; anything else (`none` included) is refused before any key is looked at. */
export const PARSE_ALGORITHMS: ReadonlySet<string> = new Set([
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "HS256",
  "HS384",
  "HS512",
  "EdDSA",
]);

export interface ParsedJwt {
  readonly header: JWSHeaderParameters & { readonly alg: string };
  readonly payload: JWTPayload;
  /** The payload segment as sent (base64url), for outputPayloadToHeader. */
  readonly payloadSegment: string;
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;

function decodeSegment(segment: string): string | undefined {
  if (!BASE64URL.test(segment) || segment.length % 4 === 1) return undefined;
  return Buffer.from(segment, "base64url").toString("utf8");
}

function jsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The envelope checks of jwt_verify_lib `Jwt::parseFromString`, with its messages. */
export function parseJwt(token: string): ParsedJwt | JwtFailure {
  const parts = token.split(".");
  if (parts.length !== 3 || parts.some((p) => p === "")) return failure("JWT_BAD_FORMAT");
  const headerText = decodeSegment(parts[0]);
  if (headerText === undefined) return failure("JWT_HEADER_BAD_BASE64");
  const header = jsonObject(headerText);
  if (!header) return failure("JWT_HEADER_BAD_JSON");
  if (typeof header.alg !== "string") return failure("JWT_HEADER_BAD_ALG");
  if (!PARSE_ALGORITHMS.has(header.alg)) return failure("JWT_HEADER_ALG_NOT_SUPPORTED");
  if (header.kid !== undefined && typeof header.kid !== "string") return failure("JWT_HEADER_BAD_KID");
  const payloadText = decodeSegment(parts[1]);
  if (payloadText === undefined) return failure("JWT_PAYLOAD_BAD_BASE64");
  const payload = jsonObject(payloadText);
  if (!payload) return failure("JWT_PAYLOAD_BAD_JSON");
  for (const claim of ["iss", "sub", "jti"]) {
    if (payload[claim] !== undefined && typeof payload[claim] !== "string") return claimFailure(`Jwt payload [${claim}] field is not a string`);
  }
  for (const claim of ["iat", "nbf", "exp"]) {
    const v = payload[claim];
    if (v === undefined) continue;
    if (typeof v !== "number" || !Number.isInteger(v)) return claimFailure(`Jwt payload [${claim}] field is not an integer`);
    if (v < 0) return claimFailure(`Jwt payload [${claim}] field is not a positive 64 bit integer`);
  }
  const aud = payload.aud;
  if (aud !== undefined && typeof aud !== "string" && !(Array.isArray(aud) && aud.every((a) => typeof a === "string"))) {
    return claimFailure("Jwt payload [aud] field is not a string or string list");
  }
  if (!BASE64URL.test(parts[2]) || parts[2].length % 4 === 1) return failure("JWT_SIGNATURE_BAD_BASE64");
  return Object.freeze({ header: header as ParsedJwt["header"], payload: payload as JWTPayload, payloadSegment: parts[1] });
}

export function isFailure(v: unknown): v is JwtFailure {
  return typeof v === "object" && v !== null && "status" in v && "code" in v;
}

/**
 * Upstream compares audiences without an `http://`/`https://` prefix and a
 * trailing `/` (jwt_verify_lib `check_audience.cc`).
 */
export function normalizeAudience(a: string): string {
  return a.replace(/^https?:\/\//, "").replace(/\/$/, "");
}

/** Every spelling of the configured audiences that normalizes to one of them, so jose's exact check equals upstream's. */
export function audienceSpellings(audiences: readonly string[]): string[] {
  const out = new Set<string>();
  for (const a of audiences) {
    const n = normalizeAudience(a);
    for (const scheme of ["", "http://", "https://"]) for (const slash of ["", "/"]) out.add(`${scheme}${n}${slash}`);
  }
  return [...out];
}

export function audienceAllowed(payload: JWTPayload, audiences: readonly string[]): boolean {
  if (audiences.length === 0) return true;
  const allowed = new Set(audiences.map(normalizeAudience));
  const tokenAud = payload.aud === undefined ? [] : Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  return tokenAud.some((a) => allowed.has(normalizeAudience(a)));
}

/**
 * The signature algorithms a key of this type may verify: RSA → RS256…PS512,
 * EC → the ES* of its curve, OKP Ed25519 → EdDSA; a key that names its
 * `alg` allows only that. Symmetric (`oct`) keys in a key set allow nothing
 * (jose refuses them too), so an HS256 token signed with an RSA public key
 * (algorithm confusion) finds no key.
 */
export function algorithmsForKey(jwk: { kty?: unknown; crv?: unknown; alg?: unknown }): string[] {
  let family: string[];
  switch (jwk.kty) {
    case "RSA":
      family = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512"];
      break;
    case "EC":
      family = jwk.crv === "P-256" ? ["ES256"] : jwk.crv === "P-384" ? ["ES384"] : jwk.crv === "P-521" ? ["ES512"] : [];
      break;
    case "OKP":
      family = jwk.crv === "Ed25519" ? ["EdDSA"] : [];
      break;
    default:
      family = [];
  }
  return typeof jwk.alg === "string" ? family.filter((a) => a === jwk.alg) : family;
}

/** What a verifier needs of a JWT rule. */
export interface VerifierRule {
  readonly issuer: string;
  readonly audiences: readonly string[];
  readonly keySet: KeySet;
}

export interface VerifyOptions {
  /** Milliseconds since the epoch. */
  readonly now: () => number;
  /** Allowance on `exp` and `nbf`, in seconds (default 0: rule 11, expiry enforced at `exp`). */
  readonly clockSkewSeconds?: number;
}

export type VerifyResult =
  | { readonly ok: true; readonly rule: VerifierRule; readonly parsed: ParsedJwt; readonly payload: JWTPayload }
  | { readonly ok: false; readonly failure: JwtFailure };

/**
 * Verifies one token against the rules of its location. Rules with the
 * token's issuer are tried in order; the token is valid when one accepts it.
 *
 * @example
 * const r = await verifyToken(token, [{ issuer, audiences: [], keySet }], { now: Date.now });
 * if (!r.ok) reply(r.failure.status, r.failure.message);
 */
export async function verifyToken(token: string, rules: readonly VerifierRule[], options: VerifyOptions): Promise<VerifyResult> {
  const parsed = parseJwt(token);
  if (isFailure(parsed)) return { ok: false, failure: parsed };
  const { payload } = parsed;
  const candidates = rules.filter((r) => r.issuer === payload.iss);
  if (candidates.length === 0) return { ok: false, failure: failure("JWT_UNKNOWN_ISSUER") };
  // Time window at the injected clock, as jose checks it (RFC 7519 §4.1.4: invalid at and after exp).
  const skew = options.clockSkewSeconds ?? 0;
  const nowSec = Math.floor(options.now() / 1000);
  if (payload.nbf !== undefined && payload.nbf > nowSec + skew) return { ok: false, failure: failure("JWT_NOT_YET_VALID") };
  if (payload.exp !== undefined && payload.exp <= nowSec - skew) return { ok: false, failure: failure("JWT_EXPIRED") };
  const audienceOk = candidates.filter((r) => audienceAllowed(payload, r.audiences));
  if (audienceOk.length === 0) return { ok: false, failure: failure("JWT_AUDIENCE_NOT_ALLOWED") };
  let first: JwtFailure | undefined;
  for (const rule of audienceOk) {
    const result = await verifyWithRule(token, parsed, rule, options);
    if (result.ok) return result;
    first ??= result.failure;
  }
  return { ok: false, failure: first! };
}

async function verifyWithRule(token: string, parsed: ParsedJwt, rule: VerifierRule, options: VerifyOptions): Promise<VerifyResult> {
  const { header } = parsed;
  let keys;
  try {
    keys = await rule.keySet.keysFor(header);
  } catch (e) {
    if (e instanceof JwksError) return { ok: false, failure: failure("JWKS_FETCH_FAILED") };
    throw e;
  }
  // Explicit algorithms from the key types present: `alg: none` never gets here, HS* never has a key.
  const usable = keys.jwks.keys.filter((k) => header.kid === undefined || k.kid === undefined || k.kid === header.kid);
  const algorithms = [...new Set(usable.flatMap(algorithmsForKey))];
  if (!algorithms.includes(header.alg)) return { ok: false, failure: failure("JWKS_NO_MATCHING_KEY") };
  const verifyOptions: JWTVerifyOptions = {
    algorithms,
    issuer: rule.issuer,
    audience: rule.audiences.length > 0 ? audienceSpellings(rule.audiences) : undefined,
    currentDate: new Date(options.now()),
    clockTolerance: options.clockSkewSeconds ?? 0,
  };
  // Upstream also tries keys without a kid when the token names one; jose's selection requires equal kids.
  const kidless = header.kid !== undefined && keys.jwks.keys.some((k) => k.kid === undefined);
  const getKey: JWTVerifyGetKey = kidless
    ? (h, t) =>
        keys.getKey(h, t).catch((e: unknown) => {
          if (e instanceof joseErrors.JWKSNoMatchingKey) return keys.getKey({ ...h, kid: undefined }, t);
          throw e;
        })
    : keys.getKey;
  try {
    const { payload } = await jwtVerify(token, getKey, verifyOptions);
    return { ok: true, rule, parsed, payload };
  } catch (e) {
    if (e instanceof joseErrors.JWKSMultipleMatchingKeys) {
      // Upstream tries every key that matches (no kid in the token, or several keys with one kid).
      for await (const key of e as unknown as AsyncIterable<CryptoKey>) {
        try {
          const { payload } = await jwtVerify(token, key, verifyOptions);
          return { ok: true, rule, parsed, payload };
        } catch {
          // next key
        }
      }
      return { ok: false, failure: failure("JWT_VERIFICATION_FAILED") };
    }
    return { ok: false, failure: mapJoseError(e) };
  }
}

function mapJoseError(e: unknown): JwtFailure {
  if (e instanceof joseErrors.JWTExpired) return failure("JWT_EXPIRED");
  if (e instanceof joseErrors.JWTClaimValidationFailed) {
    if (e.claim === "nbf") return failure("JWT_NOT_YET_VALID");
    if (e.claim === "aud") return failure("JWT_AUDIENCE_NOT_ALLOWED");
    if (e.claim === "iss") return failure("JWT_UNKNOWN_ISSUER");
    return failure("JWT_VERIFICATION_FAILED");
  }
  if (e instanceof joseErrors.JWKSNoMatchingKey || e instanceof joseErrors.JOSEAlgNotAllowed || e instanceof joseErrors.JOSENotSupported) {
    return failure("JWKS_NO_MATCHING_KEY");
  }
  if (e instanceof joseErrors.JOSEError) return failure("JWT_VERIFICATION_FAILED");
  throw e;
}
