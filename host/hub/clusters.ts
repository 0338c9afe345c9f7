// Named clusters → addresses, as `disco-agent proxy --cluster NAME=HOST:PORT`
// passes them (repeatable). The filter names the cluster of each hub call
// (`checkCluster` / `reportCluster`, default `hub_server`); `hub_server` is
// an ordinary name here, with no address of its own.

/** Where a cluster's hub listens: TCP host and port, or a Unix domain socket path. */
export type ClusterAddress =
  | { readonly kind: "tcp"; readonly host: string; readonly port: number }
  | { readonly kind: "unix"; readonly path: string };

export interface Cluster {
  readonly name: string;
  readonly address: ClusterAddress;
  /** The address as a grpc-js channel target: `HOST:PORT`, `[V6]:PORT` or `unix:///PATH`. */
  readonly target: string;
}

/** A `--cluster` value that cannot be used; the message quotes the spec. */
export class ClusterSpecError extends Error {
  readonly code = "CLUSTER_SPEC_INVALID";
}

const FORMS = "expected NAME=HOST:PORT or NAME=unix:///PATH";
const NAME = /^[A-Za-z0-9_.-]+$/;
// A DNS name or IPv4 literal; IPv6 literals come bracketed and are matched apart.
const HOST = /^[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?$/;
const IPV6 = /^\[([0-9A-Fa-f:.]+(%[A-Za-z0-9_.-]+)?)\]$/;
const PORT = /^[0-9]{1,5}$/;
const UNIX = "unix://";

/**
 * Parses one `NAME=ADDRESS` spec.
 *
 * @example parseClusterSpec("hub_server=127.0.0.1:9091") // { name: "hub_server", target: "127.0.0.1:9091", … }
 */
export function parseClusterSpec(spec: string): Cluster {
  const bad = (why: string): never => {
    throw new ClusterSpecError(`--cluster ${JSON.stringify(spec)}: ${why} (${FORMS})`);
  };
  const eq = spec.indexOf("=");
  if (eq < 0) bad("no '=' between the cluster name and its address");
  const name = spec.slice(0, eq).trim();
  const address = spec.slice(eq + 1).trim();
  if (!name) bad("the cluster name is empty");
  if (!NAME.test(name)) bad(`cluster name ${JSON.stringify(name)} may only contain letters, digits, '_', '.' and '-'`);
  if (!address) bad("the address is empty");

  if (address.startsWith("unix:")) {
    // unix:///abs/path is the documented form; the authority part must be empty.
    if (!address.startsWith(UNIX)) bad("a Unix socket address is written unix:///PATH");
    const path = address.slice(UNIX.length);
    if (!path.startsWith("/")) bad("a Unix socket path must be absolute (unix:///PATH)");
    if (path.length === 1) bad("the Unix socket path is empty");
    return Object.freeze({ name, address: Object.freeze({ kind: "unix", path }), target: `unix://${path}` });
  }

  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(address);
  if (scheme) bad(`no scheme is written before a TCP address (${scheme[1]}://): use HOST:PORT`);
  const colon = address.lastIndexOf(":");
  if (colon < 0) bad("the port is missing");
  const hostText = address.slice(0, colon);
  const portText = address.slice(colon + 1);
  if (!hostText) bad("the host is missing");
  const v6 = IPV6.exec(hostText);
  if (!v6 && hostText.includes(":")) bad("an IPv6 address must be bracketed, as in [::1]:9091");
  if (!v6 && !HOST.test(hostText)) bad(`host ${JSON.stringify(hostText)} is not a DNS name or an IP address`);
  if (!PORT.test(portText)) bad(`port ${JSON.stringify(portText)} is not a number`);
  const port = Number(portText);
  if (port < 1 || port > 65535) bad(`port ${port} is outside 1..65535`);
  const host = v6 ? v6[1] : hostText;
  return Object.freeze({ name, address: Object.freeze({ kind: "tcp", host, port }), target: `${hostText}:${port}` });
}

/**
 * Parses every `--cluster` value into a map by name. A name given twice is
 * an error (which one was meant cannot be guessed).
 *
 * @example parseClusters(["hub_server=127.0.0.1:9091", "reports=unix:///run/hub.sock"]).get("reports")?.target // "unix:///run/hub.sock"
 */
export function parseClusters(specs: readonly string[]): ReadonlyMap<string, Cluster> {
  const clusters = new Map<string, Cluster>();
  for (const spec of specs) {
    const cluster = parseClusterSpec(spec);
    const earlier = clusters.get(cluster.name);
    if (earlier) {
      throw new ClusterSpecError(`--cluster ${JSON.stringify(spec)}: cluster ${JSON.stringify(cluster.name)} is already defined as ${earlier.target}`);
    }
    clusters.set(cluster.name, cluster);
  }
  return clusters;
}
