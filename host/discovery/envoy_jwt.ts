import type { JwtRule } from "../config/resources/security.ts";
import type { NamedJwtRule } from "../security/jwt/authenticator.ts";
import { remoteHttpCluster, urlClusterName } from "./envoy_clusters.ts";

/**
 * RequestAuthentication as Envoy's `envoy.filters.http.jwt_authn`, as
 * upstream's control plane writes it (pilot/pkg/security/authn): one
 * provider per jwtRule (merged over every policy selecting the workload,
 * by issuer), and one requirement for every path: any provider, or no token
 * at all (`requires_any` with `allow_missing`), so a request without token
 * goes on anonymous and only a token that fails is refused (401), as the
 * Node sidecar does (host/security/jwt/authenticator.ts). The validated
 * payload goes to the filter's dynamic metadata under `payload`, where the
 * RBAC filter reads request principals and claims (host/discovery/envoy_rbac.ts).
 *
 * Key sets: an inline `jwks` is a local key set; a `jwksUri` is fetched by
 * Envoy through a cluster of its own (`jwks|<host>|<port>`, TLS for https),
 * served beside the listeners. Pure.
 */

type Json = Record<string, unknown>;

export const JWT_FILTER = "envoy.filters.http.jwt_authn";
/** The dynamic metadata key of the validated payload. */
export const JWT_PAYLOAD_KEY = "payload";
const JWT_TYPE = "type.googleapis.com/envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication";
/** Upstream's default key-set fetch timeout. */
const DEFAULT_JWKS_TIMEOUT_MS = 5000;
/** Claims whose space-separated string the authz engine reads as a list (matcher.ts SPACE_DELIMITED_CLAIMS). */
const SPACE_DELIMITED_CLAIMS = ["scope", "permission"];

const seconds = (ms: number) => `${ms / 1000}s`;

export const jwksClusterName = (uri: string) => urlClusterName("jwks", uri);

function keySet(rule: JwtRule): Json {
  if (rule.jwks !== undefined) return { local_jwks: { inline_string: rule.jwks } };
  // Neither jwks nor jwksUri: every token fails, as in the Node sidecar (host/security/jwt/jwks.ts).
  if (rule.jwksUri === undefined) return { local_jwks: { inline_string: '{"keys":[]}' } };
  return {
    remote_jwks: {
      http_uri: { uri: rule.jwksUri, cluster: jwksClusterName(rule.jwksUri), timeout: seconds(rule.timeoutMs ?? DEFAULT_JWKS_TIMEOUT_MS) },
      cache_duration: "1200s",
    },
  };
}

function provider(rule: JwtRule): Json {
  return {
    issuer: rule.issuer,
    ...(rule.audiences.length > 0 ? { audiences: rule.audiences } : {}),
    ...keySet(rule),
    // Envoy's defaults (Authorization: Bearer, then access_token) apply when both lists are empty, as ours do.
    ...(rule.fromHeaders.length > 0 ? { from_headers: rule.fromHeaders.map((h) => ({ name: h.name, ...(h.prefix ? { value_prefix: h.prefix } : {}) })) } : {}),
    ...(rule.fromParams.length > 0 ? { from_params: rule.fromParams } : {}),
    ...(rule.forwardOriginalToken ? { forward: true } : {}),
    ...(rule.outputPayloadToHeader ? { forward_payload_header: rule.outputPayloadToHeader } : {}),
    ...(rule.outputClaimToHeaders.length > 0
      ? { claim_to_headers: rule.outputClaimToHeaders.map((c) => ({ header_name: c.header, claim_name: c.claim })) }
      : {}),
    payload_in_metadata: JWT_PAYLOAD_KEY,
    normalize_payload_in_metadata: { space_delimited_claims: SPACE_DELIMITED_CLAIMS },
  };
}

/** The jwt_authn filter for a workload's merged jwtRules and the clusters its remote key sets are fetched through; undefined without rules. */
export function jwtAuthn(rules: readonly NamedJwtRule[]): { filter: Json; clusters: Json[] } | undefined {
  if (rules.length === 0) return undefined;
  const providers: Record<string, Json> = {};
  rules.forEach(({ rule }, i) => (providers[`origins-${i}`] = provider(rule)));
  const requirements = [...Object.keys(providers).map((provider_name) => ({ provider_name })), { allow_missing: {} }];
  const uris = [...new Set(rules.flatMap(({ rule }) => (rule.jwks === undefined && rule.jwksUri !== undefined ? [rule.jwksUri] : [])))];
  const clusters = new Map(uris.map((u) => [jwksClusterName(u), remoteHttpCluster(jwksClusterName(u), u)]));
  return {
    filter: {
      name: JWT_FILTER,
      typed_config: {
        "@type": JWT_TYPE,
        providers,
        rules: [{ match: { prefix: "/" }, requires: { requires_any: { requirements } } }],
        // The Node sidecar lets CORS preflights through unauthenticated too.
        bypass_cors_preflight: true,
      },
    },
    clusters: [...clusters.values()],
  };
}
