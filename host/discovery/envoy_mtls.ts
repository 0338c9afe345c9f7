import type { ServerMtlsMode } from "../mesh/policies.ts";

/**
 * PeerAuthentication on Envoy's inbound listener, as upstream's sidecars
 * get it: the mode the mesh model computes for a port
 * (host/mesh/policies.ts `effectiveMtls`: mesh → namespace → workload →
 * port) picks the filter chains of that port.
 *
 * - STRICT: one chain whose transport socket requires a client certificate;
 *   a plain-text connection fails the handshake.
 * - PERMISSIVE: a chain matching `transport_protocol: tls` (detected by the
 *   TLS inspector) that terminates mutual TLS, and a `raw_buffer` one.
 * - DISABLE: one plain-text chain.
 *
 * The workload certificate and the trust roots are Envoy's SDS secrets
 * `default` and `ROOTCA`, asked of the node agent through the bootstrap's
 * `sds-grpc` cluster, exactly as upstream's Envoy asks its agent: the
 * control plane never holds a workload's private key. Pure.
 */

type Json = Record<string, unknown>;

export const SDS_CLUSTER = "sds-grpc";
export const WORKLOAD_SECRET = "default";
export const ROOT_SECRET = "ROOTCA";
export const TLS_INSPECTOR = {
  name: "envoy.filters.listener.tls_inspector",
  typed_config: { "@type": "type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector" },
};
const DOWNSTREAM_TLS_TYPE = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext";

/** An SDS secret fetched from the agent over gRPC (upstream's sds-grpc). */
export function sdsSecret(name: string): Json {
  return {
    name,
    sds_config: {
      api_config_source: {
        api_type: "GRPC",
        transport_api_version: "V3",
        set_node_on_first_message_only: true,
        grpc_services: [{ envoy_grpc: { cluster_name: SDS_CLUSTER } }],
      },
      initial_fetch_timeout: "0s",
      resource_api_version: "V3",
    },
  };
}

/** Server-side mutual TLS: the workload certificate, a client certificate required and checked against the mesh roots. */
export function mutualTlsSocket(alpn: readonly string[]): Json {
  return {
    name: "envoy.transport_sockets.tls",
    typed_config: {
      "@type": DOWNSTREAM_TLS_TYPE,
      require_client_certificate: true,
      common_tls_context: {
        tls_certificate_sds_secret_configs: [sdsSecret(WORKLOAD_SECRET)],
        combined_validation_context: { default_validation_context: {}, validation_context_sds_secret_config: sdsSecret(ROOT_SECRET) },
        alpn_protocols: alpn,
      },
    },
  };
}

export const HTTP_ALPN = ["h2", "http/1.1"];

/**
 * The filter chains of one mode: `match` (a destination port, or nothing for
 * the passthrough) and `chain` (name suffix → the chain's name and filters)
 * give one chain per transport the mode accepts.
 */
export function mtlsChains(mode: ServerMtlsMode, match: Json, chain: (tls: boolean) => Json, alpn: readonly string[]): Json[] {
  const tls = (extra: Json) => ({ ...chain(true), filter_chain_match: { ...match, ...extra }, transport_socket: mutualTlsSocket(alpn) });
  const plain = (extra: Json) => ({ ...chain(false), filter_chain_match: { ...match, ...extra } });
  if (mode === "STRICT") return [tls({})];
  if (mode === "DISABLE") return [plain({})];
  return [tls({ transport_protocol: "tls" }), plain({ transport_protocol: "raw_buffer" })];
}
