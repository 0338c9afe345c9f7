/**
 * Upstream's name of a service port's cluster, `outbound|<port>|<subset>|<host>`
 * (subset empty for the whole service): the one place it is written and
 * read, by the control plane's xDS, the Node sidecar's routes and stats, and
 * the debug pages.
 */

/** `outbound|9080|v1|reviews.default.svc.cluster.local`; no subset: `outbound|9080||reviews.default.svc.cluster.local`. */
export function clusterName(host: string, port: number, subset = ""): string {
  return `outbound|${port}|${subset}|${host}`;
}

export interface OutboundCluster {
  readonly host: string;
  readonly port: number;
  /** "" for the whole service. */
  readonly subset: string;
}

/** The parts of an outbound cluster name; undefined for any other name (`inbound|…`, `PassthroughCluster`, a `--cluster` name). */
export function parseClusterName(name: string): OutboundCluster | undefined {
  const parts = name.split("|");
  if (parts.length !== 4 || parts[0] !== "outbound" || !/^\d+$/.test(parts[1]) || parts[3] === "") return undefined;
  const port = Number(parts[1]);
  if (port < 1 || port > 65535) return undefined;
  return { host: parts[3], port, subset: parts[2] };
}
