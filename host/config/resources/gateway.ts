import type { Field } from "../decode.ts";
import { attempt, attemptEach } from "../problems.ts";
import { isDns1123Label, labelMap, port } from "./syntax.ts";

// The Gateway resource of the networking API group (re-exported by networking.ts).

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
  f.allowOnly([
    "mode",
    "httpsRedirect",
    "credentialName",
    "credentialNames",
    "serverCertificate",
    "privateKey",
    "caCertificates",
    "caCrl",
    "subjectAltNames",
    "verifyCertificateSpki",
    "verifyCertificateHash",
    "minProtocolVersion",
    "maxProtocolVersion",
    "cipherSuites",
  ]);
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
      attempt(spec.get("servers").list()[i].get("port").get("name"), (f) =>
        f.invalid(`expected port names unique across servers: ${JSON.stringify(server.port.name)} already names port ${prev}`),
      );
    }
    names.set(server.port.name, server.port.number);
  }
  return Object.freeze({ selector, servers: Object.freeze(servers) });
}
