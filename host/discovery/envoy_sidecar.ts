import type { Catalog } from "../config/catalog.ts";
import type { Labels } from "../mesh/labels.ts";
import { type ServerMtlsMode, effectiveMtls } from "../mesh/policies.ts";
import { authorizationPoliciesFor } from "../security/authz/engine.ts";
import { jwtRulesFor } from "../security/jwt/authenticator.ts";
import { type MeshRegistry, type MeshWorkload, servicesOfWorkload, targetContainerPort } from "../mesh/registry.ts";
import { serviceDomains } from "../mesh/hosts.ts";
import type { EncodedJson } from "./encoded_json.ts";
import { HUB_CLUSTER, MODULE_CLUSTER, type ModuleSource, PLUGIN_NAME, WASM_TYPE, hubCluster, hubHost, wasmFilterConfig } from "./envoy_wasm.ts";
import { address, remoteHttpCluster } from "./envoy_clusters.ts";
import {
  type ClusterServing,
  DEFAULT_CLUSTER_SERVING,
  headlessPodListeners,
  outboundClusters,
  type PodListener,
  servedServices,
  withDnsTtl,
} from "./envoy_outbound_clusters.ts";
import { jwtAuthn } from "./envoy_jwt.ts";
import { HTTP_ALPN, TLS_INSPECTOR, mtlsChains } from "./envoy_mtls.ts";
import { tcpProxy } from "./envoy_network_filters.ts";
import {
  BLACKHOLE,
  type OutboundServing,
  PASSTHROUGH,
  type PortService,
  type SplitListener,
  outboundKind,
  outboundPortListener,
  podLoopGuard,
  routedAsHttp,
  spliceFirstChain,
  splitListener,
  virtualOutbound,
} from "./envoy_outbound.ts";
import { HTTP_INSPECTOR, isUnnamedProtocol, sniffedInboundChains, sniffingListenerFields } from "./envoy_sniffing.ts";
import { httpRbacFilters, networkRbacFilters } from "./envoy_rbac.ts";
import { httpCustomFilters, networkCustomFilters } from "./envoy_ext_authz.ts";
import { type ExtensionProviders, NO_EXTENSION_PROVIDERS } from "../config/extension_providers.ts";
import { virtualServiceRoutes } from "./envoy_routes.ts";
import type { NodeIdentity } from "./proxy_kind.ts";
import { clusterName } from "../mesh/cluster_names.ts";
import { subsetLoadAssignments, type XdsService } from "./proxyless.ts";
import type { Resource, ResourceSet } from "./resource_set.ts";
import { CLUSTER, ENDPOINT, EXTENSION_CONFIG, LISTENER, ROUTE } from "./type_urls.ts";

/**
 * What an Envoy sidecar is served, computed from the mesh model for the
 * workload its node names, laid out as upstream's sidecars are:
 *
 * - `virtualInbound` (0.0.0.0:15006, original destination): filter chains
 *   per HTTP port a Service of the workload targets, by the port's mutual TLS
 *   mode (envoy_mtls.ts), their HttpConnectionManager running jwt_authn
 *   (envoy_jwt.ts), the RBAC filters (envoy_rbac.ts), the filter, then the
 *   router to `inbound|<port>||` (127.0.0.1); a port that names no protocol
 *   gets those and TCP chains behind network RBAC, told apart by sniffing
 *   (envoy_sniffing.ts); other ports pass through behind network RBAC.
 *   Policies are the ones the mesh model selects for the workload, as for
 *   the Node sidecar.
 * - The outbound listeners (envoy_outbound.ts): `virtualOutbound` and
 *   `0.0.0.0_<port>` per service port served as HTTP, sniffed or TCP, the
 *   HTTP connection managers running the filter then the router, routes by
 *   RDS `<port>` over ADS.
 * - RouteConfiguration `<port>`: a virtual host per service on that port
 *   (every name a client in the proxy's namespace may use, with and without
 *   `:<port>`), routes from the VirtualServices, else to
 *   `outbound|<port>||<host>`; `allow_any` sends unknown hosts through.
 * - `<pod ip>_<port>` per endpoint of a headless Service's TCP ports
 *   (envoy_outbound_clusters.ts).
 * - Clusters: `outbound|<port>|<subset>|<host>`, over EDS (the same load
 *   assignments proxyless clients get), ORIGINAL_DST or DNS as the service
 *   resolves (envoy_outbound_clusters.ts), HTTP/2 for grpc and http2 ports,
 *   originating the client TLS the mesh model decides (DestinationRule
 *   `tls`, else auto mutual TLS: envoy_upstream_tls.ts);
 *   `inbound|<port>||`; `hub_server`; the passthrough and black-hole
 *   clusters; `jwks|<host>|<port>` per remote JWT key set.
 * - The filter, `envoy.filters.http.wasm` with the module and the hub client
 *   configuration, as the TypedExtensionConfig `mesh.hub_client` (ECDS): the
 *   listeners name it through `config_discovery` over ADS, so a policy
 *   change re-sends that one resource and no listener.
 *
 * Other ports (tcp, tls, mongo, …) get no listener of their own: their
 * traffic goes through the passthrough chains. Pure.
 */

export interface EnvoyMesh {
  readonly registry: MeshRegistry;
  /** Envoy resources encoded by this version and the one before (what did not change is not encoded again). */
  readonly encoded: EncodedJson;
  readonly catalog: Catalog;
  readonly services: readonly XdsService[];
  /** The filter's plugin configuration (JSON), from the folder's hub client resources. */
  readonly pluginConfig: string;
  readonly module: ModuleSource;
  /** The load assignments already built for proxyless clients (the same names and content). */
  readonly endpoints: ReadonlyMap<string, Resource>;
  /** Where mesh-wide policies live (PeerAuthentication, RequestAuthentication, AuthorizationPolicy). */
  readonly rootNamespace: string;
  readonly serving: EnvoyServing;
  /** meshConfig `extensionProviders`: the authorizers CUSTOM AuthorizationPolicies name (none when absent). */
  readonly extensionProviders?: ExtensionProviders;
  /** The SPIFFE trust domain of the mesh's identities (the SANs outbound mutual TLS checks). */
  readonly trustDomain: string;
  /** meshConfig `enableAutoMtls` (true): clusters without a DestinationRule `tls` originate mutual TLS to endpoints with a sidecar. */
  readonly enableAutoMtls: boolean;
}

/** What spec 2's variables change in what Envoy is served (docs/discovery.md); the outbound listeners' in envoy_outbound.ts, the clusters' in envoy_outbound_clusters.ts. */
export interface EnvoyServing extends OutboundServing, ClusterServing {
  /** DISCO_ENABLE_FALLTHROUGH_ROUTE (true): false leaves out the `allow_any` route, so unknown hosts get 404. */
  readonly fallthroughRoute: boolean;
  /** DISCO_ENABLE_PROTOCOL_SNIFFING_FOR_INBOUND (true): unnamed inbound ports are sniffed; false: passed through as TCP. */
  readonly sniffInbound: boolean;
  /** DISCO_INBOUND_PROTOCOL_DETECTION_TIMEOUT in ms (1s): how long virtualInbound's inspectors wait for a first byte. */
  readonly inboundDetectionTimeoutMs: number;
  /** DISCO_INITIAL_FETCH_TIMEOUT in ms (0: Envoy waits for the first answer as long as it takes). */
  readonly initialFetchTimeoutMs: number;
  /** DISCO_BLOCK_HTTP_ON_443 (true): HTTP services on port 443 get no outbound HTTP listener (it would take every TLS connection to 443). */
  readonly blockHttpOn443: boolean;
}

/** Spec 2's defaults. */
export const DEFAULT_ENVOY_SERVING: EnvoyServing = {
  ...DEFAULT_CLUSTER_SERVING,
  fallthroughRoute: true,
  acceptHttp10: false,
  initialFetchTimeoutMs: 0,
  blockHttpOn443: true,
  sniffOutbound: true,
  sniffInbound: true,
  inboundDetectionTimeoutMs: 1000,
  useRemoteAddress: false,
  restrictPodTrafficLoop: true,
  kvstoreFilter: false,
  rpcFilter: false,
};

export const INBOUND_PORT = 15006;
export const INBOUND_PASSTHROUGH = "InboundPassthroughClusterIpv4";

const HCM_TYPE = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";
type ConfigSource = Json;

/**
 * Every resource served over ADS is named through this config source. Its
 * `initial_fetch_timeout` is set even at 0 (wait as long as it takes), since
 * Envoy's own default when absent is 15 s.
 */
function adsSource(serving: EnvoyServing): ConfigSource {
  return { ads: {}, resource_api_version: "V3", initial_fetch_timeout: `${serving.initialFetchTimeoutMs / 1000}s` };
}
const HTTP_PROTOCOLS: ReadonlySet<string> = new Set(["http", "http2", "grpc", "grpc-web"]);

/** The port TLS to external hosts goes to: an HTTP listener there would take all of it. */
export const HTTPS_PORT = 443;

/** Whether a port may carry HTTP, as listener conflicts are counted (conflicts.ts): a named HTTP protocol, or none named. */
export const isHttp = (protocol: string | undefined) => protocol === undefined || HTTP_PROTOCOLS.has(protocol);

type Json = Record<string, unknown>;

/** The HTTP filters of every listener: the module by ECDS, then the router. */
function httpFilters(ads: ConfigSource): Json[] {
  return [
    { name: PLUGIN_NAME, config_discovery: { config_source: ads, type_urls: [WASM_TYPE] } },
    { name: "envoy.filters.http.router", typed_config: { "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router" } },
  ];
}

/** What the inbound side enforces before the app: per-port mutual TLS, then JWT authentication and authorization. */
interface InboundSecurity {
  /** The mode of a bound container port; `undefined` = the workload's own (the passthrough). */
  readonly mtls: (port: number | undefined) => ServerMtlsMode;
  /** jwt_authn, the CUSTOM filters and the RBAC filters (AUDIT, DENY, ALLOW), in order, before the module. */
  readonly httpFilters: readonly Json[];
  /** The CUSTOM and RBAC network filters of a TCP chain, before tcp_proxy. */
  readonly networkFilters: (statPrefix: string) => Json[];
}

/** The chains of a bound port: HTTP, or HTTP and TCP told apart by sniffing when the port names no protocol. */
function inboundChain(port: number, sniffed: boolean, security: InboundSecurity, ads: ConfigSource): Json[] {
  const hcm = {
    name: "envoy.filters.network.http_connection_manager",
    typed_config: {
      "@type": HCM_TYPE,
      stat_prefix: `inbound_0.0.0.0_${port}`,
      // Upstream's BASE path normalization: policies see the path the app gets.
      normalize_path: true,
      route_config: {
        name: `inbound|${port}||`,
        virtual_hosts: [
          { name: `inbound|http|${port}`, domains: ["*"], routes: [{ match: { prefix: "/" }, route: { cluster: `inbound|${port}||`, timeout: "0s" } }] },
        ],
      },
      http_filters: [...security.httpFilters, ...httpFilters(ads)],
    },
  };
  if (sniffed) {
    const cluster = `inbound|${port}||`;
    // The inbound connection managers do not accept HTTP/1.0: such a request goes on as TCP.
    return sniffedInboundChains(security.mtls(port), port, [hcm], [...security.networkFilters(cluster), tcpProxy(cluster, cluster)], false);
  }
  return mtlsChains(security.mtls(port), { destination_port: port }, (tls) => ({ name: `inbound|${port}||${tls ? "mtls" : ""}`, filters: [hcm] }), HTTP_ALPN);
}

function inboundListener(ports: ReadonlyMap<number, boolean>, security: InboundSecurity, ads: ConfigSource, serving: EnvoyServing): Json {
  // Traffic to other ports is passed through under the workload's mode and the policies a TCP connection can be held to.
  const passthroughFilters = [...security.networkFilters(INBOUND_PASSTHROUGH), tcpProxy(INBOUND_PASSTHROUGH, INBOUND_PASSTHROUGH)];
  const passthrough = mtlsChains(
    security.mtls(undefined),
    {},
    (tls) => ({ name: `inbound-passthrough${tls ? "-mtls" : ""}`, filters: passthroughFilters }),
    [],
  );
  const { filter_chain_match: _, ...fallback } = passthrough.pop()!;
  return {
    name: "virtualInbound",
    address: address("0.0.0.0", INBOUND_PORT),
    traffic_direction: "INBOUND",
    listener_filters: [
      {
        name: "envoy.filters.listener.original_dst",
        typed_config: { "@type": "type.googleapis.com/envoy.extensions.filters.listener.original_dst.v3.OriginalDst" },
      },
      TLS_INSPECTOR,
      // Upstream's virtualInbound: with inbound sniffing on, the HTTP inspector, and a connection silent for the timeout goes on as TCP.
      ...(serving.sniffInbound ? [HTTP_INSPECTOR] : []),
    ],
    ...(serving.sniffInbound ? sniffingListenerFields(serving.inboundDetectionTimeoutMs) : {}),
    filter_chains: [...[...ports].flatMap(([port, sniffed]) => inboundChain(port, sniffed, security, ads)), ...passthrough],
    default_filter_chain: fallback,
  };
}

/** A pod's own address and port: its TCP traffic to the headless service's cluster. */
function podListener(pod: PodListener): Json {
  return {
    name: pod.name,
    address: address(pod.ip, pod.port),
    bind_to_port: false,
    traffic_direction: "OUTBOUND",
    filter_chains: [{ filters: [tcpProxy(pod.cluster, pod.cluster)] }],
  };
}

function staticCluster(name: string, ip: string, port: number): Json {
  return {
    name,
    type: "STATIC",
    connect_timeout: "10s",
    load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: address(ip, port) } }] }] },
  };
}

function passthrough(name: string): Json {
  return { name, type: "ORIGINAL_DST", connect_timeout: "10s", lb_policy: "CLUSTER_PROVIDED" };
}

/** The workload a node names: its pod, else the Deployment its pod name was made from. */
/** Each registry's workloads by namespace, in order: every proxy's workload is looked up on every push. */
const workloadsByNamespace = new WeakMap<MeshRegistry, Map<string, MeshWorkload[]>>();

export function findWorkload(registry: MeshRegistry, who: NodeIdentity): MeshWorkload | undefined {
  let byNamespace = workloadsByNamespace.get(registry);
  if (!byNamespace) {
    workloadsByNamespace.set(registry, (byNamespace = new Map()));
    for (const w of registry.workloads) byNamespace.get(w.namespace)?.push(w) ?? byNamespace.set(w.namespace, [w]);
  }
  const inNamespace = byNamespace.get(who.namespace) ?? [];
  return (
    inNamespace.find((w) => w.kind === "Pod" && w.name === who.pod) ?? inNamespace.find((w) => w.kind === "Deployment" && who.pod.startsWith(`${w.name}-`))
  );
}

/**
 * The container ports Services of the workload target that get HTTP chains,
 * sorted, each with whether it is sniffed (no protocol named, and
 * `sniffInbound`): a port named HTTP by one Service is HTTP. Unnamed ports
 * with sniffing off pass through as TCP.
 */
function inboundPorts(
  registry: MeshRegistry,
  namespace: string,
  labels: Labels | undefined,
  workload: MeshWorkload | undefined,
  sniffInbound: boolean,
): Map<number, boolean> {
  const out = new Map<number, boolean>();
  if (!labels) return out;
  for (const s of servicesOfWorkload(registry, { namespace, labels })) {
    for (const p of s.ports) {
      const n = targetContainerPort(p, workload);
      if (n === undefined) continue;
      if (p.protocol !== undefined && HTTP_PROTOCOLS.has(p.protocol)) out.set(n, false);
      else if (isUnnamedProtocol(p.protocol) && sniffInbound && !out.has(n)) out.set(n, true);
    }
  }
  return new Map([...out].sort(([a], [b]) => a - b));
}

function routeConfiguration(port: number, services: readonly XdsService[], mesh: EnvoyMesh, namespace: string, labels: Labels | undefined): Json {
  const used = new Set<string>();
  const virtualHosts: Json[] = [];
  const portsOf = (host: string) => mesh.services.filter((s) => s.host === host).map((s) => s.port);
  for (const s of services) {
    const addresses = mesh.registry.services.find((m) => m.fqdn === s.host)?.addresses ?? [];
    // A name two services answer on goes to the first (Envoy refuses a domain twice in one route configuration).
    const domains = serviceDomains(s.host, namespace, mesh.registry.domain, addresses)
      .flatMap((d) => [d, `${d}:${port}`])
      .filter((d) => !used.has(d));
    if (domains.length === 0) continue;
    for (const d of domains) used.add(d);
    const routes = virtualServiceRoutes(s.host, {
      virtualServices: mesh.catalog.byKind.VirtualService,
      clientNamespace: namespace,
      clientLabels: labels,
      port,
      portsOf,
    }) ?? [{ name: "default", match: { prefix: "/" }, route: { cluster: clusterName(s.host, port), timeout: "0s" } }];
    virtualHosts.push({ name: `${s.host}:${port}`, domains, routes });
  }
  // Unknown hosts go through, unless a ServiceEntry already answers on every name.
  if (!used.has("*") && mesh.serving.fallthroughRoute)
    virtualHosts.push({
      name: "allow_any",
      domains: ["*"],
      routes: [{ name: "allow_any", match: { prefix: "/" }, route: { cluster: PASSTHROUGH, timeout: "0s" } }],
    });
  return { name: String(port), virtual_hosts: virtualHosts, validate_clusters: false };
}

/** The policies of the mesh model that select the workload, as Envoy's native filters and filter chains. */
function inboundSecurity(mesh: EnvoyMesh, workload: { namespace: string; labels: Labels }): InboundSecurity & { clusters: Json[] } {
  const byKind = mesh.catalog.byKind;
  const root = mesh.rootNamespace;
  const authorizationPolicies = authorizationPoliciesFor(byKind.AuthorizationPolicy, workload, root);
  const providers = mesh.extensionProviders ?? NO_EXTENSION_PROVIDERS;
  const jwt = jwtAuthn(jwtRulesFor(byKind.RequestAuthentication, workload, root));
  return {
    // The ports served here are the ones Services bind, so port-level settings apply to each of them.
    mtls: (port) => effectiveMtls(byKind.PeerAuthentication, workload, root, port, port === undefined ? undefined : true).mode,
    // Upstream's order: jwt_authn, CUSTOM (shadow RBAC + ext_authz), then the AUDIT, DENY, ALLOW RBAC filters.
    httpFilters: [...(jwt ? [jwt.filter] : []), ...httpCustomFilters(authorizationPolicies, providers), ...httpRbacFilters(authorizationPolicies)],
    networkFilters: (statPrefix) => [
      ...networkCustomFilters(authorizationPolicies, providers, statPrefix),
      ...networkRbacFilters(authorizationPolicies, statPrefix),
    ],
    clusters: jwt?.clusters ?? [],
  };
}

const LISTENER_TYPE = "envoy.config.listener.v3.Listener";

/**
 * The proxy's view of the mesh: what every proxy of one workload view
 * (namespace, labels, ports) is served, all but the outbound listeners,
 * which also depend on the pod's own addresses (`withOutboundListeners`;
 * host/discovery/mesh_snapshot.ts caches both).
 */
export function workloadResources(mesh: EnvoyMesh, who: NodeIdentity): ResourceSet {
  const workload = findWorkload(mesh.registry, who);
  const namespace = who.namespace;
  const labels = who.labels ?? workload?.labels;
  const set: ResourceSet = new Map([
    [LISTENER, new Map()],
    [ROUTE, new Map()],
    [CLUSTER, new Map()],
    [ENDPOINT, new Map(mesh.endpoints)],
    [EXTENSION_CONFIG, new Map()],
  ]);
  const add = (type: string, typeName: string, name: string, json: Json) => set.get(type)!.set(name, { name, any: mesh.encoded.pack(typeName, json) });
  const listener = (json: Json) => add(LISTENER, LISTENER_TYPE, json.name as string, json);
  const cluster = (json: Json) => add(CLUSTER, "envoy.config.cluster.v3.Cluster", json.name as string, withDnsTtl(json, mesh.serving));

  const inbound = inboundPorts(mesh.registry, namespace, labels, workload, mesh.serving.sniffInbound);
  const security = inboundSecurity(mesh, { namespace, labels: labels ?? {} });
  const ads = adsSource(mesh.serving);
  listener(inboundListener(inbound, security, ads, mesh.serving));
  for (const c of security.clusters) cluster(c);
  for (const port of inbound.keys()) cluster(staticCluster(`inbound|${port}||`, "127.0.0.1", port));

  for (const [port, services] of outboundPorts(mesh)) {
    const routed = services.filter((s) => routedAsHttp(s.kind)).map((s) => s.service);
    if (routed.length > 0) add(ROUTE, "envoy.config.route.v3.RouteConfiguration", String(port), routeConfiguration(port, routed, mesh, namespace, labels));
  }
  for (const pod of headlessPodListeners(mesh, mesh.serving, who.ip, isHttp)) listener(podListener(pod));
  const client = { type: who.type, namespace, labels };
  const served = servedServices(mesh, client, mesh.serving);
  for (const c of outboundClusters(mesh, client, served, mesh.serving, ads)) cluster(c);
  // A subset only the client's namespace defines has no load assignment among the mesh-wide ones yet.
  const assignments = set.get(ENDPOINT)!;
  for (const r of subsetLoadAssignments(served, assignments)) assignments.set(r.name, r);
  cluster(hubCluster(HUB_CLUSTER, hubHost(mesh.registry.domain)));
  cluster(passthrough(PASSTHROUGH));
  cluster(passthrough(INBOUND_PASSTHROUGH));
  cluster({ name: BLACKHOLE, type: "STATIC", connect_timeout: "10s" });
  if ("remote" in mesh.module) cluster(remoteHttpCluster(MODULE_CLUSTER, mesh.module.remote.uri));

  add(EXTENSION_CONFIG, "envoy.config.core.v3.TypedExtensionConfig", PLUGIN_NAME, {
    name: PLUGIN_NAME,
    typed_config: wasmFilterConfig(mesh.pluginConfig, mesh.module),
  });
  return set;
}

/** The service ports that get an outbound listener, sorted, with their services (HTTP on 443 left out when DISCO_BLOCK_HTTP_ON_443). */
function outboundPorts(mesh: EnvoyMesh): Map<number, PortService[]> {
  const byPort = new Map<number, PortService[]>();
  for (const service of mesh.services) {
    const kind = outboundKind(service.protocol, mesh.serving);
    if (kind === undefined || (routedAsHttp(kind) && mesh.serving.blockHttpOn443 && service.port === HTTPS_PORT)) continue;
    const addresses = mesh.registry.services.find((m) => m.fqdn === service.host)?.addresses ?? [];
    byPort.set(service.port, [...(byPort.get(service.port) ?? []), { service, kind, addresses }]);
  }
  return new Map([...byPort].sort(([a], [b]) => a - b));
}

/** The outbound listeners of the mesh, encoded once per version of it and split to take each pod's loop guard (`withOutboundListeners`). */
export function outboundListenerTemplates(mesh: EnvoyMesh): SplitListener[] {
  const ads = adsSource(mesh.serving);
  const ports = [...outboundPorts(mesh)].flatMap(([port, services]): Json[] => {
    const json = outboundPortListener(port, services, httpFilters(ads), ads, mesh.serving);
    return json ? [json] : [];
  });
  return [virtualOutbound(), ...ports].map(splitListener);
}

/** `set` with the outbound listeners of a pod whose addresses are `podAddresses` (the rest shared, not copied). */
export function withOutboundListeners(
  set: ResourceSet,
  templates: readonly SplitListener[],
  serving: EnvoyServing,
  podAddresses: readonly string[],
): ResourceSet {
  const listeners = new Map(set.get(LISTENER));
  for (const t of templates) listeners.set(t.name, { name: t.name, any: spliceFirstChain(t, podLoopGuard(t.name, podAddresses, serving)) });
  return new Map([...set, [LISTENER, listeners]]);
}
