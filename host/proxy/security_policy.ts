import type { Catalog, Resource } from "../config/catalog.ts";
import type { EndpointFlag } from "../hub/clusters.ts";
import { type AuthnResult, AUTHN_PAYLOAD_PROPERTY, Authenticator, jwtRulesFor } from "../security/jwt/authenticator.ts";
import type { JwksCache } from "../security/jwt/jwks.ts";
import { AuthorizationEngine, type Decision, RBAC_DENIED_BODY, RBAC_DENIED_STATUS, authorizationPoliciesFor } from "../security/authz/engine.ts";
import type { ExtAuthzClient, ExtAuthzVerdict } from "../security/authz/ext_authz.ts";
import type { ConnectionPool, HeaderOperations, HttpRetry, HttpRoute, OutlierDetection } from "../config/resources/networking.ts";
import { MESH_GATEWAY } from "../config/resources/networking.ts";
import { clusterName } from "../mesh/cluster_names.ts";
import { destinationFor } from "../mesh/destination_rules.ts";
import { type GatewayTlsServer, gatewayTlsServers } from "../mesh/gateway_tls.ts";
import { serviceNamespace, splitAuthority } from "../mesh/hosts.ts";
import { labelsMatch } from "../mesh/labels.ts";
import { type MeshRegistry, buildRegistry, containerPortForServicePort, resolveAuthority } from "../mesh/registry.ts";
import { type RequestFacts, fires, gatewayServersFor, routeRequest, serverAdmits } from "../mesh/routing.ts";
import { type ClientTls, autoMtlsFacts, clientTls } from "../security/mtls/destination_rule.ts";
import { type ServerMtls, serverMtls } from "../security/mtls/peer_authn.ts";
import { XFCC_HEADER, applyXfcc, xfccFor } from "../security/mtls/xfcc.ts";
import { type Workload, spiffeId } from "../security/workload.ts";
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

/** The request facts routing looks at (header names lower case, pseudo-headers included or not). */
export interface RouteRequest {
  readonly authority: string;
  readonly method: string;
  readonly path: string;
  readonly headers: ReadonlyArray<readonly [string, string]>;
}

/** Which VirtualService, route index and destination served a request (simulate's `route`, /config_dump). */
export interface ServedRoute {
  readonly virtualService: string;
  readonly routeIndex: number;
  readonly destination: string;
}

/** What a VirtualService route does to a forwarded request. */
export interface RouteActions {
  readonly path?: string;
  readonly authority?: string;
  readonly setHeaders: ReadonlyArray<readonly [string, string]>;
  readonly addHeaders: ReadonlyArray<readonly [string, string]>;
  readonly removeHeaders: readonly string[];
  readonly responseHeaders: readonly HeaderOperations[];
  readonly timeoutMs?: number;
  readonly retries?: HttpRetry;
  readonly delayMs?: number;
  readonly mirror?: { readonly host: string; readonly port: number };
}

/** Where an outbound or gateway request goes; `tls` set = mutual TLS with the mesh certificate. */
/**
 * The upstream cluster a forwarded request joins (Envoy's
 * `outbound|port|subset|host`), which endpoint of it, and the
 * DestinationRule limits in force: what the data path enforces
 * (connection_pool.ts, outlier_detection.ts).
 */
export interface UpstreamCluster {
  readonly cluster: string;
  /** `address:port` of the chosen endpoint. */
  readonly endpoint: string;
  /** How many endpoints the cluster has (ejected ones included). */
  readonly size: number;
  readonly connectionPool?: ConnectionPool;
  readonly outlierDetection?: OutlierDetection;
}

/** Which endpoints are out of the load-balancing pool (outlier detection); none by default. */
export type EjectedEndpoints = (cluster: string, endpoint: string) => boolean;

export type RouteResult =
  | {
      kind: "forward";
      host: string;
      port: number;
      mtls: ClientTls | null;
      endpoint: EndpointFlag | null;
      route: string;
      served?: ServedRoute;
      actions?: RouteActions;
      upstream?: UpstreamCluster;
    }
  | { kind: "reply"; reply: LocalReply; route: string; served?: ServedRoute; delayMs?: number };

/** The inbound stage's answer: a local reply, or the headers (and properties) to go on with. */
/** What the external authorizer of a CUSTOM policy answered (Envoy's ext_authz stats: ok, denied, error, failure_mode_allowed). */
export interface ExtAuthzOutcome {
  readonly provider: string;
  readonly outcome: "ok" | "denied" | "error" | "failure_mode_allowed";
  /** Why it erred (transport error, timeout, 5xx). */
  readonly error?: string;
}

export type InboundResult =
  | { kind: "reply"; reply: LocalReply; stage: "authn" | "authz"; decision?: Decision; authn?: AuthnResult; extAuthz?: ExtAuthzOutcome }
  | {
      kind: "continue";
      headers: Array<[string, string]>;
      properties: Record<string, string>;
      decision: Decision;
      authn: AuthnResult;
      extAuthz?: ExtAuthzOutcome;
    };

export interface InboundRequest {
  headers: ReadonlyArray<readonly [string, string]>;
  socket: { remoteAddress?: string; remotePort?: number; localAddress?: string };
}

const empty = (status: number, details: string): LocalReply => ({ status, details, body: "", headers: [], grpcStatus: -1 });

export class SecurityPolicy {
  readonly serverMode: ServerMtls;
  private readonly authenticator: Authenticator;
  private readonly authz: AuthorizationEngine;
  /** Services and workloads: the catalog's, plus the `--endpoint` registry's hosts. */
  readonly registry: MeshRegistry;

  constructor(
    readonly catalog: Catalog,
    readonly mesh: MeshSettings,
    readonly identity: SecurityIdentity,
    private readonly endpoints: ReadonlyMap<string, EndpointFlag>,
    jwks: JwksCache,
    clockSkewSeconds: number,
    private readonly random: () => number = Math.random,
    private readonly ejected: EjectedEndpoints = () => false,
    /** Calls the external authorizers of CUSTOM policies; without it a CUSTOM policy that matches denies. */
    private readonly extAuthz?: ExtAuthzClient,
  ) {
    const k = catalog.byKind;
    const w = identity.workload;
    this.registry = registryWithEndpoints(catalog, endpoints);
    // A gateway's listener speaks the Gateway server's protocol (HTTP): no mesh mTLS on it.
    this.serverMode = identity.gateway
      ? Object.freeze({ mode: "DISABLE", scope: "default", policy: null })
      : serverMtls(k.PeerAuthentication, w, identity.containerPort, k.Service, mesh.rootNamespace);
    this.authenticator = Authenticator.create(jwtRulesFor(k.RequestAuthentication, w, mesh.rootNamespace), { jwks, clockSkewSeconds });
    this.authz = AuthorizationEngine.create(authorizationPoliciesFor(k.AuthorizationPolicy, w, mesh.rootNamespace));
  }

  /** What /config_dump shows of the decisions. */
  describe(): unknown {
    const { extensionProviders, ...mesh } = this.mesh;
    return {
      serverMtls: this.serverMode,
      authorization: { ...this.authz.size, providers: this.authz.customProviders },
      mesh: {
        ...mesh,
        extensionProviders: [...extensionProviders.authorizers.values(), ...[...extensionProviders.other].map(([name, kind]) => ({ name, kind }))],
      },
      workload: this.identity.workload,
      containerPort: this.identity.containerPort,
      gateway: this.identity.gateway,
    };
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
    const peerUri = mtls
      ? ((peer!.subjectAltName ?? "")
          .split(", ")
          .find((s) => s.startsWith("URI:"))
          ?.slice(4) ?? "")
      : "";
    if (mtls) {
      properties["connection.uri_san_peer_certificate"] = peerUri;
      properties["connection.uri_san_local_certificate"] =
        (local!.subjectAltName ?? "")
          .split(", ")
          .find((s) => s.startsWith("URI:"))
          ?.slice(4) ?? "";
      const sni = (tlsSocket as unknown as { servername?: string | false }).servername;
      if (sni) properties["connection.requested_server_name"] = sni;
    }
    // XFCC: never pass a client-supplied one; on mutual TLS set our element (security.md §3).
    const pseudo = request.headers.filter(([k]) => k.startsWith(":"));
    let headers = applyXfcc(
      request.headers.filter(([k]) => !k.startsWith(":")),
      mtls ? xfccFor(local!, peer!) : undefined,
    );
    const path = get(":path") || "/";
    const authority = get(":authority");
    const authn = await this.authenticator.authenticate({ method: get(":method"), path, host: authority, scheme: "http", headers });
    if (authn.outcome === "denied") {
      return {
        kind: "reply",
        stage: "authn",
        authn,
        reply: {
          status: authn.status,
          details: `jwt_authn_access_denied{${authn.body.replace(/ /g, "_")}}`,
          body: authn.body,
          headers: Object.entries(authn.responseHeaders),
          grpcStatus: -1,
        },
      };
    }
    const removed = new Set(authn.effects.removeHeaders.map((h) => h.toLowerCase()));
    headers = [...headers.filter(([k]) => !removed.has(k)), ...authn.effects.setHeaders.map(([k, v]) => [k, v] as [string, string])];
    const forwardPath = authn.effects.path;
    const peerPrincipal = mtls && peerUri.startsWith("spiffe://") ? peerUri.slice("spiffe://".length) : undefined;
    const authzRequest = {
      method: get(":method"),
      path: forwardPath,
      host: authority,
      headers,
      sourceIp: request.socket.remoteAddress ?? "",
      destinationIp: request.socket.localAddress,
      destinationPort: this.identity.containerPort,
      sni: properties["connection.requested_server_name"],
      peerPrincipal,
      requestPrincipal: authn.outcome === "authenticated" ? authn.principal : undefined,
      authPayload: authn.outcome === "authenticated" ? authn.payload : undefined,
    };
    // CUSTOM first (upstream's ext_authz filter before the RBAC filters): the authorizer may deny, or add headers the rest sees.
    const custom = this.authz.custom(authzRequest);
    let extAuthz: ExtAuthzOutcome | undefined;
    if (custom.kind !== "none") {
      const provider = custom.kind === "ask" ? this.mesh.extensionProviders.authorizers.get(custom.provider) : undefined;
      const verdict: ExtAuthzVerdict =
        custom.kind === "invalid" || !provider || !this.extAuthz
          ? {
              kind: "deny",
              status: RBAC_DENIED_STATUS,
              body: RBAC_DENIED_BODY,
              headers: [],
              error: custom.kind === "invalid" ? custom.why : `no external authorizer ${custom.provider}`,
            }
          : await this.extAuthz.check(provider, {
              method: authzRequest.method,
              path: forwardPath,
              authority,
              scheme: "http",
              headers,
              source: {
                address: request.socket.remoteAddress ?? "",
                port: request.socket.remotePort ?? 0,
                ...(peerPrincipal ? { principal: `spiffe://${peerPrincipal}` } : {}),
              },
              destination: {
                address: request.socket.localAddress ?? "",
                port: this.identity.containerPort,
                ...(mtls ? { principal: properties["connection.uri_san_local_certificate"] } : {}),
              },
              requestId: get("x-request-id") || undefined,
            });
      const name = custom.kind === "ask" ? custom.provider : "-";
      if (verdict.kind === "deny") {
        extAuthz = { provider: name, outcome: verdict.error ? "error" : "denied", ...(verdict.error ? { error: verdict.error } : {}) };
        const match = custom.kind === "ask" ? custom.match : undefined;
        const decision: Decision = Object.freeze({
          allowed: false,
          policy: match?.policy ?? null,
          ruleIndex: match?.ruleIndex ?? null,
          action: "CUSTOM",
          reason: "denied_by_ext_authz",
          status: verdict.status,
          body: verdict.body,
        });
        return {
          kind: "reply",
          stage: "authz",
          decision,
          authn,
          extAuthz,
          reply: {
            status: verdict.status,
            details: verdict.error ? "ext_authz_error" : "ext_authz_denied",
            body: verdict.body,
            headers: verdict.headers.map(([k, v]) => [k, v]),
            grpcStatus: -1,
          },
        };
      }
      extAuthz = { provider: name, outcome: verdict.failedOpen ? "failure_mode_allowed" : "ok", ...(verdict.failedOpen ? { error: verdict.failedOpen } : {}) };
      const replaced = new Set([...verdict.removeHeaders, ...verdict.setHeaders.map(([k]) => k)]);
      headers = [...headers.filter(([k]) => !replaced.has(k)), ...verdict.setHeaders.map(([k, v]) => [k, v] as [string, string])];
    }
    const decision = this.authz.evaluate({ ...authzRequest, headers });
    if (!decision.allowed) {
      return {
        kind: "reply",
        stage: "authz",
        decision,
        authn,
        extAuthz,
        reply: { status: decision.status ?? 403, details: "rbac_access_denied", body: decision.body ?? "RBAC: access denied", headers: [], grpcStatus: -1 },
      };
    }
    if (authn.outcome === "authenticated") properties[AUTHN_PAYLOAD_PROPERTY.join(".")] = authn.payloadJson;
    const outPseudo = pseudo.map(([k, v]) => [k, k === ":path" ? forwardPath : v] as [string, string]);
    return { kind: "continue", headers: [...outPseudo, ...headers], properties, decision, authn, extAuthz };
  }

  /** Outbound requests: the app's XFCC is always dropped (SANITIZE). */
  outboundHeaders(headers: ReadonlyArray<readonly [string, string]>): Array<[string, string]> {
    return headers.filter(([k]) => k !== XFCC_HEADER).map(([k, v]) => [k, v]);
  }

  /**
   * Where a sidecar's outbound request goes (security.md §2, §6): the host
   * in any of upstream's forms is resolved by the mesh model; a
   * VirtualService bound to `mesh` for it routes the request (match, weighted
   * split, rewrite, redirect, directResponse, headers, timeout, retries,
   * fault, mirror); the destination is a registered `--endpoint`
   * (`host:servicePort`) with the client TLS the DestinationRule or auto
   * mutual TLS decides; else a `--cluster` named by the host (plain); else
   * ALLOW_ANY passes through to the host itself, REGISTRY_ONLY answers 502
   * from the fallthrough route (404 with it disabled) unless a ServiceEntry
   * registers the host.
   */
  outbound(request: RouteRequest | string, clusters: ReadonlyMap<string, { host: string; port: number }>): RouteResult {
    const req = typeof request === "string" ? { authority: request, method: "GET", path: "/", headers: [] } : request;
    const resolved = resolveAuthority(this.registry, req.authority, this.identity.workload.namespace);
    const routed = this.routeByVirtualService(req, resolved.host, resolved.port, MESH_GATEWAY);
    if (routed) return routed;
    const ep = this.endpointFor(resolved.host, resolved.port);
    if (ep) return this.toEndpoint(ep, clusterName(resolved.host, resolved.port));
    if (this.clusterEndpoints(resolved.host, resolved.port).length > 0) {
      // Every endpoint is ejected by outlier detection (no panic mode, upstream's minHealthPercent 0).
      return {
        kind: "reply",
        reply: { status: 503, details: "no_healthy_upstream", body: "no healthy upstream", headers: [], grpcStatus: -1 },
        route: clusterName(resolved.host, resolved.port),
      };
    }
    const host = splitAuthority(req.authority).host;
    const cluster = clusters.get(host) ?? clusters.get(req.authority);
    if (cluster) return { kind: "forward", host: cluster.host, port: cluster.port, mtls: null, endpoint: null, route: `cluster|${host}` };
    if (this.mesh.outboundTrafficPolicy === "REGISTRY_ONLY" && !resolved.service) {
      return this.mesh.enableFallthroughRoute
        ? { kind: "reply", reply: empty(502, "registry_only_fallthrough"), route: "BlackHoleCluster" }
        : { kind: "reply", reply: empty(404, "route_not_found"), route: "none" };
    }
    if (!host) return { kind: "reply", reply: empty(404, "route_not_found"), route: "none" };
    const port = splitAuthority(req.authority).port ?? resolved.service?.ports[0]?.port ?? 80;
    const target = resolved.service?.source === "ServiceEntry" ? entryTarget(resolved.service.resource as Resource<"ServiceEntry">, port) : undefined;
    return {
      kind: "forward",
      host: target?.host ?? host,
      port: target?.port ?? port,
      mtls: null,
      endpoint: null,
      route: resolved.service ? clusterName(resolved.host, port) : "PassthroughCluster",
    };
  }

  private toEndpoint(ep: EndpointFlag, route: string, subset?: string): RouteResult {
    const k = this.catalog.byKind;
    const tls = clientTls({
      host: ep.host,
      servicePort: ep.servicePort,
      clientNamespace: this.identity.workload.namespace,
      destinationRules: k.DestinationRule,
      destinationHasSidecar: ep.sidecar,
      ...autoMtlsFacts(this.registry, k.PeerAuthentication, ep.host, this.mesh.rootNamespace),
      enableAutoMtls: this.mesh.enableAutoMtls,
      rootNamespace: this.mesh.rootNamespace,
      subset,
    });
    if (tls.mode !== "DISABLE" && tls.mode !== "MESH_MUTUAL") {
      return {
        kind: "reply",
        reply: { status: 503, details: "unsupported_tls_mode", body: `tls mode ${tls.mode} is not supported by this sidecar`, headers: [], grpcStatus: -1 },
        route,
      };
    }
    const policy = destinationFor(k.DestinationRule, ep.host, ep.servicePort, subset, this.identity.workload.namespace, this.mesh.rootNamespace).trafficPolicy;
    const upstream: UpstreamCluster = {
      cluster: clusterName(ep.host, ep.servicePort, subset),
      endpoint: endpointKey(ep),
      size: this.clusterEndpoints(ep.host, ep.servicePort, subset).length,
      connectionPool: policy?.connectionPool,
      outlierDetection: policy?.outlierDetection,
    };
    return { kind: "forward", host: ep.address.host, port: ep.address.port, mtls: tls.mode === "MESH_MUTUAL" ? tls : null, endpoint: ep, route, upstream };
  }

  /** The SPIFFE identity an endpoint must present, when `sa=` names one. */
  expectedIdentity(ep: EndpointFlag | null): string | undefined {
    const ns = ep ? serviceNamespace(ep.host) : undefined;
    return ep?.serviceAccount && ns ? spiffeId({ namespace: ns, serviceAccount: ep.serviceAccount }, this.mesh.trustDomain) : undefined;
  }

  /**
   * Gateway routing (issue 6 item 5, issue 11; security.md §6): Gateways in
   * any namespace selecting this workload with a server whose port — a port
   * of the gateway's Service, translated to the container port this
   * listener stands for — is ours and whose hosts cover the Host; then the
   * VirtualServices bound to one of them, routed as a sidecar routes. No
   * match → 404 with an empty body; a destination not in the registry → 503.
   */
  /** The HTTPS (tls.mode SIMPLE) Gateway servers this gateway terminates on its port, with their credentials; empty: plain HTTP. */
  gatewayTls(): GatewayTlsServer[] {
    if (!this.identity.gateway) return [];
    const w = this.identity.workload;
    return gatewayTlsServers(this.catalog.byKind.Gateway, this.catalog.byKind.Secret, w, this.identity.containerPort, (servicePort) =>
      containerPortForServicePort(this.registry, w, servicePort),
    );
  }

  gatewayRoute(request: RouteRequest | string): RouteResult {
    const req = typeof request === "string" ? { authority: request, method: "GET", path: "/", headers: [] } : request;
    const { host } = splitAuthority(req.authority);
    const w = this.identity.workload;
    const servers = gatewayServersFor(this.catalog.byKind.Gateway, w.labels, this.identity.containerPort, host, (servicePort) =>
      containerPortForServicePort(this.registry, w, servicePort),
    );
    for (const { gateway, server } of servers) {
      const key = `${gateway.namespace}/${gateway.name}`;
      const admitted = this.catalog.byKind.VirtualService.filter((vs) => serverAdmits(server, gateway.namespace, vs));
      const routed = this.routeByVirtualService(req, host, server.port.number, key, admitted, `${key}|`);
      if (routed) return routed;
    }
    return { kind: "reply", reply: empty(404, "route_not_found"), route: "none" };
  }

  /** Routes by the VirtualServices for a host on a gateway (`mesh` for the sidecar); undefined when none applies. */
  private routeByVirtualService(
    req: RouteRequest,
    host: string,
    port: number,
    gateway: string,
    candidates = this.catalog.byKind.VirtualService,
    prefix = "",
  ): RouteResult | undefined {
    const facts: RequestFacts = {
      method: req.method,
      path: req.path,
      authority: req.authority,
      host,
      port,
      headers: req.headers,
      sourceLabels: this.identity.workload.labels,
      sourceNamespace: this.identity.workload.namespace,
      gateway,
    };
    const { choice, hasVirtualService } = routeRequest(candidates, facts, this.random);
    if (!choice) {
      // A VirtualService covers the host but no route matches: upstream answers 404.
      return hasVirtualService ? { kind: "reply", reply: empty(404, "route_not_found"), route: `${prefix}none` } : undefined;
    }
    const r = choice.route;
    const d = choice.destination?.destination;
    const served = {
      virtualService: choice.virtualService,
      routeIndex: choice.routeIndex,
      destination: d ? `${d.fqdn}${d.port ? `:${d.port}` : ""}${d.subset ? `|${d.subset}` : ""}` : r.redirect ? "redirect" : "directResponse",
    };
    const routeName = `${prefix}${choice.virtualService}|${choice.routeIndex}`;
    const delayMs = r.fault?.delay && fires(r.fault.delay.percentage, this.random) ? r.fault.delay.fixedDelayMs : undefined;
    if (r.fault?.abort && fires(r.fault.abort.percentage, this.random)) {
      return {
        kind: "reply",
        reply: { status: r.fault.abort.httpStatus, details: "fault_filter_abort", body: "fault filter abort", headers: [], grpcStatus: -1 },
        route: routeName,
        served,
        delayMs,
      };
    }
    if (r.directResponse) {
      return {
        kind: "reply",
        reply: { status: r.directResponse.status, details: "direct_response", body: r.directResponse.body ?? "", headers: [], grpcStatus: -1 },
        route: routeName,
        served,
        delayMs,
      };
    }
    if (r.redirect) {
      const rd = r.redirect;
      const { host: h, port: p } = splitAuthority(req.authority);
      const authority = rd.authority ?? (rd.port ? `${h}:${rd.port}` : p ? `${h}:${p}` : h);
      const location = `${rd.scheme ?? "http"}://${authority}${rd.uri ?? req.path}`;
      return {
        kind: "reply",
        reply: { status: rd.redirectCode, details: "redirect", body: "", headers: [["location", location]], grpcStatus: -1 },
        route: routeName,
        served,
        delayMs,
      };
    }
    if (!d) return { kind: "reply", reply: empty(404, "route_not_found"), route: routeName, served };
    const destPort = d.port ?? this.servicePort(d.fqdn, port);
    const ep = this.endpointFor(d.fqdn, destPort, d.subset);
    if (d.subset && !ep && this.endpointFor(d.fqdn, destPort)) {
      // The subset is undefined or selects no endpoint: upstream's 503 (no healthy upstream).
      return {
        kind: "reply",
        reply: { status: 503, details: "no_healthy_upstream", body: "no healthy upstream", headers: [], grpcStatus: -1 },
        route: `${routeName}|${d.fqdn}:${destPort}|${d.subset}`,
        served,
        delayMs,
      };
    }
    const destRoute = `${routeName}|${d.fqdn}:${destPort}${d.subset ? `|${d.subset}` : ""}`;
    let result: RouteResult;
    if (ep) result = this.toEndpoint(ep, destRoute, d.subset);
    else if (this.registry.services.some((s) => s.source === "ServiceEntry" && s.fqdn === d.fqdn)) {
      const entry = this.registry.services.find((s) => s.fqdn === d.fqdn)!.resource as Resource<"ServiceEntry">;
      const t = entryTarget(entry, destPort);
      result = { kind: "forward", host: t.host, port: t.port, mtls: null, endpoint: null, route: destRoute };
    } else
      return {
        kind: "reply",
        reply: { status: 503, details: "no_healthy_upstream", body: "no healthy upstream", headers: [], grpcStatus: -1 },
        route: destRoute,
        served,
        delayMs,
      };
    if (result.kind === "reply") return { ...result, served };
    const ops = [r.headers.request, choice.destination!.headers.request];
    const mirror =
      r.mirror && fires(r.mirrorPercentage, this.random)
        ? this.endpointFor(r.mirror.fqdn, r.mirror.port ?? this.servicePort(r.mirror.fqdn, port), r.mirror.subset)
        : undefined;
    return {
      ...result,
      served,
      actions: {
        path: r.rewrite?.uri !== undefined ? rewritePath(req.path, r.rewrite.uri, matchedPrefix(r, facts)) : undefined,
        authority: r.rewrite?.authority,
        setHeaders: ops.flatMap((o) => Object.entries(o.set)),
        addHeaders: ops.flatMap((o) => Object.entries(o.add)),
        removeHeaders: ops.flatMap((o) => o.remove),
        responseHeaders: [r.headers.response, choice.destination!.headers.response],
        timeoutMs: r.timeoutMs,
        retries: r.retries,
        delayMs,
        mirror: mirror ? { host: mirror.address.host, port: mirror.address.port } : undefined,
      },
    };
  }

  /**
   * An endpoint of a service port; with a subset, one whose labels the
   * DestinationRule subset selects (none when the subset is not defined).
   * Several candidates: one at random, as a load balancer would.
   */
  private endpointFor(fqdn: string, port: number, subset?: string): EndpointFlag | undefined {
    const cluster = clusterName(fqdn, port, subset);
    const candidates = this.clusterEndpoints(fqdn, port, subset).filter((e) => !this.ejected(cluster, endpointKey(e)));
    if (candidates.length <= 1) return candidates[0];
    return candidates[Math.min(candidates.length - 1, Math.floor(this.random() * candidates.length))];
  }

  /** Every endpoint of a service port (and subset), ejected or not; none when the subset is not defined. */
  private clusterEndpoints(fqdn: string, port: number, subset?: string): EndpointFlag[] {
    const candidates = [...this.endpoints.values()].filter((e) => e.host === fqdn && e.servicePort === port);
    if (subset === undefined) return candidates;
    const applied = destinationFor(this.catalog.byKind.DestinationRule, fqdn, port, subset, this.identity.workload.namespace, this.mesh.rootNamespace);
    if (!applied.subset) return [];
    return candidates.filter((e) => labelsMatch(applied.subset!.labels, e.labels ?? {}));
  }

  /** The port of a Service named by its FQDN: the one matching `preferred`, else its only port, else 80. */
  private servicePort(fqdn: string, preferred?: number): number {
    const svc = this.registry.services.find((s) => s.fqdn === fqdn);
    if (svc && preferred !== undefined && svc.ports.some((p) => p.port === preferred)) return preferred;
    if (svc && svc.ports.length === 1) return svc.ports[0].port;
    const eps = [...this.endpoints.values()].filter((e) => e.host === fqdn);
    if (eps.length === 1) return eps[0].servicePort;
    return preferred ?? 80;
  }
}

/** An endpoint's address as outlier detection keys it. */
export function endpointKey(ep: Pick<EndpointFlag, "address">): string {
  return `${ep.address.host}:${ep.address.port}`;
}

/** The prefix a route's uri match matched, for a prefix rewrite (upstream replaces only that part). */
function matchedPrefix(r: HttpRoute, facts: RequestFacts): string | undefined {
  const path = facts.path.split("?")[0];
  for (const m of r.match) if (m.uri && "prefix" in m.uri && path.startsWith(m.uri.prefix)) return m.uri.prefix;
  return undefined;
}

/** A `rewrite.uri`: replaces the matched prefix (or the whole path when the match was not a prefix); the query string stays. */
export function rewritePath(path: string, uri: string, prefix: string | undefined): string {
  const q = path.indexOf("?");
  const p = q < 0 ? path : path.slice(0, q);
  const query = q < 0 ? "" : path.slice(q);
  const rewritten = prefix !== undefined ? uri + p.slice(prefix.length) : uri;
  return (rewritten === "" ? "/" : rewritten) + query;
}

/** Where a ServiceEntry host is reached: its first STATIC endpoint (port by the port's name), else the host itself (DNS). */
function entryTarget(entry: Resource<"ServiceEntry">, port: number): { host: string; port: number } {
  const p = entry.spec.ports.find((x) => x.number === port);
  const ep = entry.spec.endpoints[0];
  if (entry.spec.resolution === "STATIC" && ep) return { host: ep.address, port: (p && ep.ports[p.name]) ?? p?.targetPort ?? port };
  return { host: entry.spec.hosts[0], port: p?.targetPort ?? port };
}

/** The catalog's registry plus a service for every `--endpoint` host not described by a Service document. */
function registryWithEndpoints(catalog: Catalog, endpoints: ReadonlyMap<string, EndpointFlag>): MeshRegistry {
  const byHost = new Map<string, number[]>();
  for (const ep of endpoints.values()) byHost.set(ep.host, [...(byHost.get(ep.host) ?? []), ep.servicePort]);
  const services = [...byHost].map(([fqdn, ports]) => {
    const ns = serviceNamespace(fqdn);
    return Object.freeze({
      name: fqdn.split(".")[0],
      namespace: ns ?? "",
      fqdn,
      addresses: Object.freeze([]),
      ports: Object.freeze(ports.map((p) => Object.freeze({ port: p, targetPort: p }))),
      source: "registry" as const,
      external: ns === undefined,
    });
  });
  return buildRegistry(catalog.byKind, { domain: catalog.domain, services });
}
