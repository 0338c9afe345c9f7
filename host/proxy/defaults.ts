// Defaults of `disco-agent proxy`'s flags and its log scopes, in a module that
// imports nothing: the program defines its flags from them without loading the sidecar
// (gRPC, protobufjs, jose, prom-client, the filter module): `--help`,
// `version` and a usage error load none of them.

/** Default ports, as the seed's agent and upstream meshes use them. */
export const DEFAULT_ADMIN_PORT = 15000;
export const DEFAULT_INBOUND_PORT = 15006;
export const DEFAULT_OUTBOUND_PORT = 15001;

/** Spec 2's only token manager plugin (upstream: GoogleTokenExchange). */
export const DEFAULT_TOKEN_MANAGER_PLUGIN = "CloudTokenExchange";

/**
 * The agent's log scopes: spec 2's list for disco-agent, then the sidecar's
 * own (`filter`: the filter's messages; `hub`: hub transport; `config`).
 */
export const SIDECAR_LOG_SCOPES = [
  "all",
  "authn",
  "cache",
  "anchorclient",
  "configmapcontroller",
  "default",
  "cloudca",
  "model",
  "rbac",
  "sds",
  "secretfetcher",
  "stsclient",
  "stsserver",
  "token",
  "validation",
  "vault",
  "filter",
  "hub",
  "config",
] as const;
