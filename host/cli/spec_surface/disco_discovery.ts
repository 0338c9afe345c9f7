import { hostname } from "node:os";
import type { EnvoyServing } from "../../discovery/envoy_sidecar.ts";
import { envReader } from "./env_values.ts";
import { type NotApplicable, na } from "./not_applicable.ts";

/**
 * disco-discovery's part of spec 2 that this build does not apply, with the
 * reason; docs/daemon-reference.md lists every flag and variable. For a
 * variable whose spec default asks for something this build does not do,
 * the accepted value is the one that describes what it does (so asking for
 * the spec's default is refused rather than silently ignored).
 */
const NO_ORCH = "needs an orchestrator API: the mesh comes from --configDir";
const NO_MCP = "there is no MCP client: the configuration comes from --configDir";
const NO_CA = "disco-discovery runs no CA: mesh_ca issues every certificate";
const NO_TOKENS = "xDS callers are authenticated by their mesh_ca certificate on --secureGrpcAddr: no tokens are read";
const NO_SNIFFING = "not built: a port that names no protocol is served as HTTP (no protocol sniffing)";
const NO_NETWORK_FILTER = "not built: no such network filter is served";

export const DISCOVERY_NOT_APPLICABLE_FLAGS: readonly NotApplicable[] = [
  na("--appNamespace", "value", "", NO_ORCH),
  na("--clusterRegistriesNamespace", "value", "", NO_ORCH),
  na("--catalogserverURL", "value", "", "there is no catalog registry server"),
  na("--orchconfig", "value", "", NO_ORCH),
  na("--mcpInitialConnWindowSize", "value", "1048576", NO_MCP),
  na("--mcpInitialWindowSize", "value", "1048576", NO_MCP),
  na("--mcpMaxMsgSize", "value", "4194304", NO_MCP),
  na("--namespace", "value", "", NO_ORCH),
  na("--networksConfig", "value", "/etc/mesh/config/meshNetworks", "one network: every endpoint is reachable"),
  na("--plugins", "value", "authn,authz,health,hub", "the networking plugins are fixed: every proxy gets the mesh's documents and applies them itself"),
  na("--resync", "value", "1m0s", "the folder is watched: there is no controller to resync"),
  na(
    "--domain",
    "value",
    "cluster.local",
    "not built: the suffix cluster.local is part of the one mesh model every program shares (host/mesh/hosts.ts: service hosts, node ids, SPIFFE and DNS names), not a setting of one daemon",
  ),
];

/** Spec 2 variables of disco-discovery (DI) this build does not apply. */
export const DISCOVERY_NOT_APPLICABLE_ENV: readonly NotApplicable[] = [
  na("DISCO_DEBUG_ADSZ_CONFIG", "bool", "false", "not built: /debug/adsz shows each connection's node and watches; what was sent is in /debug/syncz and /debug/resourcesz"),
  na("DISCO_DISTRIBUTION_HISTORY_RETENTION", "value", "1m0s", "no history of distributed versions is kept: /debug/syncz shows what each proxy was last sent and acknowledged"),
  na("DISCO_ENABLE_CONFIG_DISTRIBUTION_TRACKING", "bool", "true", "what each proxy was sent and acknowledged is always tracked (/debug/syncz)"),
  na("DISCO_ENABLE_CRD_VALIDATION", "bool", "true", "every document of --configDir is always validated as it is read (there is no orchestrator cache)"),
  na("DISCO_ENABLE_SQLDB_FILTER", "bool", "false", NO_NETWORK_FILTER),
  na("DISCO_ENABLE_PROTOCOL_SNIFFING_FOR_INBOUND", "bool", "false", NO_SNIFFING),
  na("DISCO_ENABLE_PROTOCOL_SNIFFING_FOR_OUTBOUND", "bool", "false", NO_SNIFFING),
  na("DISCO_ENABLE_KVSTORE_FILTER", "bool", "false", NO_NETWORK_FILTER),
  na("DISCO_ENABLE_TCP_METADATA_EXCHANGE", "bool", "false", "not built: no metadata exchange filters are served"),
  na("DISCO_ENABLE_RPC_FILTER", "bool", "false", NO_NETWORK_FILTER),
  na("DISCO_INBOUND_PROTOCOL_DETECTION_TIMEOUT", "value", "1s", NO_SNIFFING),
  na("DISCO_RESTRICT_POD_UP_TRAFFIC_LOOP", "bool", "false", "not built: inbound traffic is not checked against the outbound listeners"),
  na("DISCO_SIDECAR_USE_REMOTE_ADDRESS", "bool", "false", "not built: the served outbound listeners leave use_remote_address unset"),
  na("DISCO_TRACE_SAMPLING", "value", "100", "the served listeners configure no tracer"),
  na("DISCO_USE_ENDPOINT_SLICE", "bool", "false", NO_ORCH),
  na("USE_MESH_JWT_FILTER", "bool", "false", "there is no mesh JWT filter: tokens are verified by each proxy's own JWT engine"),
  na("MESHD_ADDR", "value", "", "there is no combined control plane"),
  na("MESH_LANG", "value", "", "disco-discovery evaluates no attribute expressions (the hub does)"),
  na("JWT_POLICY", "value", "third-party-jwt", NO_TOKENS),
  na("AUDIENCE", "value", "", NO_TOKENS),
  na("TOKEN_ISSUER", "value", "", NO_TOKENS),
  na("BYPASS_OOP_MTLS_SAN_VERIFICATION", "bool", "false", "there are no out-of-process adapters to authenticate"),
  na("INJECTION_WEBHOOK_CONFIG_NAME", "value", "mesh-sidecar-injector", "patching the mutating webhook configuration needs an orchestrator API (the webhook itself is served on --httpsAddr)"),
  na("VALIDATION_WEBHOOK_CONFIG_NAME", "value", "meshd-${namespace}", "patching the validating webhook configuration needs an orchestrator API (the webhook itself is served on --httpsAddr)"),
  na("ORCH_INGRESS_NS", "value", "", NO_ORCH),
  na("REVISION", "value", "", "not built: one control plane per mesh; injection matches no revision labels"),
  na("SERVICE_ACCOUNT", "value", "", NO_ORCH),
  na("MAX_WORKLOAD_CERT_TTL", "value", "2160h0m0s", `${NO_CA} (its --max-workload-cert-ttl)`),
  na("WORKLOAD_CERT_TTL", "value", "2160h0m0s", `${NO_CA} (its --workload-cert-ttl)`),
  na("ROOT_CA_DIR", "value", "./etc/cacerts", NO_CA),
  na("ANCHOR_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR", "bool", "true", NO_CA),
  na("ANCHOR_SELF_SIGNED_CA_CERT_TTL", "value", "87600h0m0s", NO_CA),
  na("ANCHOR_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL", "value", "1h0m0s", NO_CA),
  na("ANCHOR_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE", "value", "20", NO_CA),
];

/** The DI variables disco-discovery applies (docs/daemon-reference.md), decoded. */
export interface DiscoveryVariables {
  /** DISCO_DEBOUNCE_AFTER (100ms): quiet time before a push. */
  debounceAfterMs: number;
  /** DISCO_DEBOUNCE_MAX (10s): longest wait of a push under continuous changes. */
  debounceMaxMs: number;
  /** DISCO_ENABLE_EDS_DEBOUNCE (true): false pushes an endpoint-only change at once. */
  edsDebounce: boolean;
  /** DISCO_PUSH_THROTTLE (100): proxies pushed to per turn of the event loop; the rest wait in the push queue. */
  pushThrottle: number;
  /** DISCO_SCOPE_PUSHES (true): push only to proxies whose view a change affects. */
  scopePushes: boolean;
  /** DISCO_ENABLE_FALLTHROUGH_ROUTE (true), DISCO_HTTP10 (false), DISCO_INITIAL_FETCH_TIMEOUT (0s), DISCO_BLOCK_HTTP_ON_443 (true), and the cluster side (host/discovery/envoy_outbound_clusters.ts): what Envoy is served. */
  serving: EnvoyServing;
  /** TERMINATION_DRAIN_DURATION_SECONDS (5): how long open xDS streams may stay after SIGTERM before they are cut. */
  drainMs: number;
  /** POD_NAME (default: the host name): this instance, in every response's control_plane identifier. */
  podName: string;
  /** POD_NAMESPACE: the namespace this instance runs in, in the control_plane identifier too. */
  podNamespace?: string;
  /** MESH_GPRC_MAXRECVMSGSIZE (4194304): largest xDS request accepted, bytes. */
  maxRecvMessageBytes: number;
  /** MESH_GPRC_MAXSTREAMS (100000): concurrent streams per xDS connection. */
  maxStreams: number;
}

export const DEFAULT_DRAIN_SECONDS = 5;

/** Reads the DI variables this build applies; throws naming the variable on a bad value. */
export function discoveryVariables(env: NodeJS.ProcessEnv): DiscoveryVariables {
  const read = envReader(env);
  const podNamespace = read.text("POD_NAMESPACE");
  return {
    debounceAfterMs: read.duration("DISCO_DEBOUNCE_AFTER", 100),
    debounceMaxMs: read.duration("DISCO_DEBOUNCE_MAX", 10_000),
    edsDebounce: read.bool("DISCO_ENABLE_EDS_DEBOUNCE", true),
    pushThrottle: read.int("DISCO_PUSH_THROTTLE", 100, 1),
    scopePushes: read.bool("DISCO_SCOPE_PUSHES", true),
    serving: {
      fallthroughRoute: read.bool("DISCO_ENABLE_FALLTHROUGH_ROUTE", true),
      acceptHttp10: read.bool("DISCO_HTTP10", false),
      initialFetchTimeoutMs: read.duration("DISCO_INITIAL_FETCH_TIMEOUT", 0),
      blockHttpOn443: read.bool("DISCO_BLOCK_HTTP_ON_443", true),
      edsForHeadless: read.bool("DISCO_ENABLE_EDS_FOR_HEADLESS_SERVICES", false),
      headlessPodListeners: read.bool("DISCO_ENABLE_HEADLESS_SERVICE_POD_LISTENERS", true),
      filterGatewayClusters: read.bool("DISCO_FILTER_GATEWAY_CLUSTER_CONFIG", false),
      scopeGatewayToNamespace: read.bool("DISCO_SCOPE_GATEWAY_TO_NAMESPACE", false),
      respectDnsTtl: read.bool("DISCO_RESPECT_DNS_TTL", true),
    },
    drainMs: read.int("TERMINATION_DRAIN_DURATION_SECONDS", DEFAULT_DRAIN_SECONDS, 0, 2_147_483) * 1000,
    podName: read.text("POD_NAME") ?? hostname(),
    ...(podNamespace !== undefined ? { podNamespace } : {}),
    maxRecvMessageBytes: read.int("MESH_GPRC_MAXRECVMSGSIZE", 4_194_304, 1, 2 ** 31 - 1),
    maxStreams: read.int("MESH_GPRC_MAXSTREAMS", 100_000, 1, 2 ** 31 - 1),
  };
}
