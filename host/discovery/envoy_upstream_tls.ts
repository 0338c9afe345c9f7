import type { ClientTlsSettings } from "../config/resources/networking.ts";
import { MESH_TLS_MODE } from "../mesh/endpoints.ts";
import type { ClientTls } from "../security/mtls/destination_rule.ts";
import { ROOT_SECRET, WORKLOAD_SECRET, sdsSecret } from "./envoy_mtls.ts";

/**
 * The TLS an Envoy originates on an outbound cluster, as upstream's cluster
 * builder writes it, from the client TLS the mesh model decides for the
 * cluster's host, port and subset (host/security/mtls/destination_rule.ts
 * `clientTls`: the Node sidecar's decision too).
 *
 * - A DestinationRule's `tls` (port level, subset, host level) is the
 *   cluster's `transport_socket`: DISABLE none; MESH_MUTUAL (upstream's
 *   ISTIO_MUTUAL) the workload certificate and the mesh roots (SDS `default`
 *   and `ROOTCA` from the node agent), SNI `outbound_.<port>_.<subset>_.<host>`
 *   unless `sni` says otherwise, the server's URI SAN one of `subjectAltNames`,
 *   else of the destination's service accounts; SIMPLE and MUTUAL the files the
 *   rule names, served by the node agent as upstream's `file-root:`/`file-cert:`
 *   SDS secrets (no `caCertificates`: the system roots, `file-root:system`;
 *   `caCrl` as a file), or
 *   on a gateway the orchestrator Secret `credentialName` names
 *   (`kubernetes://<name>`, its CA `kubernetes://<name>-cacert`, over ADS).
 * - Without one, auto mutual TLS: `transport_socket_matches` that give the
 *   MESH_MUTUAL socket to endpoints whose metadata says a sidecar answers
 *   (`envoy.transport_socket_match` `tlsMode: mesh`, from the endpoint's
 *   `security.mesh.io/tlsMode` label) and plain text to the others. An
 *   ORIGINAL_DST cluster has no endpoints to match: it gets the socket itself
 *   when the model said every instance has a sidecar.
 *
 * Pure. Proto3 JSON (packJson).
 */

type Json = Record<string, unknown>;

/** Envoy's endpoint metadata namespace `transport_socket_matches` read, and upstream's key in it. */
export const TRANSPORT_SOCKET_MATCH = "envoy.transport_socket_match";
export const TLS_MODE_KEY = "tlsMode";

/** Upstream's in-mesh ALPN (`istio`, `istio` + `h2`) renamed; `mesh-peer-exchange` would lead them only with TCP metadata exchange, which is not built. */
export const MESH_ALPN = ["mesh"];
export const MESH_H2_ALPN = ["mesh", "h2"];

const UPSTREAM_TLS_TYPE = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext";
const RAW_BUFFER = {
  name: "envoy.transport_sockets.raw_buffer",
  typed_config: { "@type": "type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer" },
};
/** Upstream's default for every TLS it originates. */
const TLS_PARAMS = { tls_minimum_protocol_version: "TLSv1_2", tls_maximum_protocol_version: "TLSv1_3" };

/** What the socket of one outbound cluster depends on besides the decision. */
export interface UpstreamTlsTarget {
  readonly host: string;
  readonly port: number;
  readonly subset?: string;
  /** The cluster speaks HTTP/2 (grpc, http2 ports). */
  readonly http2: boolean;
  /** An ORIGINAL_DST cluster: no endpoints, so no per-endpoint match. */
  readonly originalDst: boolean;
  /** The destination's identities (`spiffe://<td>/ns/<ns>/sa/<sa>`, a ServiceEntry's `subjectAltNames`), sorted. */
  readonly identities: readonly string[];
  /** The host comes from a ServiceEntry (upstream's external registry: its identities also check SIMPLE and MUTUAL). */
  readonly serviceEntry: boolean;
  /** The proxy is a gateway (node type `router`): `credentialName` is fetched as an orchestrator Secret. */
  readonly gateway: boolean;
  /** The config source of resources served over ADS (Secrets of `credentialName`). */
  readonly ads: Json;
}

/** The cluster fields (`transport_socket` or `transport_socket_matches`) and upstream's HTTP options that go with them. */
export interface UpstreamTls {
  readonly fields: Json;
  /** `upstream_http_protocol_options` (auto SNI, auto SAN validation), or undefined. */
  readonly httpOptions?: Json;
}

/** Upstream's SNI of in-mesh traffic to a cluster. */
export function meshSni(host: string, port: number, subset = ""): string {
  return `outbound_.${port}_.${subset}_.${host}`;
}

const exact = (sans: readonly string[]) => sans.map((s) => ({ exact: s }));

function tlsSocket(context: Json): Json {
  return { name: "envoy.transport_sockets.tls", typed_config: { "@type": UPSTREAM_TLS_TYPE, ...context } };
}

/** Mutual TLS with the mesh certificate (upstream's ISTIO_MUTUAL). */
function meshMutualSocket(sans: readonly string[], sni: string, http2: boolean): Json {
  return tlsSocket({
    common_tls_context: {
      tls_params: TLS_PARAMS,
      tls_certificate_sds_secret_configs: [sdsSecret(WORKLOAD_SECRET)],
      combined_validation_context: {
        default_validation_context: { match_subject_alt_names: exact(sans) },
        validation_context_sds_secret_config: sdsSecret(ROOT_SECRET),
      },
      alpn_protocols: http2 ? MESH_H2_ALPN : MESH_ALPN,
    },
    sni,
  });
}

/** An orchestrator Secret fetched over ADS (upstream's `kubernetes://` resource names). */
function credentialSecret(name: string, ads: Json): Json {
  return { name: name.includes("://") ? name : `kubernetes://${name}`, sds_config: ads };
}

/** SIMPLE or MUTUAL with the rule's files or credential (upstream's constructUpstreamTLS). */
function originatedTls(settings: ClientTlsSettings, target: UpstreamTlsTarget): UpstreamTls | undefined {
  const mutual = settings.mode === "MUTUAL";
  // Upstream serves a credential to sidecars only from a DestinationRule with a workloadSelector, which this mesh does not read: no TLS, as upstream.
  if (settings.credentialName && !target.gateway) return undefined;
  const sans = settings.subjectAltNames.length === 0 && target.serviceEntry ? target.identities : settings.subjectAltNames;
  const common: Json = { tls_params: TLS_PARAMS };
  const skipVerify = settings.insecureSkipVerify === true;
  if (settings.credentialName) {
    if (mutual) common.tls_certificate_sds_secret_configs = [credentialSecret(settings.credentialName, target.ads)];
    if (!skipVerify)
      common.combined_validation_context = {
        default_validation_context: { match_subject_alt_names: exact(sans) },
        validation_context_sds_secret_config: credentialSecret(`${settings.credentialName}-cacert`, target.ads),
      };
  } else {
    if (mutual) common.tls_certificate_sds_secret_configs = [sdsSecret(`file-cert:${settings.clientCertificate}~${settings.privateKey}`)];
    const checks = { match_subject_alt_names: exact(sans), ...(settings.caCrl ? { crl: { filename: settings.caCrl } } : {}) };
    common[skipVerify ? "validation_context" : "combined_validation_context"] = skipVerify
      ? {}
      : { default_validation_context: checks, validation_context_sds_secret_config: sdsSecret(`file-root:${settings.caCertificates ?? "system"}`) };
  }
  if (target.http2) common.alpn_protocols = ["h2"];
  // No `sni`: Envoy takes each request's host (auto SNI) and, unless names or trust are given otherwise, checks the certificate against it.
  const autoSni = !settings.sni;
  const autoSan = autoSni && settings.subjectAltNames.length === 0 && !skipVerify;
  return {
    fields: { transport_socket: tlsSocket({ common_tls_context: common, ...(settings.sni ? { sni: settings.sni } : {}) }) },
    ...(autoSni ? { httpOptions: { auto_sni: true, ...(autoSan ? { auto_san_validation: true } : {}) } } : {}),
  };
}

/**
 * The TLS of one outbound cluster for the client TLS decided for it
 * (`decision` from `clientTls` with `destinationHasSidecar` true, or for a
 * passthrough service whether every instance has one); undefined: plain text.
 */
export function upstreamTls(decision: ClientTls, target: UpstreamTlsTarget): UpstreamTls | undefined {
  const sni = meshSni(target.host, target.port, target.subset);
  if (decision.source === "auto-mtls") {
    if (decision.mode !== "MESH_MUTUAL") return undefined;
    const socket = meshMutualSocket(target.identities, sni, target.http2);
    if (target.originalDst) return { fields: { transport_socket: socket } };
    return {
      fields: {
        transport_socket_matches: [
          { name: `tlsMode-${MESH_TLS_MODE}`, match: { [TLS_MODE_KEY]: MESH_TLS_MODE }, transport_socket: socket },
          { name: "tlsMode-disabled", match: {}, transport_socket: RAW_BUFFER },
        ],
      },
    };
  }
  const settings = decision.settings!;
  switch (settings.mode) {
    case "DISABLE":
      return undefined;
    case "MESH_MUTUAL":
      return {
        fields: {
          transport_socket: meshMutualSocket(
            settings.subjectAltNames.length > 0 ? settings.subjectAltNames : target.identities,
            settings.sni ?? sni,
            target.http2,
          ),
        },
      };
    default:
      return originatedTls(settings, target);
  }
}

/** An endpoint's `tlsMode` label (host/mesh/endpoints.ts) as the metadata `transport_socket_matches` read (proto3 JSON); none for `disabled` or no label. */
export function transportSocketMetadata(tlsMode: string | undefined): Json {
  return tlsMode !== undefined && tlsMode !== "disabled" ? { metadata: { filter_metadata: { [TRANSPORT_SOCKET_MATCH]: { [TLS_MODE_KEY]: tlsMode } } } } : {};
}
