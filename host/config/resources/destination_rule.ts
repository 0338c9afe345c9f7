import type { Field } from "../decode.ts";
import { attempt, attemptEach } from "../problems.ts";
import { resolveResourceHost } from "../../mesh/hosts.ts";
import { dns1123Label, labelMap, port, wildcardHost } from "./syntax.ts";
import { exportTo, positiveDuration } from "./networking_fields.ts";

// The DestinationRule resource of the networking API group (re-exported by networking.ts).

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

function optionalCount(f: Field): number | undefined {
  return f.present ? f.integer(0, 2 ** 31 - 1) : undefined;
}

function connectionPool(f: Field): ConnectionPool {
  f.object();
  f.allowOnly(["tcp", "http"]);
  const tcp = f.get("tcp");
  const http = f.get("http");
  tcp.allowOnly(["maxConnections", "connectTimeout", "tcpKeepalive", "maxConnectionDuration", "idleTimeout"]);
  http.allowOnly([
    "http1MaxPendingRequests",
    "http2MaxRequests",
    "maxRequestsPerConnection",
    "maxRetries",
    "idleTimeout",
    "h2UpgradePolicy",
    "useClientProtocol",
    "maxConcurrentStreams",
  ]);
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
  f.allowOnly([
    "consecutiveErrors",
    "consecutive5xxErrors",
    "consecutiveGatewayErrors",
    "consecutiveLocalOriginFailures",
    "splitExternalLocalOriginErrors",
    "interval",
    "baseEjectionTime",
    "maxEjectionPercent",
    "minHealthPercent",
  ]);
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
  if (f.get("mode").value === "ISTIO_MUTUAL")
    f.get("mode").invalid('expected one of DISABLE, SIMPLE, MUTUAL, MESH_MUTUAL, got "ISTIO_MUTUAL" (upstream\'s ISTIO_MUTUAL is MESH_MUTUAL in this mesh)');
  const mode = f.get("mode").enumOf(CLIENT_TLS_MODES, "DISABLE");
  const opt = (name: string) => f.get(name).optionalString();
  const tls: ClientTlsSettings = Object.freeze({
    mode,
    clientCertificate: opt("clientCertificate"),
    privateKey: opt("privateKey"),
    caCertificates: opt("caCertificates"),
    credentialName: opt("credentialName"),
    subjectAltNames: Object.freeze(
      f
        .get("subjectAltNames")
        .list()
        .map((s) => s.nonEmptyString()),
    ),
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

export function decodeDestinationRule(spec: Field, namespace: string, domain: string): DestinationRuleSpec {
  spec.object();
  spec.allowOnly(["host", "trafficPolicy", "subsets", "exportTo", "workloadSelector"]);
  // Upstream (1.14+) applies such a rule only to the workloads of its namespace that it selects; the mesh model does not read it.
  if (spec.get("workloadSelector").present)
    spec
      .get("workloadSelector")
      .warn("not read: the rule applies to every client that sees it (upstream applies it only to the workloads of its namespace it selects)");
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
