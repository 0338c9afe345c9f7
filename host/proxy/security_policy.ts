import type { Catalog, Resource } from "../config/catalog.ts";
import type { ServiceEndpoint } from "../hub/clusters.ts";
import { type AuthnResult, AUTHN_PAYLOAD_PROPERTY, Authenticator, jwtRulesFor } from "../security/jwt/authenticator.ts";
import type { JwksCache } from "../security/jwt/jwks.ts";
import { AuthorizationEngine, type Decision, authorizationPoliciesFor } from "../security/authz/engine.ts";
import { type ClientTls, clientTls, serviceNamespace } from "../security/mtls/destination_rule.ts";
import { type ServerMtls, namespaceMtls, serverMtls } from "../security/mtls/peer_authn.ts";
import { XFCC_HEADER, applyXfcc, xfccFor } from "../security/mtls/xfcc.ts";
import { type Workload, labelsMatch, spiffeId } from "../security/workload.ts";
import type { LocalReply } from "../wasm/abi_types.ts";
import type { MeshSettings } from "./mesh_config.ts";
import type { TLSSocket } from "node:tls";
import type { X509Certificate } from "node:crypto";

/**
 * The sidecar's security decisions for one configuration (issue 6 items
 * 2–5; docs/security.md "Order on the inbound path"): built once from the
 * catalog when a configuration is applied, read by every request.
 *
 * - inbound: the server mTLS mode of the container port, XFCC, path
 *   normalization, RequestAuthentication, AuthorizationPolicy;
 * - outbound and gateway: where a request goes (the `--endpoint` registry,
 *   VirtualService routes for a gateway) and with which client TLS.
 */

export interface SecurityIdentity {
  /** The workload this sidecar runs for (labels, namespace, service account, container ports). */
  workload: Workload;
  /** The container port the inbound listener stands for (PeerAuthentication portLevelMtls, authorization `ports`). */
  containerPort: number;
  gateway: boolean;
}

/** Where an outbound or gateway request goes; `tls` set = mutual TLS with the mesh certificate. */
export type RouteResult =
  | { kind: "forward"; host: string; port: number; mtls: ClientTls | null; endpoint: ServiceEndpoint | null; route: string }
  | { kind: "reply"; reply: LocalReply; route: string };

/** The inbound stage's answer: a local reply, or the headers (and properties) to go on with. */
export type InboundResult =
  | { kind: "reply"; reply: LocalReply; stage: "authn" | "authz"; decision?: Decision; authn?: AuthnResult }
  | { kind: "continue"; headers: Array<[string, string]>; properties: Record<string, string>; decision: Decision; authn: AuthnResult };

export interface InboundRequest {
  headers: ReadonlyArray<readonly [string, string]>;
  socket: { remoteAddress?: string; localAddress?: string };
}

const empty = (status: number, details: string): LocalReply => ({ status, details, body: "", headers: [], grpcStatus: -1 });

function hostOnly(authority: string): string {
  if (authority.startsWith("[")) return authority.slice(0, authority.indexOf("]") + 1);
  const colon = authority.lastIndexOf(":");
  return (colon >= 0 ? authority.slice(0, colon) : authority).toLowerCase();
}

function portOf(authority: string, fallback: number): number {
  const m = /:(\d+)$/.exec(authority);
  return m && !authority.endsWith("]") ? Number(m[1]) : fallback;
}

/** Gateway/VirtualService host match: exact, `*`, or `*.suffix` (case-insensitive). */
export function hostMatches(pattern: string, host: string): boolean {
  const p = pattern.toLowerCase();
  if (p === "*" || p === host) return true;
  return p.startsWith("*.") && host.endsWith(p.slice(1));
}

export class SecurityPolicy {
  readonly serverMode: ServerMtls;
  private readonly authenticator: Authenticator;
  private readonly authz: AuthorizationEngine;

  constructor(
    readonly catalog: Catalog,
    readonly mesh: MeshSettings,
    readonly identity: SecurityIdentity,
    private readonly endpoints: ReadonlyMap<string, ServiceEndpoint>,
    jwks: JwksCache,
    clockSkewSeconds: number,
  ) {
    const k = catalog.byKind;
    const w = identity.workload;
    // A gateway's listener speaks the Gateway server's protocol (HTTP): no mesh mTLS on it.
    this.serverMode = identity.gateway
      ? Object.freeze({ mode: "DISABLE", scope: "default", policy: null })
      : serverMtls(k.PeerAuthentication, w, identity.containerPort, k.Service, mesh.rootNamespace);
    this.authenticator = Authenticator.create(jwtRulesFor(k.RequestAuthentication, w, mesh.rootNamespace), { jwks, clockSkewSeconds });
    this.authz = AuthorizationEngine.create(authorizationPoliciesFor(k.AuthorizationPolicy, w, mesh.rootNamespace));
  }

  /** What /config_dump shows of the decisions. */
  describe(): unknown {
    return { serverMtls: this.serverMode, authorization: this.authz.size, mesh: this.mesh, workload: this.identity.workload, containerPort: this.identity.containerPort, gateway: this.identity.gateway };
  }

  /**
   * Inbound (and gateway) request stage, before the filter: XFCC
   * (SANITIZE_SET), JWT, authorization. `:path` arrives normalized (the
   * listener edge, request_target.ts); what authorization checks is what is
   * forwarded.
   */
  async inbound(request: InboundRequest, socket: TLSSocket | { encrypted?: undefined }, local: X509Certificate | undefined): Promise<InboundResult> {
    const tlsSocket = socket.encrypted ? (socket as TLSSocket) : undefined;
    const peer = tlsSocket?.getPeerX509Certificate();
    const mtls = peer !== undefined && local !== undefined;
    const get = (name: string) => request.headers.find(([k]) => k === name)?.[1] ?? "";
    const properties: Record<string, string> = {};
    const peerUri = mtls ? ((peer!.subjectAltName ?? "").split(", ").find((s) => s.startsWith("URI:"))?.slice(4) ?? "") : "";
    if (mtls) {
      properties["connection.uri_san_peer_certificate"] = peerUri;
      properties["connection.uri_san_local_certificate"] = (local!.subjectAltName ?? "").split(", ").find((s) => s.startsWith("URI:"))?.slice(4) ?? "";
      const sni = (tlsSocket as unknown as { servername?: string | false }).servername;
      if (sni) properties["connection.requested_server_name"] = sni;
    }
    // XFCC: never pass a client-supplied one; on mutual TLS set our element (security.md §3).
    const pseudo = request.headers.filter(([k]) => k.startsWith(":"));
    let headers = applyXfcc(request.headers.filter(([k]) => !k.startsWith(":")), mtls ? xfccFor(local!, peer!) : undefined);
    const path = get(":path") || "/";
    const authority = get(":authority");
    const authn = await this.authenticator.authenticate({ method: get(":method"), path, host: authority, scheme: "http", headers });
    if (authn.outcome === "denied") {
      return { kind: "reply", stage: "authn", authn, reply: { status: authn.status, details: `jwt_authn_access_denied{${authn.body.replace(/ /g, "_")}}`, body: authn.body, headers: Object.entries(authn.responseHeaders), grpcStatus: -1 } };
    }
    const removed = new Set(authn.effects.removeHeaders.map((h) => h.toLowerCase()));
    headers = [...headers.filter(([k]) => !removed.has(k)), ...authn.effects.setHeaders.map(([k, v]) => [k, v] as [string, string])];
    const forwardPath = authn.effects.path;
    const decision = this.authz.evaluate({
      method: get(":method"),
      path: forwardPath,
      host: authority,
      headers,
      sourceIp: request.socket.remoteAddress ?? "",
      destinationIp: request.socket.localAddress,
      destinationPort: this.identity.containerPort,
      sni: properties["connection.requested_server_name"],
      peerPrincipal: mtls && peerUri.startsWith("spiffe://") ? peerUri.slice("spiffe://".length) : undefined,
      requestPrincipal: authn.outcome === "authenticated" ? authn.principal : undefined,
      authPayload: authn.outcome === "authenticated" ? authn.payload : undefined,
    });
    if (!decision.allowed) {
      return { kind: "reply", stage: "authz", decision, authn, reply: { status: decision.status ?? 403, details: "rbac_access_denied", body: decision.body ?? "RBAC: access denied", headers: [], grpcStatus: -1 } };
    }
    if (authn.outcome === "authenticated") properties[AUTHN_PAYLOAD_PROPERTY.join(".")] = authn.payloadJson;
    const outPseudo = pseudo.map(([k, v]) => [k, k === ":path" ? forwardPath : v] as [string, string]);
    return { kind: "continue", headers: [...outPseudo, ...headers], properties, decision, authn };
  }

  /** Outbound requests: the app's XFCC is always dropped (SANITIZE). */
  outboundHeaders(headers: ReadonlyArray<readonly [string, string]>): Array<[string, string]> {
    return headers.filter(([k]) => k !== XFCC_HEADER).map(([k, v]) => [k, v]);
  }

  /**
   * Where a sidecar's outbound request goes (security.md §2, §6): a
   * registered `--endpoint` (`host:servicePort`) with the client TLS the
   * DestinationRule or auto mutual TLS decides; else a `--cluster` named by
   * the host (plain, as before); else ALLOW_ANY passes through to the host
   * itself, REGISTRY_ONLY answers 502 from the fallthrough route (404 with
   * the fallthrough route disabled).
   */
  outbound(authority: string, clusters: ReadonlyMap<string, { host: string; port: number }>): RouteResult {
    const host = hostOnly(authority);
    const port = portOf(authority, 80);
    const ep = this.endpoints.get(`${host}:${port}`);
    if (ep) return this.toEndpoint(ep, `outbound|${port}||${host}`);
    const cluster = clusters.get(host) ?? clusters.get(authority);
    if (cluster) return { kind: "forward", host: cluster.host, port: cluster.port, mtls: null, endpoint: null, route: `cluster|${host}` };
    if (this.mesh.outboundTrafficPolicy === "REGISTRY_ONLY") {
      return this.mesh.enableFallthroughRoute
        ? { kind: "reply", reply: empty(502, "registry_only_fallthrough"), route: "BlackHoleCluster" }
        : { kind: "reply", reply: empty(404, "route_not_found"), route: "none" };
    }
    if (!host) return { kind: "reply", reply: empty(404, "route_not_found"), route: "none" };
    return { kind: "forward", host, port, mtls: null, endpoint: null, route: "PassthroughCluster" };
  }

  private toEndpoint(ep: ServiceEndpoint, route: string): RouteResult {
    const k = this.catalog.byKind;
    const ns = serviceNamespace(ep.host);
    const tls = clientTls({
      host: ep.host,
      servicePort: ep.servicePort,
      clientNamespace: this.identity.workload.namespace,
      destinationRules: k.DestinationRule,
      destinationHasSidecar: ep.sidecar,
      destinationNamespaceMode: ns ? namespaceMtls(k.PeerAuthentication, ns, this.mesh.rootNamespace).mode : undefined,
      enableAutoMtls: this.mesh.enableAutoMtls,
      rootNamespace: this.mesh.rootNamespace,
    });
    if (tls.mode !== "DISABLE" && tls.mode !== "MESH_MUTUAL") {
      return { kind: "reply", reply: { status: 503, details: "unsupported_tls_mode", body: `tls mode ${tls.mode} is not supported by this sidecar`, headers: [], grpcStatus: -1 }, route };
    }
    return { kind: "forward", host: ep.address.host, port: ep.address.port, mtls: tls.mode === "MESH_MUTUAL" ? tls : null, endpoint: ep, route };
  }

  /** The SPIFFE identity an endpoint must present, when `sa=` names one. */
  expectedIdentity(ep: ServiceEndpoint | null): string | undefined {
    const ns = ep ? serviceNamespace(ep.host) : undefined;
    return ep?.serviceAccount && ns ? spiffeId({ namespace: ns, serviceAccount: ep.serviceAccount }, this.mesh.trustDomain) : undefined;
  }

  /**
   * Gateway routing (issue 6 item 5; security.md §6): the Gateways selecting
   * this workload's labels with a server on the gateway port whose hosts
   * match the Host; the VirtualServices bound to one of them whose hosts
   * match; the first http route's destination (the heaviest when weighted).
   * No match → 404 with an empty body; a destination not in the registry → 503.
   */
  gatewayRoute(authority: string): RouteResult {
    const host = hostOnly(authority);
    const k = this.catalog.byKind;
    const w = this.identity.workload;
    const stripNs = (h: string) => (h.includes("/") ? h.slice(h.indexOf("/") + 1) : h);
    const gateways = k.Gateway.filter(
      (g) =>
        Object.keys(g.spec.selector).length > 0 &&
        labelsMatch(g.spec.selector, w.labels) &&
        g.spec.servers.some((s) => s.port.number === this.identity.containerPort && s.hosts.some((h) => hostMatches(stripNs(h), host))),
    );
    const bound = (vs: Resource<"VirtualService">, g: Resource<"Gateway">) =>
      vs.spec.gateways.some((ref) => ref === `${g.namespace}/${g.name}` || (ref === g.name && vs.namespace === g.namespace));
    for (const vs of k.VirtualService) {
      const g = gateways.find((gw) => bound(vs, gw));
      if (!g || !vs.spec.hosts.some((h) => hostMatches(h, host))) continue;
      const http = vs.spec.http.find((r) => r.route.length > 0);
      if (!http) continue;
      const dest = [...http.route].sort((a, b) => (b.weight ?? 100) - (a.weight ?? 100))[0].destination;
      const port = dest.port ?? this.servicePort(dest.fqdn);
      const route = `${g.namespace}/${g.name}|${vs.namespace}/${vs.name}|${dest.fqdn}:${port}`;
      const ep = this.endpoints.get(`${dest.fqdn}:${port}`);
      if (!ep) return { kind: "reply", reply: { status: 503, details: "no_healthy_upstream", body: "no healthy upstream", headers: [], grpcStatus: -1 }, route };
      return this.toEndpoint(ep, route);
    }
    return { kind: "reply", reply: empty(404, "route_not_found"), route: "none" };
  }

  /** The only port of a Service named by its FQDN, else 80. */
  private servicePort(fqdn: string): number {
    const [name, ns] = fqdn.split(".");
    const svc = this.catalog.byKind.Service.find((s) => s.name === name && s.namespace === ns);
    return svc && svc.spec.ports.length === 1 ? svc.spec.ports[0].port : 80;
  }
}
