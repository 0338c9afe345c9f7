import { isIP } from "node:net";
import { DEFAULT_DOMAIN } from "../mesh/hosts.ts";
import { workloadNodeId } from "../mesh/node_id.ts";
import { ROOT_SECRET, SDS_CLUSTER, WORKLOAD_SECRET, sdsSecret } from "./envoy_mtls.ts";
import { http2ProtocolOptions } from "./envoy_wasm.ts";

/**
 * The bootstrap of an Envoy sidecar configured by `disco-discovery` over ADS
 * (`meshctl x envoy-bootstrap`): its node (upstream's id
 * `<type>~<ip>~<pod>.<namespace>~<namespace>.svc.<domain>`, metadata
 * `NAMESPACE` and `LABELS` as upstream's agent writes them), the admin
 * listener, the `xds-grpc` cluster to the control plane (HTTP/2) and
 * `dynamic_resources` taking listeners and clusters, and through them
 * routes, endpoints and the filter's extension config, from one ADS stream;
 * the `sds-grpc` cluster to the node agent's socket, where the served
 * inbound listeners ask for the SDS secrets `default` and `ROOTCA` (upstream's
 * agent path); with `MUTUAL_TLS`, `xds-grpc` speaks mutual TLS with them to
 * disco-discovery's secure port.
 * Proto3 JSON, the form Envoy reads with `-c`.
 */

export const XDS_CLUSTER = "xds-grpc";
export const DEFAULT_DISCOVERY_ADDRESS = "mesh-disco:15010";
/** Where upstream's agent serves SDS to its Envoy (relative to Envoy's working directory). */
export const SDS_SOCKET = "./var/run/secrets/workload-spiffe-uds/socket";

export interface BootstrapOptions {
  /** `host:port` of disco-discovery's plain-text xDS listener. */
  readonly discoveryAddress: string;
  readonly type: "sidecar" | "router";
  readonly pod: string;
  readonly namespace: string;
  readonly ip: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Node.cluster (upstream: the service cluster); default `<pod>.<namespace>`. */
  readonly cluster?: string;
  readonly adminPort: number;
  /** The mesh's DNS domain (disco-discovery's `--domain`), the node id's last part; default `cluster.local`. */
  readonly domain?: string;
  /** `MUTUAL_TLS`: ADS to disco-discovery's `--secureGrpcAddr`, with the workload certificate (as the agent's flag of that name); default plain text. */
  readonly controlPlaneAuthPolicy?: "NONE" | "MUTUAL_TLS";
  /** With MUTUAL_TLS: the suffix disco-discovery's URI SAN must end with (the agent's `--discoIdentity`), e.g. `sa/disco-discovery`. */
  readonly discoIdentity?: string;
}

/** `host:port` split; throws naming what was expected. */
export function splitHostPort(address: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:[\]]+):(\d+)$/.exec(address);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port < 1 || port > 65535) throw new Error(`expected host:port (e.g. ${DEFAULT_DISCOVERY_ADDRESS}), got ${JSON.stringify(address)}`);
  return { host: m[1].replace(/^\[|\]$/g, ""), port };
}

/**
 * Mutual TLS to the control plane: the workload certificate and the mesh
 * roots from the node agent (SDS `default`, `ROOTCA`), the server's URI SAN
 * ending with `discoIdentity` when given. The identity this proves is what
 * disco-discovery serves a proxy's namespace's Secrets against.
 */
function controlPlaneTls(discoIdentity: string | undefined): Record<string, unknown> {
  return {
    name: "envoy.transport_sockets.tls",
    typed_config: {
      "@type": "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext",
      common_tls_context: {
        alpn_protocols: ["h2"],
        tls_certificate_sds_secret_configs: [sdsSecret(WORKLOAD_SECRET)],
        combined_validation_context: {
          default_validation_context: discoIdentity ? { match_subject_alt_names: [{ suffix: discoIdentity }] } : {},
          validation_context_sds_secret_config: sdsSecret(ROOT_SECRET),
        },
      },
    },
  };
}

export function envoyBootstrap(o: BootstrapOptions): Record<string, unknown> {
  const { host, port } = splitHostPort(o.discoveryAddress);
  const ads = { ads: {}, resource_api_version: "V3" };
  return {
    node: {
      id: workloadNodeId({ type: o.type, ip: o.ip, pod: o.pod, namespace: o.namespace, domain: o.domain ?? DEFAULT_DOMAIN }),
      cluster: o.cluster ?? `${o.pod}.${o.namespace}`,
      metadata: { NAMESPACE: o.namespace, ...(Object.keys(o.labels).length > 0 ? { LABELS: o.labels } : {}) },
    },
    admin: { address: { socket_address: { address: "127.0.0.1", port_value: o.adminPort } } },
    dynamic_resources: {
      ads_config: {
        api_type: "GRPC",
        transport_api_version: "V3",
        grpc_services: [{ envoy_grpc: { cluster_name: XDS_CLUSTER } }],
        set_node_on_first_message_only: true,
      },
      lds_config: ads,
      cds_config: ads,
    },
    static_resources: {
      clusters: [
        {
          name: XDS_CLUSTER,
          // A name is resolved by DNS; an address is used as given.
          type: isIP(host) ? "STATIC" : "STRICT_DNS",
          connect_timeout: "1s",
          lb_policy: "ROUND_ROBIN",
          typed_extension_protocol_options: http2ProtocolOptions(),
          ...(o.controlPlaneAuthPolicy === "MUTUAL_TLS" ? { transport_socket: controlPlaneTls(o.discoIdentity) } : {}),
          load_assignment: {
            cluster_name: XDS_CLUSTER,
            endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: host, port_value: port } } } }] }],
          },
        },
        {
          name: SDS_CLUSTER,
          type: "STATIC",
          connect_timeout: "1s",
          typed_extension_protocol_options: http2ProtocolOptions(),
          load_assignment: { cluster_name: SDS_CLUSTER, endpoints: [{ lb_endpoints: [{ endpoint: { address: { pipe: { path: SDS_SOCKET } } } }] }] },
        },
      ],
    },
  };
}
