/**
 * Cluster shapes shared by what Envoy is served: an address, and the cluster
 * Envoy fetches a URL through (a remote module, a JSON Web Key Set): the
 * URL's host by DNS, TLS with SNI for https. Proto3 JSON.
 */

type Json = Record<string, unknown>;

export function address(ip: string, port: number): Json {
  return { socket_address: { address: ip, port_value: port } };
}

/** The cluster named `name` that reaches the host of `uri` (port from the URL, else 443 / 80). */
export function remoteHttpCluster(name: string, uri: string): Json {
  const url = new URL(uri);
  const tls = url.protocol === "https:";
  const port = url.port ? Number(url.port) : tls ? 443 : 80;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return {
    name,
    type: "STRICT_DNS",
    connect_timeout: "10s",
    load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: address(host, port) } }] }] },
    ...(tls
      ? {
          transport_socket: {
            name: "envoy.transport_sockets.tls",
            typed_config: { "@type": "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext", sni: host },
          },
        }
      : {}),
  };
}

/** Where `remoteHttpCluster` for `uri` is named `<prefix>|<host>|<port>`. */
export function urlClusterName(prefix: string, uri: string): string {
  const url = new URL(uri);
  const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  return `${prefix}|${url.hostname}|${port}`;
}
