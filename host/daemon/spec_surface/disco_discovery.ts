import { hostname } from "node:os";
import type { EnvoyServing } from "../../discovery/envoy_sidecar.ts";
import { isDns1123Label } from "../../config/resources/syntax.ts";
import { DEFAULT_DEBOUNCE_AFTER_MS, DEFAULT_DEBOUNCE_MAX_MS, DEFAULT_PUSH_THROTTLE } from "../../discovery/options.ts";
import { envReader } from "../env_values.ts";
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

export const DISCOVERY_NOT_APPLICABLE_FLAGS: readonly NotApplicable[] = [
  { ...na("--appNamespace", "value", "", NO_ORCH), short: "-a" },
  na("--clusterRegistriesNamespace", "value", "", NO_ORCH),
  na("--catalogserverURL", "value", "", "there is no catalog registry server"),
  na("--orchconfig", "value", "", NO_ORCH),
  na("--mcpInitialConnWindowSize", "value", "1048576", NO_MCP),
  na("--mcpInitialWindowSize", "value", "1048576", NO_MCP),
  na("--mcpMaxMsgSize", "value", "4194304", NO_MCP),
  { ...na("--namespace", "value", "", NO_ORCH), short: "-n" },
  na("--networksConfig", "value", "/etc/mesh/config/meshNetworks", "one network: every endpoint is reachable"),
  na("--plugins", "value", "authn,authz,health,hub", "the networking plugins are fixed: every proxy gets the mesh's documents and applies them itself"),
  na("--resync", "value", "1m0s", "the folder is watched: there is no controller to resync"),
];

/** Spec 2 variables of disco-discovery (DI) this build does not apply. */
export const DISCOVERY_NOT_APPLICABLE_ENV: readonly NotApplicable[] = [
  na("DISCO_ENABLE_CRD_VALIDATION", "bool", "true", "every document of --configDir is always validated as it is read (there is no orchestrator cache)"),
  na(
    "DISCO_ENABLE_SQLDB_FILTER",
    "bool",
    "false",
    "not built: Envoy's v3 MySQL proxy (envoy.extensions.filters.network.mysql_proxy.v3.MySQLProxy, a contrib extension) is not among the Envoy v3 protos served configuration is decoded with (@grpc/grpc-js-xds deps/envoy-api ships only the v2-era v1alpha1 one), so mysql ports get no mysql_proxy",
  ),
  na(
    "DISCO_ENABLE_TCP_METADATA_EXCHANGE",
    "bool",
    "false",
    "not built: upstream's TCP metadata exchange is its own proxy's filter (istio.metadata_exchange, ALPN istio-peer-exchange), whose configuration type is not among Envoy's v3 protos; no metadata exchange filter is served",
  ),
  na("DISCO_TRACE_SAMPLING", "value", "100", "the served listeners configure no tracer"),
  na("DISCO_USE_ENDPOINT_SLICE", "bool", "false", NO_ORCH),
  na("USE_MESH_JWT_FILTER", "bool", "false", "there is no mesh JWT filter: tokens are verified by each proxy's own JWT engine"),
  na("MESHD_ADDR", "value", "", "there is no combined control plane"),
  na("MESH_LANG", "value", "", "disco-discovery evaluates no attribute expressions (the hub does)"),
  na("JWT_POLICY", "value", "third-party-jwt", NO_TOKENS),
  na("AUDIENCE", "value", "", NO_TOKENS),
  na("TOKEN_ISSUER", "value", "", NO_TOKENS),
  na("BYPASS_OOP_MTLS_SAN_VERIFICATION", "bool", "false", "there are no out-of-process adapters to authenticate"),
  na(
    "INJECTION_WEBHOOK_CONFIG_NAME",
    "value",
    "mesh-sidecar-injector",
    "patching the mutating webhook configuration needs an orchestrator API (the webhook itself is served on --httpsAddr)",
  ),
  na(
    "VALIDATION_WEBHOOK_CONFIG_NAME",
    "value",
    "meshd-${namespace}",
    "patching the validating webhook configuration needs an orchestrator API (the webhook itself is served on --httpsAddr)",
  ),
  na("ORCH_INGRESS_NS", "value", "", NO_ORCH),
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
  /**
   * What Envoy is served: DISCO_ENABLE_FALLTHROUGH_ROUTE (true), DISCO_HTTP10 (false), DISCO_INITIAL_FETCH_TIMEOUT (0s),
   * DISCO_BLOCK_HTTP_ON_443 (true), the listener side (DISCO_ENABLE_PROTOCOL_SNIFFING_FOR_OUTBOUND / _FOR_INBOUND (true),
   * DISCO_INBOUND_PROTOCOL_DETECTION_TIMEOUT (1s), DISCO_SIDECAR_USE_REMOTE_ADDRESS (false),
   * DISCO_RESTRICT_POD_UP_TRAFFIC_LOOP (true), DISCO_ENABLE_KVSTORE_FILTER (false), DISCO_ENABLE_RPC_FILTER (false))
   * and the cluster side (host/discovery/envoy_outbound_clusters.ts).
   */
  serving: EnvoyServing;
  /** TERMINATION_DRAIN_DURATION_SECONDS (5): how long open xDS streams may stay after SIGTERM before they are cut. */
  drainMs: number;
  /** POD_NAME (default: the host name): this instance, in every response's control_plane identifier. */
  podName: string;
  /** POD_NAMESPACE: the namespace this instance runs in, in the control_plane identifier too. */
  podNamespace?: string;
  /** DISCO_ENABLE_CONFIG_DISTRIBUTION_TRACKING (true): /debug/config_distribution says which proxy has which version of a resource. */
  distributionTracking: boolean;
  /** DISCO_DISTRIBUTION_HISTORY_RETENTION (1m0s): how long a superseded configuration version can still be looked up. */
  distributionRetentionMs: number;
  /** DISCO_DEBUG_ADSZ_CONFIG (false): /debug/adsz also shows what each connection was last sent. */
  debugAdszConfig: boolean;
  /** REVISION (empty): the injection webhook injects only the pods labelled `mesh.io/rev: <revision>`; empty: those without the label. */
  revision?: string;
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
  const revision = read.text("REVISION");
  // A label value and part of names upstream: a DNS-1123 label.
  if (revision !== undefined && !isDns1123Label(revision))
    throw new Error(`REVISION=${JSON.stringify(revision)}: expected a revision name (a DNS-1123 label: lower-case letters, digits and '-')`);
  return {
    debounceAfterMs: read.duration("DISCO_DEBOUNCE_AFTER", DEFAULT_DEBOUNCE_AFTER_MS),
    debounceMaxMs: read.duration("DISCO_DEBOUNCE_MAX", DEFAULT_DEBOUNCE_MAX_MS),
    edsDebounce: read.bool("DISCO_ENABLE_EDS_DEBOUNCE", true),
    pushThrottle: read.int("DISCO_PUSH_THROTTLE", DEFAULT_PUSH_THROTTLE, 1),
    scopePushes: read.bool("DISCO_SCOPE_PUSHES", true),
    serving: {
      fallthroughRoute: read.bool("DISCO_ENABLE_FALLTHROUGH_ROUTE", true),
      acceptHttp10: read.bool("DISCO_HTTP10", false),
      initialFetchTimeoutMs: read.duration("DISCO_INITIAL_FETCH_TIMEOUT", 0),
      blockHttpOn443: read.bool("DISCO_BLOCK_HTTP_ON_443", true),
      sniffOutbound: read.bool("DISCO_ENABLE_PROTOCOL_SNIFFING_FOR_OUTBOUND", true),
      sniffInbound: read.bool("DISCO_ENABLE_PROTOCOL_SNIFFING_FOR_INBOUND", true),
      inboundDetectionTimeoutMs: read.duration("DISCO_INBOUND_PROTOCOL_DETECTION_TIMEOUT", 1000),
      useRemoteAddress: read.bool("DISCO_SIDECAR_USE_REMOTE_ADDRESS", false),
      restrictPodTrafficLoop: read.bool("DISCO_RESTRICT_POD_UP_TRAFFIC_LOOP", true),
      kvstoreFilter: read.bool("DISCO_ENABLE_KVSTORE_FILTER", false),
      rpcFilter: read.bool("DISCO_ENABLE_RPC_FILTER", false),
      edsForHeadless: read.bool("DISCO_ENABLE_EDS_FOR_HEADLESS_SERVICES", false),
      headlessPodListeners: read.bool("DISCO_ENABLE_HEADLESS_SERVICE_POD_LISTENERS", true),
      filterGatewayClusters: read.bool("DISCO_FILTER_GATEWAY_CLUSTER_CONFIG", false),
      scopeGatewayToNamespace: read.bool("DISCO_SCOPE_GATEWAY_TO_NAMESPACE", false),
      respectDnsTtl: read.bool("DISCO_RESPECT_DNS_TTL", true),
    },
    drainMs: read.int("TERMINATION_DRAIN_DURATION_SECONDS", DEFAULT_DRAIN_SECONDS, 0, 2_147_483) * 1000,
    podName: read.text("POD_NAME") ?? hostname(),
    ...(podNamespace !== undefined ? { podNamespace } : {}),
    ...(revision !== undefined ? { revision } : {}),
    distributionTracking: read.bool("DISCO_ENABLE_CONFIG_DISTRIBUTION_TRACKING", true),
    distributionRetentionMs: read.duration("DISCO_DISTRIBUTION_HISTORY_RETENTION", 60_000),
    debugAdszConfig: read.bool("DISCO_DEBUG_ADSZ_CONFIG", false),
    maxRecvMessageBytes: read.int("MESH_GPRC_MAXRECVMSGSIZE", 4_194_304, 1, 2 ** 31 - 1),
    maxStreams: read.int("MESH_GPRC_MAXSTREAMS", 100_000, 1, 2 ** 31 - 1),
  };
}
