import type { Field } from "../decode.ts";
import { attempt, attemptEach, noErrorsYet } from "../problems.ts";
import { dns1123Label, isDns1123Label, isDns1123Subdomain, labelMap, port, resolveHost, wildcardHost } from "./syntax.ts";

/**
 * The networking resources (spec 1): DestinationRule, Gateway, VirtualService.
 * As upstream, `networking.mesh.io` serves `v1alpha3`, `v1beta1` and `v1`
 * with one schema: a document may carry any of them.
 */
export const NETWORKING_API_VERSION = "networking.mesh.io/v1alpha3";
export const NETWORKING_API_VERSIONS = Object.freeze(["networking.mesh.io/v1alpha3", "networking.mesh.io/v1beta1", "networking.mesh.io/v1"]);

// ---- DestinationRule

/** Client-side TLS. The spec uses MESH_MUTUAL and DISABLE; upstream also has SIMPLE and MUTUAL (security.md §2.2). */
export const CLIENT_TLS_MODES = ["DISABLE", "SIMPLE", "MUTUAL", "MESH_MUTUAL"] as const;
export type ClientTlsMode = (typeof CLIENT_TLS_MODES)[number];

export interface ClientTlsSettings {
  readonly mode: ClientTlsMode;
  readonly clientCertificate?: string;
  readonly privateKey?: string;
  readonly caCertificates?: string;
  readonly credentialName?: string;
  readonly subjectAltNames: readonly string[];
  readonly sni?: string;
}

export interface PortTrafficPolicy {
  /** The service port (not the container port, security.md §7.9). */
  readonly port: number;
  /** Replaces the destination-level tls for this port; undefined: no TLS setting (auto mutual TLS). */
  readonly tls?: ClientTlsSettings;
}

export interface TrafficPolicy {
  readonly tls?: ClientTlsSettings;
  readonly portLevelSettings: readonly PortTrafficPolicy[];
}

export interface Subset {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly trafficPolicy?: TrafficPolicy;
}

export interface DestinationRuleSpec {
  /** As written. */
  readonly host: string;
  /** `host` with a short name resolved in the rule's namespace (`reviews` → `reviews.<ns>.svc.cluster.local`). */
  readonly fqdn: string;
  readonly trafficPolicy?: TrafficPolicy;
  readonly subsets: readonly Subset[];
  readonly exportTo: readonly string[];
}

const TLS_FIELDS = ["mode", "clientCertificate", "privateKey", "caCertificates", "credentialName", "subjectAltNames", "sni"];

function clientTls(f: Field): ClientTlsSettings {
  f.object();
  f.allowOnly(TLS_FIELDS);
  const mode = f.get("mode").enumOf(CLIENT_TLS_MODES, "DISABLE");
  const opt = (name: string) => f.get(name).optionalString();
  const tls: ClientTlsSettings = Object.freeze({
    mode,
    clientCertificate: opt("clientCertificate"),
    privateKey: opt("privateKey"),
    caCertificates: opt("caCertificates"),
    credentialName: opt("credentialName"),
    subjectAltNames: Object.freeze(f.get("subjectAltNames").list().map((s) => s.nonEmptyString())),
    sni: opt("sni"),
  });
  // Upstream: MUTUAL needs the client's own certificate and key unless they come from a credential.
  if (mode === "MUTUAL" && !tls.credentialName && (!tls.clientCertificate || !tls.privateKey)) {
    f.invalid("expected clientCertificate and privateKey (or credentialName) with mode MUTUAL");
  }
  return tls;
}

function trafficPolicy(f: Field): TrafficPolicy {
  f.object();
  // loadBalancer, connectionPool and outlierDetection are not modelled: warned about as unknown.
  f.allowOnly(["tls", "portLevelSettings"]);
  const tls = f.get("tls").present ? attempt(f.get("tls"), clientTls) : undefined;
  const seen = new Set<number>();
  const portLevelSettings = attemptEach(f.get("portLevelSettings"), (p): PortTrafficPolicy => {
    p.object();
    p.allowOnly(["port", "tls"]);
    const portField = p.get("port");
    portField.object();
    portField.allowOnly(["number"]);
    const number = port(portField.get("number"));
    if (seen.has(number)) portField.get("number").invalid(`duplicate port ${number} in portLevelSettings`);
    seen.add(number);
    return Object.freeze({ port: number, tls: p.get("tls").present ? clientTls(p.get("tls")) : undefined });
  });
  return Object.freeze({ tls, portLevelSettings: Object.freeze(portLevelSettings) });
}

function exportTo(f: Field): readonly string[] {
  return Object.freeze(
    f.list().map((item) => {
      const s = item.nonEmptyString();
      if (s !== "." && s !== "*" && !isDns1123Label(s)) item.fail('".", "*" or a namespace name');
      return s;
    }),
  );
}

export function decodeDestinationRule(spec: Field, namespace: string): DestinationRuleSpec {
  spec.object();
  spec.allowOnly(["host", "trafficPolicy", "subsets", "exportTo"]);
  const host = attempt(spec.get("host"), (f) => wildcardHost(f));
  const tp = spec.get("trafficPolicy").present ? attempt(spec.get("trafficPolicy"), trafficPolicy) : undefined;
  const names = new Set<string>();
  const subsets = attemptEach(spec.get("subsets"), (s): Subset => {
    s.object();
    s.allowOnly(["name", "labels", "trafficPolicy"]);
    const name = dns1123Label(s.get("name"));
    if (names.has(name)) s.get("name").invalid(`duplicate subset name ${JSON.stringify(name)}`);
    names.add(name);
    return Object.freeze({
      name,
      labels: labelMap(s.get("labels")),
      trafficPolicy: s.get("trafficPolicy").present ? trafficPolicy(s.get("trafficPolicy")) : undefined,
    });
  });
  return Object.freeze({
    host,
    fqdn: host === undefined ? host : resolveHost(host, namespace),
    trafficPolicy: tp,
    subsets: Object.freeze(subsets),
    exportTo: attempt(spec.get("exportTo"), exportTo),
  });
}

// ---- Gateway

/** Upstream parses protocols case-insensitively; values are stored upper case. */
export const GATEWAY_PROTOCOLS = ["HTTP", "HTTPS", "HTTP2", "GRPC", "TCP", "TLS", "MONGO"] as const;
export type GatewayProtocol = (typeof GATEWAY_PROTOCOLS)[number];
export const SERVER_TLS_MODES = ["PASSTHROUGH", "SIMPLE", "MUTUAL", "AUTO_PASSTHROUGH", "MESH_MUTUAL"] as const;
export type ServerTlsMode = (typeof SERVER_TLS_MODES)[number];

export interface GatewayPort {
  readonly number: number;
  readonly name: string;
  readonly protocol: GatewayProtocol;
}

export interface ServerTlsSettings {
  readonly mode: ServerTlsMode;
  readonly httpsRedirect: boolean;
  readonly credentialName?: string;
  readonly serverCertificate?: string;
  readonly privateKey?: string;
  readonly caCertificates?: string;
}

export interface GatewayServer {
  readonly port: GatewayPort;
  /** `host`, `*`, `*.suffix`, or `namespace/host` (namespace `.` = the gateway's own, `*` = any). */
  readonly hosts: readonly string[];
  readonly tls?: ServerTlsSettings;
  readonly name?: string;
  readonly bind?: string;
}

export interface GatewaySpec {
  /** Labels of the proxy workloads that run this gateway (e.g. `mesh: ingressgateway`); any namespace. */
  readonly selector: Readonly<Record<string, string>>;
  readonly servers: readonly GatewayServer[];
}

function gatewayHost(f: Field): string {
  const s = f.nonEmptyString();
  const slash = s.indexOf("/");
  if (slash >= 0) {
    const ns = s.slice(0, slash);
    if (ns !== "." && ns !== "*" && !isDns1123Label(ns)) f.fail('[namespace/]host where namespace is ".", "*" or a namespace name');
    if (!isHostText(s.slice(slash + 1))) f.fail("[namespace/]host where host is a DNS name, optionally prefixed by `*.`, or `*`");
    return s;
  }
  if (!isHostText(s)) f.fail("[namespace/]host where host is a DNS name, optionally prefixed by `*.`, or `*`");
  return s;
}

function isHostText(s: string): boolean {
  return s === "*" || /^(\*\.)?[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*$/.test(s);
}

function serverTls(f: Field): ServerTlsSettings {
  f.object();
  f.allowOnly(["mode", "httpsRedirect", "credentialName", "serverCertificate", "privateKey", "caCertificates"]);
  const tls: ServerTlsSettings = Object.freeze({
    mode: f.get("mode").enumOf(SERVER_TLS_MODES, "PASSTHROUGH"),
    httpsRedirect: f.get("httpsRedirect").bool(false),
    credentialName: f.get("credentialName").optionalString(),
    serverCertificate: f.get("serverCertificate").optionalString(),
    privateKey: f.get("privateKey").optionalString(),
    caCertificates: f.get("caCertificates").optionalString(),
  });
  if ((tls.mode === "SIMPLE" || tls.mode === "MUTUAL") && !tls.credentialName && (!tls.serverCertificate || !tls.privateKey)) {
    f.invalid(`expected serverCertificate and privateKey (or credentialName) with mode ${tls.mode}`);
  }
  return tls;
}

function decodeServer(s: Field): GatewayServer {
  s.object();
  s.allowOnly(["port", "hosts", "tls", "name", "bind"]);
  const p = s.get("port");
  p.object();
  p.allowOnly(["number", "name", "protocol"]);
  const number = attempt(p.get("number"), port);
  const name = attempt(p.get("name"), (f) => f.nonEmptyString());
  const protocol = attempt(p.get("protocol"), (f) => {
    const text = f.string();
    const upper = text.toUpperCase() as GatewayProtocol;
    if (!GATEWAY_PROTOCOLS.includes(upper)) f.fail(`one of ${GATEWAY_PROTOCOLS.join(", ")}`);
    return upper;
  });
  const hosts = attempt(s.get("hosts"), (f) => Object.freeze(f.nonEmptyList().map(gatewayHost)));
  const tls = s.get("tls").present ? attempt(s.get("tls"), serverTls) : undefined;
  if ((protocol === "HTTPS" || protocol === "TLS") && !s.get("tls").present) s.get("tls").fail(`TLS settings for a ${protocol} server`);
  return Object.freeze({
    port: Object.freeze({ number, name, protocol }),
    hosts,
    tls,
    name: s.get("name").optionalString(),
    bind: s.get("bind").optionalString(),
  });
}

export function decodeGateway(spec: Field): GatewaySpec {
  spec.object();
  spec.allowOnly(["selector", "servers"]);
  const selector = attempt(spec.get("selector"), labelMap);
  const servers = attemptEach(spec.get("servers"), decodeServer, true);
  return Object.freeze({ selector, servers: Object.freeze(servers) });
}

// ---- VirtualService

export interface RouteDestination {
  /** As written. */
  readonly host: string;
  /** `host` with a short name resolved in the VirtualService's namespace. */
  readonly fqdn: string;
  readonly subset?: string;
  readonly port?: number;
}

export interface HttpRouteDestination {
  readonly destination: RouteDestination;
  /** Percentage; undefined when not given (a single destination takes all traffic). */
  readonly weight?: number;
}

export interface HttpRoute {
  readonly name?: string;
  readonly route: readonly HttpRouteDestination[];
}

export interface VirtualServiceSpec {
  readonly hosts: readonly string[];
  /** `mesh` (all sidecars), `name` (in the VirtualService's namespace) or `namespace/name`; empty means `mesh`. */
  readonly gateways: readonly string[];
  readonly http: readonly HttpRoute[];
  readonly exportTo: readonly string[];
}

/** The implicit gateway of all sidecars. */
export const MESH_GATEWAY = "mesh";

function gatewayRef(f: Field): string {
  const s = f.nonEmptyString();
  if (s === MESH_GATEWAY) return s;
  const slash = s.indexOf("/");
  const ns = slash < 0 ? undefined : s.slice(0, slash);
  const name = slash < 0 ? s : s.slice(slash + 1);
  if ((ns !== undefined && !isDns1123Label(ns)) || !isDns1123Subdomain(name)) f.fail('"mesh", a Gateway name, or namespace/name');
  return s;
}

function decodeDestination(d: Field, namespace: string): RouteDestination {
  d.object();
  d.allowOnly(["host", "subset", "port", "labels"]);
  // Spec 1 (MeshService): labels MUST be empty when used as a VirtualService destination; versions are chosen by subset.
  const labels = d.get("labels");
  if (labels.present && labels.entries().length > 0) labels.invalid("expected no labels on a VirtualService destination (spec: MeshService labels must be empty here); select a version with subset and a DestinationRule subset");
  const host = wildcardHost(d.get("host"), false);
  const p = d.get("port");
  let portNumber: number | undefined;
  if (p.present) {
    p.object();
    p.allowOnly(["number"]);
    portNumber = port(p.get("number"));
  }
  return Object.freeze({
    host,
    fqdn: resolveHost(host, namespace),
    subset: d.get("subset").present ? dns1123Label(d.get("subset")) : undefined,
    port: portNumber,
  });
}

function decodeHttpRoute(h: Field, namespace: string): HttpRoute {
  h.object();
  // match, rewrite, retries, timeout, headers… are not modelled: warned about as unknown.
  h.allowOnly(["name", "route"]);
  const route = attemptEach(h.get("route"), (r): HttpRouteDestination => {
    r.object();
    r.allowOnly(["destination", "weight"]);
    const destination = attempt(r.get("destination"), (d) => {
      if (!d.present) d.fail("an object with host");
      return decodeDestination(d, namespace);
    });
    const weight = r.get("weight").present ? attempt(r.get("weight"), (f) => f.integer(0, 100)) : undefined;
    return Object.freeze({ destination, weight });
  }, true);
  const weights = route.map((r) => r.weight);
  if (noErrorsYet(h) && route.length > 1 && weights.every((w) => w !== undefined) && weights.reduce((a, b) => a! + b!, 0) !== 100) {
    h.get("route").invalid("expected the weights of the destinations to add up to 100");
  }
  return Object.freeze({ name: h.get("name").optionalString(), route: Object.freeze(route) });
}

export function decodeVirtualService(spec: Field, namespace: string): VirtualServiceSpec {
  spec.object();
  spec.allowOnly(["hosts", "gateways", "http", "exportTo", "tcp", "tls"]);
  for (const unsupported of ["tcp", "tls"]) {
    if (spec.get(unsupported).present) spec.get(unsupported).warn(`ignored: only http routes are modelled by this mesh`);
  }
  const hosts = attempt(spec.get("hosts"), (f) => Object.freeze(f.nonEmptyList().map((h) => wildcardHost(h))));
  const gateways = attempt(spec.get("gateways"), (f) => Object.freeze(f.list().map(gatewayRef)));
  // Upstream: the lone `*` host needs a gateway; it cannot apply to every sidecar.
  if (noErrorsYet(spec) && hosts.includes("*") && (gateways.length === 0 || gateways.includes(MESH_GATEWAY))) {
    spec.get("hosts").invalid('expected no "*" host on a VirtualService bound to the mesh gateway (give gateways, without "mesh")');
  }
  const http = attemptEach(spec.get("http"), (h) => decodeHttpRoute(h, namespace));
  return Object.freeze({ hosts, gateways, http: Object.freeze(http), exportTo: attempt(spec.get("exportTo"), exportTo) });
}
