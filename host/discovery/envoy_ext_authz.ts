import type { Resource } from "../config/catalog.ts";
import type { ExtAuthzProvider, ExtensionProviders } from "../config/extension_providers.ts";
import { clusterName } from "../mesh/cluster_names.ts";
import { HTTP_RBAC, HTTP_RBAC_TYPE, NETWORK_RBAC, NETWORK_RBAC_TYPE, rbacRules } from "./envoy_rbac.ts";

/**
 * CUSTOM AuthorizationPolicies as Envoy filters, the arrangement upstream's
 * control plane uses (pilot/pkg/security/authz/builder, extauthz):
 * an RBAC filter whose *shadow* rules hold the CUSTOM policies (action DENY,
 * policy names prefixed `mesh-ext-authz-`, stat prefix `mesh_ext_authz_`),
 * so a request they match gets the dynamic metadata
 * `mesh_ext_authz_shadow_effective_policy_id`; then the ext_authz filter,
 * enabled only by that metadata (`filter_enabled_metadata`), so the
 * authorizer sees exactly the requests the CUSTOM rules match. Both go
 * before the AUDIT, DENY and ALLOW RBAC filters.
 *
 * The workload's CUSTOM policies must all name one provider (upstream's
 * rule); otherwise, as upstream, what they match is denied. On TCP chains
 * only a gRPC provider applies (envoy.filters.network.ext_authz). Pure.
 */

type Json = Record<string, unknown>;

export const HTTP_EXT_AUTHZ = "envoy.filters.http.ext_authz";
export const NETWORK_EXT_AUTHZ = "envoy.filters.network.ext_authz";
const HTTP_EXT_AUTHZ_TYPE = "type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz";
const NETWORK_EXT_AUTHZ_TYPE = "type.googleapis.com/envoy.extensions.filters.network.ext_authz.v3.ExtAuthz";
/** Upstream's `istio-ext-authz` / `istio_ext_authz_`, renamed. */
export const EXT_AUTHZ_POLICY_PREFIX = "mesh-ext-authz-";
export const EXT_AUTHZ_STAT_PREFIX = "mesh_ext_authz_";

const enabledBy = (rbacFilter: string): Json => ({
  filter: rbacFilter,
  path: [{ key: `${EXT_AUTHZ_STAT_PREFIX}shadow_effective_policy_id` }],
  value: { string_match: { prefix: EXT_AUTHZ_POLICY_PREFIX.slice(0, -1) } },
});

const seconds = (ms: number) => `${ms / 1000}s`;
const clusterOf = (p: ExtAuthzProvider) => clusterName(p.service, p.port);
const patterns = (list: readonly string[]): Json => ({
  patterns: list.map((h) =>
    h === "*"
      ? { safe_regex: { regex: ".*" } }
      : h.endsWith("*")
        ? { prefix: h.slice(0, -1), ignore_case: true }
        : h.startsWith("*")
          ? { suffix: h.slice(1), ignore_case: true }
          : { exact: h, ignore_case: true },
  ),
});

function withBody(p: ExtAuthzProvider): Json {
  const b = p.requestBody;
  return b ? { with_request_body: { max_request_bytes: b.maxRequestBytes, allow_partial_message: b.allowPartialMessage, pack_as_bytes: b.packAsBytes } } : {};
}

/** `envoy.extensions.filters.http.ext_authz.v3.ExtAuthz` for a provider. */
export function httpExtAuthz(p: ExtAuthzProvider): Json {
  const common = {
    "@type": HTTP_EXT_AUTHZ_TYPE,
    status_on_error: { code: p.statusOnError },
    failure_mode_allow: p.failOpen,
    transport_api_version: "V3",
    ...(p.clearRouteCache ? { clear_route_cache: true } : {}),
    filter_enabled_metadata: enabledBy(HTTP_RBAC),
    ...withBody(p),
  };
  if (p.kind === "envoyExtAuthzGrpc") {
    return { ...common, grpc_service: { envoy_grpc: { cluster_name: clusterOf(p), authority: p.service }, timeout: seconds(p.timeoutMs) } };
  }
  const additional = Object.entries(p.includeAdditionalHeadersInCheck);
  return {
    ...common,
    http_service: {
      server_uri: { uri: `http://${p.service}`, cluster: clusterOf(p), timeout: seconds(p.timeoutMs) },
      ...(p.pathPrefix ? { path_prefix: p.pathPrefix } : {}),
      authorization_request: {
        ...(p.includeRequestHeadersInCheck.length > 0 ? { allowed_headers: patterns(p.includeRequestHeadersInCheck) } : {}),
        ...(additional.length > 0 ? { headers_to_add: additional.map(([key, value]) => ({ key, value })) } : {}),
      },
      authorization_response: {
        ...(p.headersToUpstreamOnAllow.length > 0 ? { allowed_upstream_headers: patterns(p.headersToUpstreamOnAllow) } : {}),
        ...(p.headersToDownstreamOnDeny.length > 0 ? { allowed_client_headers: patterns(p.headersToDownstreamOnDeny) } : {}),
        ...(p.headersToDownstreamOnAllow.length > 0 ? { allowed_client_headers_on_success: patterns(p.headersToDownstreamOnAllow) } : {}),
      },
    },
  };
}

type Custom = { kind: "none" } | { kind: "ok"; provider: ExtAuthzProvider } | { kind: "invalid" };

function customOf(policies: readonly Resource<"AuthorizationPolicy">[], providers: ExtensionProviders): Custom {
  const names = [...new Set(policies.filter((p) => p.spec.action === "CUSTOM").map((p) => p.spec.provider!))];
  if (names.length === 0) return { kind: "none" };
  const provider = names.length === 1 ? providers.authorizers.get(names[0]) : undefined;
  return provider ? { kind: "ok", provider } : { kind: "invalid" };
}

/** What the CUSTOM policies would mark, as enforced DENY rules (upstream's deny-all for an unusable CUSTOM setup). */
function denyInstead(policies: readonly Resource<"AuthorizationPolicy">[], tcp: boolean): Json | undefined {
  const rules = rbacRules(policies, "CUSTOM", tcp);
  return rules && { ...rules, action: "DENY" };
}

/** The HTTP filters of a workload's CUSTOM policies: none, or the shadow RBAC filter and ext_authz. */
export function httpCustomFilters(policies: readonly Resource<"AuthorizationPolicy">[], providers: ExtensionProviders): Json[] {
  const custom = customOf(policies, providers);
  if (custom.kind === "none") return [];
  if (custom.kind === "invalid") {
    const rules = denyInstead(policies, false);
    return rules ? [{ name: HTTP_RBAC, typed_config: { "@type": HTTP_RBAC_TYPE, rules } }] : [];
  }
  const shadow = rbacRules(policies, "CUSTOM", false, EXT_AUTHZ_POLICY_PREFIX);
  if (!shadow) return [];
  return [
    { name: HTTP_RBAC, typed_config: { "@type": HTTP_RBAC_TYPE, shadow_rules: shadow, shadow_rules_stat_prefix: EXT_AUTHZ_STAT_PREFIX } },
    { name: HTTP_EXT_AUTHZ, typed_config: httpExtAuthz(custom.provider) },
  ];
}

/** The network filters of a workload's CUSTOM policies on a TCP chain: only a gRPC authorizer applies there. */
export function networkCustomFilters(policies: readonly Resource<"AuthorizationPolicy">[], providers: ExtensionProviders, statPrefix: string): Json[] {
  const custom = customOf(policies, providers);
  if (custom.kind === "none") return [];
  if (custom.kind === "invalid") {
    const rules = denyInstead(policies, true);
    return rules ? [{ name: NETWORK_RBAC, typed_config: { "@type": NETWORK_RBAC_TYPE, stat_prefix: statPrefix, rules } }] : [];
  }
  const p = custom.provider;
  const shadow = rbacRules(policies, "CUSTOM", true, EXT_AUTHZ_POLICY_PREFIX);
  if (p.kind !== "envoyExtAuthzGrpc" || !shadow) return [];
  return [
    {
      name: NETWORK_RBAC,
      typed_config: { "@type": NETWORK_RBAC_TYPE, stat_prefix: statPrefix, shadow_rules: shadow, shadow_rules_stat_prefix: EXT_AUTHZ_STAT_PREFIX },
    },
    {
      name: NETWORK_EXT_AUTHZ,
      typed_config: {
        "@type": NETWORK_EXT_AUTHZ_TYPE,
        stat_prefix: statPrefix,
        failure_mode_allow: p.failOpen,
        transport_api_version: "V3",
        grpc_service: { envoy_grpc: { cluster_name: clusterOf(p), authority: p.service }, timeout: seconds(p.timeoutMs) },
        filter_enabled_metadata: enabledBy(NETWORK_RBAC),
      },
    },
  ];
}
