import { X509Certificate } from "node:crypto";

// The JSON and text shapes of Envoy's admin endpoints (envoy.admin.v3
// ServerInfo, Clusters, Listeners, Certificates; the `::`-separated text of
// /clusters and /listeners), built from what the sidecar knows. Fields the
// sidecar has no value for are left out, as proto3 JSON leaves out defaults.

/** envoy.admin.v3.ServerInfo.State. */
export type ServerState = "LIVE" | "DRAINING" | "PRE_INITIALIZING" | "INITIALIZING";

export interface SocketAddress {
  socket_address: { address: string; port_value: number };
}

export function socketAddress(address: string, port: number): SocketAddress {
  return { socket_address: { address, port_value: port } };
}

/** One upstream cluster and its hosts (Envoy's cluster names: `inbound|8080||`, `outbound|80||svc.ns.svc.cluster.local`, or a `--cluster` name). */
export interface ClusterInfo {
  name: string;
  hosts: Array<{ address: string; port: number }>;
}

export interface ListenerInfo {
  name: string;
  address: string;
  port: number;
}

/** GET /clusters?format=json: envoy.admin.v3.Clusters. Without active health checking Envoy reports every host HEALTHY. */
export function clustersJson(clusters: readonly ClusterInfo[]): unknown {
  return {
    cluster_statuses: clusters.map((c) => ({
      name: c.name,
      added_via_api: false,
      host_statuses: c.hosts.map((h) => ({ address: socketAddress(h.address, h.port), health_status: { eds_health_status: "HEALTHY" }, weight: 1 })),
    })),
  };
}

/** GET /clusters: Envoy's text, `cluster::host::field::value` per line. */
export function clustersText(clusters: readonly ClusterInfo[]): string {
  const lines: string[] = [];
  for (const c of clusters) {
    lines.push(`${c.name}::added_via_api::false`);
    for (const h of c.hosts) {
      const host = `${c.name}::${h.address}:${h.port}`;
      lines.push(
        `${host}::health_flags::healthy`,
        `${host}::weight::1`,
        `${host}::region::`,
        `${host}::zone::`,
        `${host}::sub_zone::`,
        `${host}::canary::false`,
        `${host}::priority::0`,
      );
    }
  }
  return lines.length ? `${lines.join("\n")}\n` : "";
}

/** GET /listeners?format=json: envoy.admin.v3.Listeners. */
export function listenersJson(listeners: readonly ListenerInfo[]): unknown {
  return { listener_statuses: listeners.map((l) => ({ name: l.name, local_address: socketAddress(l.address, l.port) })) };
}

/** GET /listeners: `name::address:port` per line. */
export function listenersText(listeners: readonly ListenerInfo[]): string {
  return listeners.map((l) => `${l.name}::${l.address.includes(":") ? `[${l.address}]` : l.address}:${l.port}\n`).join("");
}

/** The PEM material behind /certs: the workload chain and the mesh roots. */
export interface CertificateMaterial {
  certChainPem: string[];
  rootPems: string[];
}

/** envoy.admin.v3.CertificateDetails of one PEM certificate (in-memory secrets have the path `<inline>`, as Envoy shows SDS secrets). */
export function certificateDetails(pem: string, now: number): unknown {
  const c = new X509Certificate(pem);
  const validTo = new Date(c.validTo).getTime();
  const sans = (c.subjectAltName ?? "")
    .split(", ")
    .filter(Boolean)
    .map((s) => {
      const colon = s.indexOf(":");
      const kind = s.slice(0, colon);
      const value = s.slice(colon + 1);
      return kind === "URI" ? { uri: value } : kind === "DNS" ? { dns: value } : kind === "IP Address" ? { ip_address: value } : { uri: s };
    });
  return {
    path: "<inline>",
    serial_number: c.serialNumber.toLowerCase(),
    subject_alt_names: sans,
    // uint64 in proto3 JSON is a string
    days_until_expiration: String(Math.max(0, Math.floor((validTo - now) / 86_400_000))),
    valid_from: new Date(c.validFrom).toISOString(),
    expiration_time: new Date(validTo).toISOString(),
  };
}

/** GET /certs: envoy.admin.v3.Certificates (one entry: the workload certificate with its CA certificates). */
export function certsJson(material: CertificateMaterial | undefined, now: number): unknown {
  if (!material) return { certificates: [] };
  return {
    certificates: [
      {
        ca_cert: material.rootPems.map((p) => certificateDetails(p, now)),
        cert_chain: material.certChainPem.slice(0, 1).map((p) => certificateDetails(p, now)),
      },
    ],
  };
}

export interface ServerInfoInput {
  version: string;
  state: ServerState;
  startedAt: number;
  now: number;
  node: { id: string; cluster: string; metadata?: Record<string, unknown> };
  commandLineOptions: Record<string, unknown>;
}

/** GET /server_info: envoy.admin.v3.ServerInfo (durations as proto3 JSON strings, `"12s"`). */
export function serverInfo(i: ServerInfoInput): unknown {
  const uptime = `${Math.max(0, Math.floor((i.now - i.startedAt) / 1000))}s`;
  return {
    version: i.version,
    state: i.state,
    uptime_current_epoch: uptime,
    uptime_all_epochs: uptime,
    hot_restart_version: "disabled",
    command_line_options: i.commandLineOptions,
    node: i.node,
  };
}

/**
 * GET /config_dump?resource=NAME: Envoy returns only the entries of the
 * repeated field NAME, as `{"configs": [...]}`. Here NAME is a top-level
 * field of the sidecar's dump (`listeners`, `routes`, `clusters`,
 * `endpoints`, …); an object's values are its entries. `name_regex` keeps
 * entries whose `name` (or key) matches. Undefined: no such field.
 */
export function configDumpResource(
  dump: Record<string, unknown>,
  resource: string,
  nameMatches?: (name: string) => boolean,
): { configs: unknown[] } | undefined {
  if (!Object.hasOwn(dump, resource)) return undefined;
  const value = dump[resource];
  let entries: Array<[string | undefined, unknown]>;
  if (Array.isArray(value)) entries = value.map((v) => [(v as { name?: string } | null)?.name, v]);
  else if (value !== null && typeof value === "object") entries = Object.entries(value).map(([k, v]) => [(v as { name?: string } | null)?.name ?? k, v]);
  else entries = [[undefined, value]];
  return { configs: entries.filter(([name]) => !nameMatches || (name !== undefined && nameMatches(name))).map(([, v]) => v) };
}
