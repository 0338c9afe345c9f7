import type { Field } from "../decode.ts";
import { attempt, attemptEach, noErrorsYet } from "../problems.ts";
import { resolveResourceHost } from "../../mesh/hosts.ts";
import { dns1123Label, isDns1123Label, isDns1123Subdomain, isIpOrCidr, labelMap, port, wildcardHost } from "./syntax.ts";
import { type RegexMatcher, compileRegex } from "../../regex/engine.ts";

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
  readonly insecureSkipVerify?: boolean;
  /** A certificate revocation list file the server's certificate is checked against (SIMPLE, MUTUAL). */
  readonly caCrl?: string;
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
  /** `tcp.maxConnections`, `http.http1MaxPendingRequests`, `http.maxRequestsPerConnection`: what the Node data path honours (docs/sidecar.md "Circuit breaking"). */
  readonly connectionPool?: ConnectionPool;
  /** `outlierDetection`: consecutive 5xx/gateway errors, baseEjectionTime, maxEjectionPercent are honoured (docs/sidecar.md). */
  readonly outlierDetection?: OutlierDetection;
}

export interface ConnectionPool {
  readonly maxConnections?: number;
  readonly connectTimeoutMs?: number;
  readonly http1MaxPendingRequests?: number;
  readonly maxRequestsPerConnection?: number;
  readonly maxRetries?: number;
}

export interface OutlierDetection {
  readonly consecutive5xxErrors?: number;
  readonly consecutiveGatewayErrors?: number;
  readonly intervalMs?: number;
  readonly baseEjectionTimeMs?: number;
  readonly maxEjectionPercent?: number;
}

/** Upstream's DestinationRule TrafficPolicy fields the mesh accepts without modelling (no "unknown field" for them). */
const TRAFFIC_POLICY_FIELDS = ["tls", "portLevelSettings", "loadBalancer", "connectionPool", "outlierDetection", "tunnel", "proxyProtocol"];

function positiveDuration(f: Field): number | undefined {
  if (!f.present) return undefined;
  const ms = f.durationMs();
  if (ms < 0) f.invalid("expected a duration that is not negative");
  return ms;
}

function optionalCount(f: Field): number | undefined {
  return f.present ? f.integer(0, 2 ** 31 - 1) : undefined;
}

function connectionPool(f: Field): ConnectionPool {
  f.object();
  f.allowOnly(["tcp", "http"]);
  const tcp = f.get("tcp");
  const http = f.get("http");
  tcp.allowOnly(["maxConnections", "connectTimeout", "tcpKeepalive", "maxConnectionDuration", "idleTimeout"]);
  http.allowOnly(["http1MaxPendingRequests", "http2MaxRequests", "maxRequestsPerConnection", "maxRetries", "idleTimeout", "h2UpgradePolicy", "useClientProtocol", "maxConcurrentStreams"]);
  return Object.freeze({
    maxConnections: optionalCount(tcp.get("maxConnections")),
    connectTimeoutMs: positiveDuration(tcp.get("connectTimeout")),
    http1MaxPendingRequests: optionalCount(http.get("http1MaxPendingRequests")),
    maxRequestsPerConnection: optionalCount(http.get("maxRequestsPerConnection")),
    maxRetries: optionalCount(http.get("maxRetries")),
  });
}

function outlierDetection(f: Field): OutlierDetection {
  f.object();
  f.allowOnly(["consecutiveErrors", "consecutive5xxErrors", "consecutiveGatewayErrors", "consecutiveLocalOriginFailures", "splitExternalLocalOriginErrors", "interval", "baseEjectionTime", "maxEjectionPercent", "minHealthPercent"]);
  return Object.freeze({
    consecutive5xxErrors: optionalCount(f.get("consecutive5xxErrors")) ?? optionalCount(f.get("consecutiveErrors")),
    consecutiveGatewayErrors: optionalCount(f.get("consecutiveGatewayErrors")),
    intervalMs: positiveDuration(f.get("interval")),
    baseEjectionTimeMs: positiveDuration(f.get("baseEjectionTime")),
    maxEjectionPercent: f.get("maxEjectionPercent").present ? f.get("maxEjectionPercent").integer(0, 100) : undefined,
  });
}

export interface Subset {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly trafficPolicy?: TrafficPolicy;
}

export interface DestinationRuleSpec {
  /** As written. */
  readonly host: string;
  /** `host` with a short name resolved in the rule's namespace and the mesh's DNS domain (`reviews` → `reviews.<ns>.svc.<domain>`). */
  readonly fqdn: string;
  readonly trafficPolicy?: TrafficPolicy;
  readonly subsets: readonly Subset[];
  readonly exportTo: readonly string[];
  /** `workloadSelector.matchLabels`: kept for the analyzer; the mesh model does not apply it. */
  readonly workloadSelector?: Readonly<Record<string, string>>;
}

const TLS_FIELDS = ["mode", "clientCertificate", "privateKey", "caCertificates", "credentialName", "subjectAltNames", "sni", "insecureSkipVerify", "caCrl"];

function clientTls(f: Field): ClientTlsSettings {
  f.object();
  f.allowOnly(TLS_FIELDS);
  // Upstream's name for the mesh's own mutual TLS, pasted from its samples: say what it is called here.
  if (f.get("mode").value === "ISTIO_MUTUAL") f.get("mode").invalid('expected one of DISABLE, SIMPLE, MUTUAL, MESH_MUTUAL, got "ISTIO_MUTUAL" (upstream\'s ISTIO_MUTUAL is MESH_MUTUAL in this mesh)');
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
    insecureSkipVerify: f.get("insecureSkipVerify").present ? f.get("insecureSkipVerify").bool() : undefined,
    caCrl: opt("caCrl"),
  });
  // Upstream: MUTUAL needs the client's own certificate and key unless they come from a credential.
  if (mode === "MUTUAL" && !tls.credentialName && (!tls.clientCertificate || !tls.privateKey)) {
    f.invalid("expected clientCertificate and privateKey (or credentialName) with mode MUTUAL");
  }
  return tls;
}

function trafficPolicy(f: Field): TrafficPolicy {
  f.object();
  f.allowOnly(TRAFFIC_POLICY_FIELDS);
  const tls = f.get("tls").present ? attempt(f.get("tls"), clientTls) : undefined;
  const seen = new Set<number>();
  const portLevelSettings = attemptEach(f.get("portLevelSettings"), (p): PortTrafficPolicy => {
    p.object();
    p.allowOnly(["port", ...TRAFFIC_POLICY_FIELDS.filter((n) => n !== "portLevelSettings")]);
    const portField = p.get("port");
    portField.object();
    portField.allowOnly(["number"]);
    const number = port(portField.get("number"));
    if (seen.has(number)) portField.get("number").invalid(`duplicate port ${number} in portLevelSettings`);
    seen.add(number);
    return Object.freeze({ port: number, tls: p.get("tls").present ? clientTls(p.get("tls")) : undefined });
  });
  return Object.freeze({
    tls,
    portLevelSettings: Object.freeze(portLevelSettings),
    connectionPool: f.get("connectionPool").present ? attempt(f.get("connectionPool"), connectionPool) : undefined,
    outlierDetection: f.get("outlierDetection").present ? attempt(f.get("outlierDetection"), outlierDetection) : undefined,
  });
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

export function decodeDestinationRule(spec: Field, namespace: string, domain: string): DestinationRuleSpec {
  spec.object();
  spec.allowOnly(["host", "trafficPolicy", "subsets", "exportTo", "workloadSelector"]);
  // Upstream (1.14+) applies such a rule only to the workloads of its namespace that it selects; the mesh model does not read it.
  if (spec.get("workloadSelector").present) spec.get("workloadSelector").warn("not read: the rule applies to every client that sees it (upstream applies it only to the workloads of its namespace it selects)");
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
    fqdn: host === undefined ? host : resolveResourceHost(host, namespace, domain),
    trafficPolicy: tp,
    subsets: Object.freeze(subsets),
    exportTo: attempt(spec.get("exportTo"), exportTo),
    workloadSelector: spec.get("workloadSelector").present ? attempt(spec.get("workloadSelector").get("matchLabels"), labelMap) : undefined,
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
  f.allowOnly(["mode", "httpsRedirect", "credentialName", "credentialNames", "serverCertificate", "privateKey", "caCertificates", "caCrl", "subjectAltNames", "verifyCertificateSpki", "verifyCertificateHash", "minProtocolVersion", "maxProtocolVersion", "cipherSuites"]);
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
  s.allowOnly(["port", "hosts", "tls", "name", "bind", "defaultEndpoint"]);
  const p = s.get("port");
  p.object();
  p.allowOnly(["number", "name", "protocol", "targetPort"]);
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
  if (selector && selector.istio !== undefined) {
    spec.get("selector").get("istio").warn(`upstream's gateway label: this mesh's gateways carry "mesh: ${selector.istio}" (e.g. mesh: ingressgateway)`);
  }
  const servers = attemptEach(spec.get("servers"), decodeServer, true);
  // Upstream validation: port names are unique across a Gateway's servers (a repeated name must mean the same port).
  const names = new Map<string, number>();
  for (const [i, server] of servers.entries()) {
    const prev = names.get(server.port.name);
    if (prev !== undefined && prev !== server.port.number) {
      attempt(spec.get("servers").list()[i].get("port").get("name"), (f) => f.invalid(`expected port names unique across servers: ${JSON.stringify(server.port.name)} already names port ${prev}`));
    }
    names.set(server.port.name, server.port.number);
  }
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
  readonly headers: { readonly request: HeaderOperations; readonly response: HeaderOperations };
}

/** Upstream's StringMatch: one of exact, prefix, regex (full match on the linear engine, compiled at load). */
export type StringMatch = { readonly exact: string } | { readonly prefix: string } | RegexStringMatch;

export interface RegexStringMatch {
  readonly regex: string;
  /** The compiled pattern; not enumerable, so dumps and comparisons see only `regex`. */
  readonly matcher: RegexMatcher;
}

export interface HttpMatchRequest {
  readonly name?: string;
  readonly uri?: StringMatch;
  readonly scheme?: StringMatch;
  readonly method?: StringMatch;
  readonly authority?: StringMatch;
  /** Header name (lower case) → match. */
  readonly headers: Readonly<Record<string, StringMatch>>;
  readonly withoutHeaders: Readonly<Record<string, StringMatch>>;
  readonly queryParams: Readonly<Record<string, StringMatch>>;
  readonly port?: number;
  readonly sourceLabels: Readonly<Record<string, string>>;
  readonly sourceNamespace?: string;
  readonly gateways: readonly string[];
  readonly ignoreUriCase: boolean;
}

export interface HttpRewrite {
  readonly uri?: string;
  readonly authority?: string;
}

export interface HttpRedirect {
  readonly uri?: string;
  readonly authority?: string;
  readonly scheme?: string;
  readonly port?: number;
  readonly redirectCode: number;
}

export interface HeaderOperations {
  readonly set: Readonly<Record<string, string>>;
  readonly add: Readonly<Record<string, string>>;
  readonly remove: readonly string[];
}

export interface HttpFault {
  readonly delay?: { readonly fixedDelayMs: number; readonly percentage: number };
  readonly abort?: { readonly httpStatus: number; readonly percentage: number };
}

export interface HttpRetry {
  readonly attempts: number;
  readonly perTryTimeoutMs?: number;
  readonly retryOn: readonly string[];
}

export interface HttpRoute {
  readonly name?: string;
  /** Empty: matches every request. */
  readonly match: readonly HttpMatchRequest[];
  readonly route: readonly HttpRouteDestination[];
  readonly redirect?: HttpRedirect;
  readonly directResponse?: { readonly status: number; readonly body?: string };
  readonly rewrite?: HttpRewrite;
  readonly timeoutMs?: number;
  readonly retries?: HttpRetry;
  readonly fault?: HttpFault;
  readonly mirror?: RouteDestination;
  /** Percentage of requests mirrored (default 100 with a mirror). */
  readonly mirrorPercentage: number;
  readonly headers: { readonly request: HeaderOperations; readonly response: HeaderOperations };
}

const HTTP_ROUTE_FIELDS = ["name", "match", "route", "redirect", "directResponse", "delegate", "rewrite", "timeout", "retries", "fault", "mirror", "mirrors", "mirrorPercentage", "mirrorPercent", "mirror_percent", "corsPolicy", "headers"];
const MATCH_FIELDS = ["name", "uri", "scheme", "method", "authority", "headers", "port", "sourceLabels", "gateways", "queryParams", "ignoreUriCase", "withoutHeaders", "sourceNamespace", "statPrefix"];

function stringMatch(f: Field): StringMatch {
  f.object();
  const kind = f.oneOf(["exact", "prefix", "regex"] as const)!;
  const value = f.get(kind).string();
  if (kind === "regex") {
    const matcher = compileRegex(value);
    if ("error" in matcher) return f.get("regex").invalid(`regex ${JSON.stringify(value)} is not supported: ${matcher.error}`);
    return Object.freeze(Object.defineProperty({ regex: value }, "matcher", { value: matcher, enumerable: false }) as RegexStringMatch);
  }
  return Object.freeze({ [kind]: value } as StringMatch);
}

function matchMap(f: Field, lower: boolean): Readonly<Record<string, StringMatch>> {
  const out: Record<string, StringMatch> = {};
  for (const [k, v] of f.entries()) out[lower ? k.toLowerCase() : k] = stringMatch(v);
  return Object.freeze(out);
}

function decodeMatch(m: Field): HttpMatchRequest {
  m.object();
  m.allowOnly(MATCH_FIELDS);
  const opt = (name: string) => (m.get(name).present ? attempt(m.get(name), stringMatch) : undefined);
  return Object.freeze({
    name: m.get("name").optionalString(),
    uri: opt("uri"),
    scheme: opt("scheme"),
    method: opt("method"),
    authority: opt("authority"),
    headers: attempt(m.get("headers"), (f) => matchMap(f, true)) ?? Object.freeze({}),
    withoutHeaders: attempt(m.get("withoutHeaders"), (f) => matchMap(f, true)) ?? Object.freeze({}),
    queryParams: attempt(m.get("queryParams"), (f) => matchMap(f, false)) ?? Object.freeze({}),
    port: m.get("port").present ? attempt(m.get("port"), port) : undefined,
    sourceLabels: attempt(m.get("sourceLabels"), labelMap) ?? Object.freeze({}),
    sourceNamespace: m.get("sourceNamespace").optionalString(),
    gateways: attempt(m.get("gateways"), (f) => Object.freeze(f.list().map(gatewayRef))) ?? Object.freeze([]),
    ignoreUriCase: m.get("ignoreUriCase").bool(false),
  });
}

function percentage(f: Field, fallback: number): number {
  if (!f.present) return fallback;
  f.object();
  f.allowOnly(["value"]);
  const v = f.get("value").value;
  if (typeof v !== "number" || v < 0 || v > 100) return f.get("value").fail("a number from 0 to 100");
  return v;
}

function headerOps(f: Field): HeaderOperations {
  if (!f.present) return EMPTY_OPS;
  f.object();
  f.allowOnly(["set", "add", "remove"]);
  return Object.freeze({
    set: Object.freeze(f.get("set").stringMap()),
    add: Object.freeze(f.get("add").stringMap()),
    remove: Object.freeze(f.get("remove").list().map((x) => x.nonEmptyString().toLowerCase())),
  });
}
const EMPTY_OPS: HeaderOperations = Object.freeze({ set: Object.freeze({}), add: Object.freeze({}), remove: Object.freeze([]) });

function decodeFault(f: Field): HttpFault {
  f.object();
  f.allowOnly(["delay", "abort"]);
  const d = f.get("delay");
  const a = f.get("abort");
  let delay: HttpFault["delay"];
  if (d.present) {
    d.object();
    d.allowOnly(["fixedDelay", "exponentialDelay", "percentage", "percent"]);
    const fixed = positiveDuration(d.get("fixedDelay")) ?? d.get("fixedDelay").fail('a duration such as "5s"');
    delay = Object.freeze({ fixedDelayMs: fixed, percentage: d.get("percent").present ? d.get("percent").integer(0, 100) : percentage(d.get("percentage"), 100) });
  }
  let abort: HttpFault["abort"];
  if (a.present) {
    a.object();
    a.allowOnly(["httpStatus", "grpcStatus", "http2Error", "percentage"]);
    abort = Object.freeze({ httpStatus: a.get("httpStatus").integer(200, 599), percentage: percentage(a.get("percentage"), 100) });
  }
  if (!delay && !abort) f.invalid("expected delay or abort");
  return Object.freeze({ delay, abort });
}

function decodeHttpRoute(h: Field, namespace: string, domain: string): HttpRoute {
  h.object();
  h.allowOnly(HTTP_ROUTE_FIELDS);
  for (const name of ["delegate", "corsPolicy", "mirrors"]) if (h.get(name).present) h.get(name).warn(`not enforced by this mesh's data path (accepted for compatibility)`);
  const match = attemptEach(h.get("match"), decodeMatch);
  if (h.get("route").present && h.get("route").list().length === 0) h.get("route").fail("a non-empty list");
  const route = attemptEach(h.get("route"), (r): HttpRouteDestination => {
    r.object();
    r.allowOnly(["destination", "weight", "headers"]);
    const destination = attempt(r.get("destination"), (d) => {
      if (!d.present) d.fail("an object with host");
      return decodeDestination(d, namespace, domain);
    });
    const weight = r.get("weight").present ? attempt(r.get("weight"), (f) => f.integer(0, 100)) : undefined;
    return Object.freeze({ destination, weight, headers: Object.freeze({ request: headerOps(r.get("headers").get("request")), response: headerOps(r.get("headers").get("response")) }) });
  });
  const weights = route.map((r) => r.weight);
  if (noErrorsYet(h) && route.length > 1 && weights.every((w) => w !== undefined) && weights.reduce((a, b) => a! + b!, 0) !== 100) {
    h.get("route").invalid("expected the weights of the destinations to add up to 100");
  }
  const redirectField = h.get("redirect");
  const redirect = redirectField.present
    ? attempt(redirectField, (f): HttpRedirect => {
        f.object();
        f.allowOnly(["uri", "authority", "port", "derivePort", "scheme", "redirectCode"]);
        return Object.freeze({
          uri: f.get("uri").optionalString(),
          authority: f.get("authority").optionalString(),
          scheme: f.get("scheme").optionalString(),
          port: f.get("port").present ? port(f.get("port")) : undefined,
          redirectCode: f.get("redirectCode").integer(300, 399, 301),
        });
      })
    : undefined;
  const direct = h.get("directResponse");
  const directResponse = direct.present
    ? attempt(direct, (f) => {
        f.object();
        f.allowOnly(["status", "body"]);
        const body = f.get("body");
        body.allowOnly(["string", "bytes"]);
        const text = body.present ? (body.get("string").optionalString() ?? (body.get("bytes").present ? Buffer.from(body.get("bytes").string(), "base64").toString() : undefined)) : undefined;
        return Object.freeze({ status: f.get("status").integer(200, 599), body: text });
      })
    : undefined;
  const actions = [route.length > 0 && "route", redirect && "redirect", directResponse && "directResponse"].filter(Boolean);
  if (noErrorsYet(h) && actions.length > 1) h.invalid(`expected one of route, redirect or directResponse, got ${actions.join(" and ")}`);
  if (noErrorsYet(h) && actions.length === 0 && !h.get("delegate").present) h.invalid("expected a route, redirect or directResponse");
  const rw = h.get("rewrite");
  const rewrite = rw.present
    ? attempt(rw, (f) => {
        f.object();
        f.allowOnly(["uri", "authority", "uriRegexRewrite"]);
        return Object.freeze({ uri: f.get("uri").optionalString(), authority: f.get("authority").optionalString() });
      })
    : undefined;
  const rt = h.get("retries");
  const retries = rt.present
    ? attempt(rt, (f): HttpRetry => {
        f.object();
        f.allowOnly(["attempts", "perTryTimeout", "retryOn", "retryRemoteLocalities"]);
        const retryOn = f.get("retryOn").optionalString();
        return Object.freeze({ attempts: f.get("attempts").integer(0, 2 ** 31 - 1, 2), perTryTimeoutMs: positiveDuration(f.get("perTryTimeout")), retryOn: Object.freeze(retryOn ? retryOn.split(",").map((x) => x.trim()).filter(Boolean) : ["connect-failure", "refused-stream", "unavailable", "cancelled", "retriable-status-codes"]) });
      })
    : undefined;
  const mirrorField = h.get("mirror");
  const mirror = mirrorField.present ? attempt(mirrorField, (d) => decodeDestination(d, namespace, domain)) : undefined;
  const mirrorPercentage = h.get("mirrorPercent").present ? h.get("mirrorPercent").integer(0, 100) : percentage(h.get("mirrorPercentage"), 100);
  const hd = h.get("headers");
  hd.allowOnly(["request", "response"]);
  return Object.freeze({
    name: h.get("name").optionalString(),
    match: Object.freeze(match),
    route: Object.freeze(route),
    redirect,
    directResponse,
    rewrite,
    timeoutMs: attempt(h.get("timeout"), positiveDuration),
    retries,
    fault: h.get("fault").present ? attempt(h.get("fault"), decodeFault) : undefined,
    mirror,
    mirrorPercentage,
    headers: Object.freeze({ request: attempt(hd.get("request"), headerOps) ?? EMPTY_OPS, response: attempt(hd.get("response"), headerOps) ?? EMPTY_OPS }),
  });
}

export interface VirtualServiceSpec {
  /** As written. */
  readonly hosts: readonly string[];
  /** `hosts` with short names resolved in the VirtualService's namespace and the mesh's DNS domain, lower case. */
  readonly fqdns: readonly string[];
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

function decodeDestination(d: Field, namespace: string, domain: string): RouteDestination {
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
    fqdn: resolveResourceHost(host, namespace, domain),
    subset: d.get("subset").present ? dns1123Label(d.get("subset")) : undefined,
    port: portNumber,
  });
}

export function decodeVirtualService(spec: Field, namespace: string, domain: string): VirtualServiceSpec {
  spec.object();
  spec.allowOnly(["hosts", "gateways", "http", "exportTo", "tcp", "tls"]);
  for (const unsupported of ["tcp", "tls"]) {
    if (spec.get(unsupported).present) spec.get(unsupported).warn(`ignored: only http routes are modelled by this mesh`);
  }
  // Without hosts a VirtualService is a delegate: only another VirtualService's `delegate` routes use it (upstream's rule: no gateways then).
  const hosts = attempt(spec.get("hosts"), (f) => Object.freeze(f.list().map((h) => wildcardHost(h))));
  const gateways = attempt(spec.get("gateways"), (f) => Object.freeze(f.list().map(gatewayRef)));
  if (noErrorsYet(spec) && hosts.length === 0 && gateways.length > 0) spec.get("gateways").invalid("expected no gateways on a delegate VirtualService (one without hosts)");
  // Upstream: the lone `*` host needs a gateway; it cannot apply to every sidecar.
  if (noErrorsYet(spec) && hosts.includes("*") && (gateways.length === 0 || gateways.includes(MESH_GATEWAY))) {
    spec.get("hosts").invalid('expected no "*" host on a VirtualService bound to the mesh gateway (give gateways, without "mesh")');
  }
  const http = attemptEach(spec.get("http"), (h) => decodeHttpRoute(h, namespace, domain));
  const fqdns = Object.freeze((hosts ?? []).map((h) => resolveResourceHost(h, namespace, domain)));
  return Object.freeze({ hosts, fqdns, gateways, http: Object.freeze(http), exportTo: attempt(spec.get("exportTo"), exportTo) });
}

// ---- ServiceEntry

export const SERVICE_ENTRY_LOCATIONS = ["MESH_EXTERNAL", "MESH_INTERNAL"] as const;
export const SERVICE_ENTRY_RESOLUTIONS = ["NONE", "STATIC", "DNS", "DNS_ROUND_ROBIN"] as const;
/** Upstream's port protocols (case-insensitive, stored upper case). */
export const SERVICE_PROTOCOLS = ["HTTP", "HTTPS", "GRPC", "GRPC-WEB", "HTTP2", "MONGO", "REDIS", "MYSQL", "THRIFT", "TCP", "TLS", "UDP"] as const;

export interface ServiceEntryPort {
  readonly number: number;
  readonly protocol: string;
  readonly name: string;
  readonly targetPort?: number;
}

export interface ServiceEntryEndpoint {
  readonly address: string;
  /** Port name → endpoint port. */
  readonly ports: Readonly<Record<string, number>>;
  readonly labels: Readonly<Record<string, string>>;
  readonly serviceAccount?: string;
  readonly weight?: number;
}

export interface ServiceEntrySpec {
  readonly hosts: readonly string[];
  readonly addresses: readonly string[];
  readonly ports: readonly ServiceEntryPort[];
  readonly location: (typeof SERVICE_ENTRY_LOCATIONS)[number];
  readonly resolution: (typeof SERVICE_ENTRY_RESOLUTIONS)[number];
  readonly endpoints: readonly ServiceEntryEndpoint[];
  readonly workloadSelector?: Readonly<Record<string, string>>;
  readonly exportTo: readonly string[];
  readonly subjectAltNames: readonly string[];
}

/** A ServiceEntry (upstream's fields); short hosts are not resolved: upstream takes them as written. */
export function decodeServiceEntry(spec: Field): ServiceEntrySpec {
  spec.object();
  spec.allowOnly(["hosts", "addresses", "ports", "location", "resolution", "endpoints", "workloadSelector", "exportTo", "subjectAltNames"]);
  const hosts = attempt(spec.get("hosts"), (f) => Object.freeze(f.nonEmptyList().map((h) => wildcardHost(h, false).toLowerCase())));
  const addresses = attempt(spec.get("addresses"), (f) => Object.freeze(f.list().map((a) => {
    const s = a.nonEmptyString();
    if (!isIpOrCidrText(s)) a.fail("an IP address or CIDR block");
    return s;
  })));
  const names = new Set<string>();
  const ports = attemptEach(spec.get("ports"), (p): ServiceEntryPort => {
    p.object();
    p.allowOnly(["number", "protocol", "name", "targetPort"]);
    const name = p.get("name").nonEmptyString();
    if (names.has(name)) p.get("name").invalid(`duplicate port name ${JSON.stringify(name)}`);
    names.add(name);
    // Upstream accepts an empty protocol, as if absent (TCP).
    const protocol = p.get("protocol").present ? p.get("protocol").string().toUpperCase() || "TCP" : "TCP";
    if (!(SERVICE_PROTOCOLS as readonly string[]).includes(protocol)) p.get("protocol").fail(`one of ${SERVICE_PROTOCOLS.join(", ")}`);
    return Object.freeze({ number: port(p.get("number")), protocol, name, targetPort: p.get("targetPort").present ? port(p.get("targetPort")) : undefined });
  });
  const resolution = spec.get("resolution").enumOf(SERVICE_ENTRY_RESOLUTIONS, "NONE");
  const endpoints = attemptEach(spec.get("endpoints"), (e): ServiceEntryEndpoint => {
    e.object();
    e.allowOnly(["address", "ports", "labels", "network", "locality", "weight", "serviceAccount"]);
    const epPorts: Record<string, number> = {};
    for (const [k, v] of e.get("ports").entries()) epPorts[k] = port(v);
    return Object.freeze({
      address: e.get("address").nonEmptyString(),
      ports: Object.freeze(epPorts),
      labels: labelMap(e.get("labels")),
      serviceAccount: e.get("serviceAccount").optionalString(),
      weight: e.get("weight").present ? e.get("weight").integer(0, 2 ** 32 - 1) : undefined,
    });
  });
  if (noErrorsYet(spec) && resolution === "STATIC" && endpoints.length === 0 && !spec.get("workloadSelector").present) {
    spec.get("endpoints").invalid("expected endpoints (or a workloadSelector) with resolution STATIC");
  }
  // Upstream's rules for DNS: without endpoints the hosts themselves are resolved, so none may be a wildcard.
  if (noErrorsYet(spec) && (resolution === "DNS" || resolution === "DNS_ROUND_ROBIN") && endpoints.length === 0 && hosts?.some((h) => h.startsWith("*"))) {
    spec.get("hosts").invalid(`expected hosts without wildcards with resolution ${resolution} and no endpoints (the hosts themselves are resolved)`);
  }
  if (resolution === "DNS_ROUND_ROBIN" && endpoints.length > 1) spec.get("endpoints").warn("only the first endpoint is used with resolution DNS_ROUND_ROBIN (one name resolved, as Envoy's LOGICAL_DNS)");
  const ws = spec.get("workloadSelector");
  let workloadSelector: Readonly<Record<string, string>> | undefined;
  if (ws.present) {
    ws.object();
    ws.allowOnly(["labels"]);
    workloadSelector = attempt(ws.get("labels"), labelMap);
  }
  return Object.freeze({
    hosts,
    addresses,
    ports: Object.freeze(ports),
    location: spec.get("location").enumOf(SERVICE_ENTRY_LOCATIONS, "MESH_EXTERNAL"),
    resolution,
    endpoints: Object.freeze(endpoints),
    workloadSelector,
    exportTo: attempt(spec.get("exportTo"), exportTo),
    subjectAltNames: Object.freeze(spec.get("subjectAltNames").list().map((s) => s.nonEmptyString())),
  });
}

function isIpOrCidrText(s: string): boolean {
  return isIpOrCidr(s);
}
