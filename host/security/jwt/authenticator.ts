import type { JWTPayload } from "jose";
import type { Resource } from "../../config/catalog.ts";
import type { ClaimToHeader, JwtRule } from "../../config/resources/security.ts";
import { selectingPolicies } from "../../mesh/policies.ts";
import { DEFAULT_ROOT_NAMESPACE, type Workload, policyName } from "../workload.ts";
import { type HeaderPairs, type TokenLocation, extractTokens, locationKey, removeQueryParams, tokenLocations } from "./extractor.ts";
import type { JwksCache } from "./jwks.ts";
import { type JwtFailure, type VerifierRule, verifyToken } from "./verifier.ts";

/**
 * RequestAuthentication for one workload (spec rules 8–11; security.md §4):
 * no token → anonymous (accepted, no principal); any presented token that
 * fails → 401 (403 for an audience mismatch) with `WWW-Authenticate`; every
 * presented token must be valid; a valid token yields the request principal
 * `<iss>/<sub>` and its payload. Header and path changes are returned as
 * values for the sidecar to apply.
 */

/** The filter property the verified payload JSON goes to (read by assembly/proxy/http_filter.ts as `request.auth.*`). */
export const AUTHN_PAYLOAD_PROPERTY = Object.freeze(["mesh", "authn_payload"] as const);
/** WWW-Authenticate realm: the original URI's path is cut to this length (Envoy `buildOriginalUri`). */
export const MAX_REALM_PATH_LENGTH = 256;

export interface AuthnRequest {
  readonly method: string;
  /** `:path` as received, query included. */
  readonly path: string;
  /** `:authority` / Host. */
  readonly host: string;
  /** `http` or `https`, for the realm. */
  readonly scheme: string;
  /** Lower-case names. */
  readonly headers: HeaderPairs;
}

/** What the sidecar must change on the request before it goes on (applied in this order). */
export interface AuthnEffects {
  /** Headers to delete: consumed token headers and every header an output option names (anti-spoofing). */
  readonly removeHeaders: readonly string[];
  /** Headers to add after the removals (outputPayloadToHeader, outputClaimToHeaders). */
  readonly setHeaders: ReadonlyArray<readonly [string, string]>;
  /** The path to forward: consumed query-parameter tokens removed; otherwise the path as received. */
  readonly path: string;
}

export type AuthnResult =
  | {
      readonly outcome: "anonymous";
      /** `no_token`, `no_policy` or `cors_preflight`. */
      readonly reason: string;
      readonly effects: AuthnEffects;
    }
  | {
      readonly outcome: "authenticated";
      /** `<iss>/<sub>` of the first token (location order). */
      readonly principal: string;
      readonly payload: JWTPayload;
      /** The payload as JSON, for the filter property `mesh.authn_payload`. */
      readonly payloadJson: string;
      /** Every verified token's payload, in location order. */
      readonly payloads: readonly JWTPayload[];
      readonly effects: AuthnEffects;
    }
  | {
      readonly outcome: "denied";
      readonly status: 401 | 403;
      /** Plain-text body, exactly upstream's. */
      readonly body: string;
      readonly responseHeaders: Readonly<Record<string, string>>;
      readonly failure: JwtFailure;
      /** The location of the token that failed. */
      readonly location: TokenLocation;
    };

export interface AuthenticatorOptions {
  readonly jwks: JwksCache;
  /** Milliseconds since the epoch. */
  readonly now?: () => number;
  /** Allowance on exp/nbf in seconds; default 0 (rule 11). Upstream's default is 60. */
  readonly clockSkewSeconds?: number;
}

interface CompiledRule extends VerifierRule {
  readonly source: JwtRule;
  /** `ns/name` of the RequestAuthentication. */
  readonly policy: string;
}

interface LocationRules {
  readonly location: TokenLocation;
  readonly rules: CompiledRule[];
}

/** One rule with the policy it came from. */
export interface NamedJwtRule {
  readonly policy: string;
  readonly rule: JwtRule;
}

/** The merged jwtRules of every RequestAuthentication selecting the workload, sorted by issuer (security.md §4.1). */
export function jwtRulesFor(
  policies: readonly Resource<"RequestAuthentication">[],
  workload: Pick<Workload, "namespace" | "labels">,
  rootNamespace = DEFAULT_ROOT_NAMESPACE,
): NamedJwtRule[] {
  const rules = selectingPolicies(policies, workload, rootNamespace).flatMap((p) => p.spec.jwtRules.map((rule) => ({ policy: policyName(p), rule })));
  // Stable sort keeps the input order among rules of one issuer.
  return rules.sort((a, b) => (a.rule.issuer < b.rule.issuer ? -1 : a.rule.issuer > b.rule.issuer ? 1 : 0));
}

function realm(request: AuthnRequest): string {
  return `${request.scheme}://${request.host}${request.path.slice(0, MAX_REALM_PATH_LENGTH)}`;
}

function isCorsPreflight(request: AuthnRequest): boolean {
  if (request.method !== "OPTIONS") return false;
  const names = new Set(request.headers.map(([n]) => n));
  return names.has("origin") && names.has("access-control-request-method");
}

/** Claim values upstream copies to headers: strings, numbers and booleans. */
function claimHeaderValue(payload: JWTPayload, claim: string): string | undefined {
  const v = payload[claim];
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return undefined;
}

/**
 * The compiled RequestAuthentication of a workload. Build it once per
 * configuration; `authenticate` is called per request.
 *
 * @example
 * const authn = Authenticator.create(jwtRulesFor(catalog.byKind.RequestAuthentication, workload), { jwks: new JwksCache() });
 * const r = await authn.authenticate({ method: "GET", path: "/ip", host: "httpbin", scheme: "http", headers });
 * if (r.outcome === "denied") reply(r.status, r.body, r.responseHeaders);
 */
export class Authenticator {
  private readonly locations: LocationRules[];
  private readonly outputHeaders: readonly string[];
  private readonly now: () => number;

  private constructor(
    readonly rules: readonly CompiledRule[],
    private readonly clockSkewSeconds: number,
    now: () => number,
  ) {
    this.now = now;
    const byKey = new Map<string, LocationRules>();
    for (const rule of rules) {
      for (const location of tokenLocations(rule.source)) {
        const key = locationKey(location);
        let entry = byKey.get(key);
        if (!entry) byKey.set(key, (entry = { location, rules: [] }));
        entry.rules.push(rule);
      }
    }
    // Envoy extracts header locations before query parameters.
    const all = [...byKey.values()];
    this.locations = [...all.filter((l) => l.location.kind === "header"), ...all.filter((l) => l.location.kind === "param")];
    const out = new Set<string>();
    for (const r of rules) {
      if (r.source.outputPayloadToHeader) out.add(r.source.outputPayloadToHeader.toLowerCase());
      for (const c of r.source.outputClaimToHeaders) out.add(c.header.toLowerCase());
    }
    this.outputHeaders = Object.freeze([...out]);
  }

  static create(rules: readonly NamedJwtRule[], options: AuthenticatorOptions): Authenticator {
    if (options.clockSkewSeconds !== undefined && !(options.clockSkewSeconds >= 0)) throw new RangeError("clockSkewSeconds must be 0 or more");
    const compiled = rules.map(
      ({ policy, rule }): CompiledRule =>
        Object.freeze({
          issuer: rule.issuer,
          audiences: rule.audiences,
          keySet: options.jwks.keySetFor(rule),
          source: rule,
          policy,
        }),
    );
    return new Authenticator(Object.freeze(compiled), options.clockSkewSeconds ?? 0, options.now ?? Date.now);
  }

  /** Whether any RequestAuthentication applies (without one every request is anonymous). */
  get active(): boolean {
    return this.rules.length > 0;
  }

  async authenticate(request: AuthnRequest): Promise<AuthnResult> {
    const anonymous = (reason: string): AuthnResult => ({
      outcome: "anonymous",
      reason,
      effects: Object.freeze({ removeHeaders: this.outputHeaders, setHeaders: [], path: request.path }),
    });
    if (!this.active) return anonymous("no_policy");
    if (isCorsPreflight(request)) return anonymous("cors_preflight");

    const found = this.locations.flatMap((l) => extractTokens(request, [l.location]).map((t) => ({ ...t, rules: l.rules })));
    if (found.length === 0) return anonymous("no_token");

    const verified: Array<{ payload: JWTPayload; segment: string; rule: CompiledRule; location: TokenLocation }> = [];
    for (const t of found) {
      const r = await verifyToken(t.token, t.rules, { now: this.now, clockSkewSeconds: this.clockSkewSeconds });
      if (!r.ok) {
        return {
          outcome: "denied",
          status: r.failure.status,
          body: r.failure.message,
          responseHeaders: Object.freeze({ "www-authenticate": `Bearer realm="${realm(request)}", error="invalid_token"` }),
          failure: r.failure,
          location: t.location,
        };
      }
      verified.push({ payload: r.payload, segment: r.parsed.payloadSegment, rule: r.rule as CompiledRule, location: t.location });
    }

    const removeHeaders = new Set(this.outputHeaders);
    const removeParams = new Set<string>();
    const setHeaders: Array<[string, string]> = [];
    for (const v of verified) {
      const rule = v.rule.source;
      if (!rule.forwardOriginalToken) {
        if (v.location.kind === "header") removeHeaders.add(v.location.name);
        else removeParams.add(v.location.name);
      }
      if (rule.outputPayloadToHeader) setHeaders.push([rule.outputPayloadToHeader.toLowerCase(), v.segment]);
      for (const c of rule.outputClaimToHeaders as readonly ClaimToHeader[]) {
        const value = claimHeaderValue(v.payload, c.claim);
        if (value !== undefined) setHeaders.push([c.header.toLowerCase(), value]);
      }
    }
    const first = verified[0];
    return {
      outcome: "authenticated",
      principal: `${first.payload.iss}/${first.payload.sub ?? ""}`,
      payload: first.payload,
      payloadJson: JSON.stringify(first.payload),
      payloads: Object.freeze(verified.map((v) => v.payload)),
      effects: Object.freeze({
        removeHeaders: Object.freeze([...removeHeaders]),
        setHeaders: Object.freeze(setHeaders),
        path: removeQueryParams(request.path, removeParams),
      }),
    };
  }
}
