// The resource types the Aggregated Discovery Service serves, by type URL.
export const LISTENER = "type.googleapis.com/envoy.config.listener.v3.Listener";
export const ROUTE = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration";
export const CLUSTER = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
export const ENDPOINT = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
export const SECRET = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret";
export const EXTENSION_CONFIG = "type.googleapis.com/envoy.config.core.v3.TypedExtensionConfig";
/** The mesh's own configuration documents, for our sidecars (proto/mesh/config/v1). */
export const CONFIG_DOCUMENT = "type.googleapis.com/mesh.config.v1.ConfigDocument";

/** Short names used in logs, debug pages and counters (upstream's `type` label). */
export const SHORT_TYPE: Readonly<Record<string, string>> = Object.freeze({
  [LISTENER]: "lds",
  [ROUTE]: "rds",
  [CLUSTER]: "cds",
  [ENDPOINT]: "eds",
  [SECRET]: "sds",
  [EXTENSION_CONFIG]: "ecds",
  [CONFIG_DOCUMENT]: "config",
});

/** Types whose request with no names means "all of them" (state of the world). */
export const WILDCARD_TYPES: ReadonlySet<string> = new Set([LISTENER, CLUSTER, CONFIG_DOCUMENT]);
