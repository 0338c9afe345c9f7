/**
 * Upstream's ext-authz task (samples/extauthz) mesh config, renamed: the two
 * sample authorizers CUSTOM AuthorizationPolicies name, one over gRPC and
 * one over HTTP (the sample authorizer allows `x-ext-authz: allow`).
 */
export const EXT_AUTHZ_MESH_CONFIG = `extensionProviders:
- name: "sample-ext-authz-grpc"
  envoyExtAuthzGrpc:
    service: "ext-authz.foo.svc.cluster.local"
    port: "9000"
- name: "sample-ext-authz-http"
  envoyExtAuthzHttp:
    service: "ext-authz.foo.svc.cluster.local"
    port: "8000"
    includeRequestHeadersInCheck: ["x-ext-authz"]
    headersToUpstreamOnAllow: ["x-ext-authz-check-result"]
    headersToDownstreamOnDeny: ["x-ext-authz-check-result"]
`;
