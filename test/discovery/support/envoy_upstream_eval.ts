// What an Envoy does with a served cluster for one of its endpoints, read
// with Envoy's rules from the decoded (strict, proto object form) Cluster and
// ClusterLoadAssignment: the first of `transport_socket_matches` whose
// `match` fields all equal the endpoint's `envoy.transport_socket_match`
// metadata, else the cluster's `transport_socket`, else plain text; and what
// that socket originates.

type Obj = Record<string, any>;

/** The endpoint's metadata in the namespace transport_socket_matches read (Struct fields, object form). */
function matchMetadata(endpoint: Obj | undefined): Obj {
  return endpoint?.metadata?.filter_metadata?.["envoy.transport_socket_match"]?.fields ?? {};
}

/** The socket Envoy uses to connect to `endpoint` (an lb_endpoint) of `cluster`; undefined: the default, plain text. */
export function socketFor(cluster: Obj, endpoint?: Obj): Obj | undefined {
  const metadata = matchMetadata(endpoint);
  for (const m of cluster.transport_socket_matches ?? []) {
    const wanted: Obj = m.match?.fields ?? {};
    if (Object.entries(wanted).every(([k, v]) => JSON.stringify(metadata[k]) === JSON.stringify(v))) return m.transport_socket;
  }
  return cluster.transport_socket;
}

/** What a socket originates, named by the DestinationRule mode that asks for it. */
export interface Originated {
  mode: "DISABLE" | "MESH_MUTUAL" | "SIMPLE" | "MUTUAL";
  sni?: string;
  sans?: string[];
  alpn?: string[];
  /** SDS secret names: the client certificate's and the trust roots'. */
  certificate?: string;
  roots?: string;
}

export function originated(socket: Obj | undefined): Originated {
  if (!socket || socket.name === "envoy.transport_sockets.raw_buffer") return { mode: "DISABLE" };
  const tls = socket.typed_config;
  if (!String(tls?.["@type"]).endsWith("UpstreamTlsContext")) throw new Error(`not an upstream TLS socket: ${JSON.stringify(socket)}`);
  const common = tls.common_tls_context ?? {};
  const certificate: string | undefined = common.tls_certificate_sds_secret_configs?.[0]?.name;
  const combined = common.combined_validation_context;
  const roots: string | undefined = combined?.validation_context_sds_secret_config?.name;
  const sans: string[] | undefined = combined?.default_validation_context?.match_subject_alt_names?.map((m: Obj) => m.exact);
  const mode = certificate === "default" && roots === "ROOTCA" ? "MESH_MUTUAL" : certificate ? "MUTUAL" : "SIMPLE";
  return { mode, sni: tls.sni, sans, alpn: common.alpn_protocols, certificate, roots };
}

/** The lb_endpoints of a decoded load assignment (a cluster's inline one, or EDS's). */
export function lbEndpoints(assignment: Obj | undefined): Obj[] {
  return (assignment?.endpoints ?? []).flatMap((l: Obj) => l.lb_endpoints ?? []);
}
