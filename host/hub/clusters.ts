// Named clusters → addresses, as `disco-agent proxy --cluster NAME=HOST:PORT`
// passes them (repeatable; `NAME=A:1,B:2,C:3` names several endpoints, which
// hub calls take in turn, round robin). The filter names the cluster of each
// hub call (`checkCluster` / `reportCluster`, default `hub_server`);
// `hub_server` is an ordinary name here, with no address of its own.

import { MESH_TLS_MODE, TLS_MODE_LABEL } from "../mesh/endpoints.ts";
import { serviceNamespace } from "../mesh/hosts.ts";
import type { EndpointInstance, MeshService } from "../mesh/registry.ts";

/** Where a cluster's hub listens: TCP host and port, or a Unix domain socket path. */
export type ClusterAddress = { readonly kind: "tcp"; readonly host: string; readonly port: number } | { readonly kind: "unix"; readonly path: string };

export interface Cluster {
  readonly name: string;
  /** The first endpoint's address. */
  readonly address: ClusterAddress;
  /** The first endpoint as a grpc-js channel target: `HOST:PORT`, `[V6]:PORT` or `unix:///PATH`. */
  readonly target: string;
  /** Every endpoint, in the order given (hub calls take them round robin); the first is `address`. */
  readonly endpoints: ReadonlyArray<{ readonly address: ClusterAddress; readonly target: string }>;
}

/** A `--cluster` value that cannot be used; the message quotes the spec. */
export class ClusterSpecError extends Error {
  readonly code = "CLUSTER_SPEC_INVALID";
}

const FORMS = "expected NAME=HOST:PORT or NAME=unix:///PATH, or several addresses separated by commas";
const NAME = /^[A-Za-z0-9_.-]+$/;
// A DNS name or IPv4 literal; IPv6 literals come bracketed and are matched apart.
const HOST = /^[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?$/;
const IPV6 = /^\[([0-9A-Fa-f:.]+(%[A-Za-z0-9_.-]+)?)\]$/;
const PORT = /^[0-9]{1,5}$/;
const UNIX = "unix://";

/**
 * Parses one `NAME=ADDRESS[,ADDRESS…]` spec.
 *
 * @example parseClusterSpec("hub_server=127.0.0.1:9091") // { name: "hub_server", target: "127.0.0.1:9091", … }
 * @example parseClusterSpec("hub_server=10.0.0.1:9091,10.0.0.2:9091").endpoints.length // 2
 */
export function parseClusterSpec(spec: string): Cluster {
  const bad = (why: string): never => {
    throw new ClusterSpecError(`--cluster ${JSON.stringify(spec)}: ${why} (${FORMS})`);
  };
  const eq = spec.indexOf("=");
  if (eq < 0) bad("no '=' between the cluster name and its address");
  const name = spec.slice(0, eq).trim();
  const list = spec.slice(eq + 1).trim();
  if (!name) bad("the cluster name is empty");
  if (!NAME.test(name)) bad(`cluster name ${JSON.stringify(name)} may only contain letters, digits, '_', '.' and '-'`);
  if (!list) bad("the address is empty");
  const endpoints = list.split(",").map((text, i, all) => {
    const address = text.trim();
    if (!address) bad(`address ${i + 1} of ${all.length} is empty`);
    return parseAddress(address, (why) => bad(all.length > 1 ? `${JSON.stringify(address)}: ${why}` : why));
  });
  const seen = new Set<string>();
  for (const e of endpoints) {
    if (seen.has(e.target)) bad(`address ${e.target} is given twice`);
    seen.add(e.target);
  }
  return Object.freeze({ name, address: endpoints[0].address, target: endpoints[0].target, endpoints: Object.freeze(endpoints) });
}

function parseAddress(address: string, bad: (why: string) => never): { readonly address: ClusterAddress; readonly target: string } {
  if (address.startsWith("unix:")) {
    // unix:///abs/path is the documented form; the authority part must be empty.
    if (!address.startsWith(UNIX)) bad("a Unix socket address is written unix:///PATH");
    const path = address.slice(UNIX.length);
    if (!path.startsWith("/")) bad("a Unix socket path must be absolute (unix:///PATH)");
    if (path.length === 1) bad("the Unix socket path is empty");
    return Object.freeze({ address: Object.freeze({ kind: "unix", path }), target: `unix://${path}` });
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
  return Object.freeze({ address: Object.freeze({ kind: "tcp", host, port }), target: `${hostText}:${port}` });
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

/**
 * One `disco-agent proxy --endpoint` value: an endpoint the sidecar's
 * registry did not learn from documents, for its outbound and gateway
 * routing: the service FQDN and **service** port a caller names
 * (VirtualService `destination.port.number`, DestinationRule
 * `portLevelSettings[].port.number`), where it is reached, and whether a
 * sidecar runs in front of it (auto mutual TLS, spec rules 1–2).
 * `endpointFlagServices` turns them into registry services whose endpoints
 * are the mesh's one ServiceEndpoint type (host/mesh/endpoints.ts).
 */
export interface EndpointFlag {
  /** `<service>.<namespace>.svc.cluster.local` (or any host name). */
  readonly host: string;
  readonly servicePort: number;
  /** `host:servicePort`, the registry key. */
  readonly name: string;
  /** Where to connect: the destination sidecar's inbound listener, or the app itself. */
  readonly address: { readonly host: string; readonly port: number };
  /** The destination runs a sidecar: auto mutual TLS applies. */
  readonly sidecar: boolean;
  /** Service account the destination must prove (secure naming); undefined = any identity of the trust domain. */
  readonly serviceAccount?: string;
  /** The endpoint's workload labels (`label=k=v`, repeatable): DestinationRule subsets select endpoints by them. */
  readonly labels?: Readonly<Record<string, string>>;
}

/** As `--serviceAccount` (host/proxy/agent_command.ts). */
const SERVICE_ACCOUNT = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const ENDPOINT_FORMS = "expected FQDN:SERVICE_PORT=HOST:PORT[,sidecar][,sa=SERVICE_ACCOUNT][,label=KEY=VALUE…]";

/**
 * Parses one `--endpoint` value. The address part is read like a `--cluster`
 * TCP address; the options after it are `sidecar` and `sa=NAME`.
 *
 * @example parseServiceEndpointSpec("httpbin.foo.svc.cluster.local:8000=127.0.0.1:41234,sidecar,sa=httpbin").sidecar // true
 */
export function parseServiceEndpointSpec(spec: string): EndpointFlag {
  const bad = (why: string): never => {
    throw new ClusterSpecError(`--endpoint ${JSON.stringify(spec)}: ${why} (${ENDPOINT_FORMS})`);
  };
  const eq = spec.indexOf("=");
  if (eq < 0) bad("no '=' between the service and its address");
  const service = spec.slice(0, eq).trim();
  const [addressText, ...options] = spec
    .slice(eq + 1)
    .split(",")
    .map((s) => s.trim());
  const colon = service.lastIndexOf(":");
  if (colon < 0) bad("the service port is missing (FQDN:SERVICE_PORT)");
  const host = service.slice(0, colon).toLowerCase();
  const portText = service.slice(colon + 1);
  if (!HOST.test(host)) bad(`service host ${JSON.stringify(host)} is not a DNS name`);
  if (!PORT.test(portText) || Number(portText) < 1 || Number(portText) > 65535) bad(`service port ${JSON.stringify(portText)} is not in 1..65535`);
  let address: { host: string; port: number } = { host: "", port: 0 };
  const clusterSpec = `${host}=${addressText}`;
  try {
    const c = parseClusterSpec(clusterSpec);
    if (c.address.kind !== "tcp") bad("the address must be HOST:PORT");
    else address = { host: c.address.host, port: c.address.port };
  } catch (e) {
    // The --cluster prefix is cut by its length: the quoted spec may itself contain quotes.
    const prefix = `--cluster ${JSON.stringify(clusterSpec)}: `;
    if (e instanceof ClusterSpecError && e.message.startsWith(prefix)) bad(e.message.slice(prefix.length).replace(/ \(expected .*\)$/, ""));
    throw e;
  }
  let sidecar = false;
  let serviceAccount: string | undefined;
  const labels: Record<string, string> = {};
  for (const o of options) {
    if (o === "sidecar") sidecar = true;
    else if (o.startsWith("label=")) {
      const kv = o.slice("label=".length);
      const at = kv.indexOf("=");
      if (at <= 0) bad(`label option ${JSON.stringify(o)} is not label=KEY=VALUE`);
      labels[kv.slice(0, at)] = kv.slice(at + 1);
    } else if (o.startsWith("sa=") && o.length > 3) {
      serviceAccount = o.slice(3);
      if (!SERVICE_ACCOUNT.test(serviceAccount)) bad(`sa=${JSON.stringify(serviceAccount)} is not a service account name`);
    } else bad(`unknown option ${JSON.stringify(o)}`);
  }
  // Secure naming checks spiffe://<td>/ns/<service namespace>/sa/<sa>: without a namespace in the host, sa= could not be enforced.
  if (serviceAccount !== undefined && serviceNamespace(host) === undefined)
    bad(`sa= needs a service host <service>.<namespace>.svc[.…] to name the identity, got ${JSON.stringify(host)}`);
  const servicePort = Number(portText);
  // Endpoints of one service port differ by their labels (subsets): the registry key says them.
  const labelText = Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  return Object.freeze({
    host,
    servicePort,
    name: `${host}:${servicePort}${labelText ? `;${labelText}` : ""}`,
    address: Object.freeze(address),
    sidecar,
    serviceAccount,
    labels: Object.freeze(labels),
  });
}

/** Every `--endpoint`, keyed by `host:servicePort` (plus `;labels` when it has labels); a key given twice is an error. */
export function parseServiceEndpoints(specs: readonly string[]): ReadonlyMap<string, EndpointFlag> {
  const out = new Map<string, EndpointFlag>();
  for (const spec of specs) {
    const e = parseServiceEndpointSpec(spec);
    if (out.has(e.name)) throw new ClusterSpecError(`--endpoint ${JSON.stringify(spec)}: ${e.name} is already defined`);
    out.set(e.name, e);
  }
  return out;
}

/**
 * The `--endpoint` values as registry services (`source: "registry"`), one
 * per host with every port named and an instance per address, so the
 * registry answers for them as for the documents' Services
 * (host/mesh/endpoints.ts `serviceEndpoints`): `sidecar` becomes the
 * injected pod's `security.mesh.io/tlsMode: mesh` label, `sa=` the service
 * account. A host the documents describe keeps the documents' ports and
 * gains these instances (host/mesh/registry.ts `buildRegistry`).
 */
export function endpointFlagServices(flags: Iterable<EndpointFlag>): MeshService[] {
  const byHost = new Map<string, EndpointFlag[]>();
  for (const f of flags) byHost.set(f.host, [...(byHost.get(f.host) ?? []), f]);
  return [...byHost].map(([fqdn, list]) => {
    const namespace = serviceNamespace(fqdn);
    const ports = [...new Set(list.map((f) => f.servicePort))];
    const instances = list.map(
      (f): EndpointInstance =>
        Object.freeze({
          address: f.address.host,
          ports: Object.freeze([{ name: portName(f.servicePort), port: f.address.port }]),
          labels: Object.freeze({ ...f.labels, ...(f.sidecar ? { [TLS_MODE_LABEL]: MESH_TLS_MODE } : {}) }),
          serviceAccount: f.serviceAccount,
        }),
    );
    return Object.freeze({
      name: fqdn.split(".")[0],
      namespace: namespace ?? "",
      fqdn,
      addresses: Object.freeze([]),
      ports: Object.freeze(ports.map((p) => Object.freeze({ name: portName(p), port: p, targetPort: p }))),
      source: "registry" as const,
      external: namespace === undefined,
      instances: Object.freeze(instances),
    });
  });
}

/** Flag services name each port by its number, so an instance port finds its service port (host/mesh/endpoints.ts matches by name). */
const portName = (port: number) => `port-${port}`;
