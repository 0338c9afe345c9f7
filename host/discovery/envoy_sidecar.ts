import type { Catalog, Resource as MeshResource } from "../config/catalog.ts";
import type { Labels } from "../mesh/labels.ts";
import { type ServerMtlsMode, effectiveMtls } from "../mesh/policies.ts";
import { authorizationPoliciesFor } from "../security/authz/engine.ts";
import { jwtRulesFor } from "../security/jwt/authenticator.ts";
import { type MeshRegistry, type MeshWorkload, servicesOfWorkload, targetContainerPort } from "../mesh/registry.ts";
import { serviceDomains } from "../mesh/hosts.ts";
import { packJson } from "../wire/envoy_protos.ts";
import { MODULE_CLUSTER, type ModuleSource, PLUGIN_NAME, WASM_TYPE, hubCluster, wasmFilterConfig } from "./envoy_wasm.ts";
import { address, remoteHttpCluster } from "./envoy_clusters.ts";
import { type ClusterServing, DEFAULT_CLUSTER_SERVING, headlessPodListeners, outboundClusters, type PodListener, withDnsTtl } from "./envoy_outbound_clusters.ts";
import { jwtAuthn } from "./envoy_jwt.ts";
import { HTTP_ALPN, TLS_INSPECTOR, mtlsChains } from "./envoy_mtls.ts";
import { httpRbacFilters, networkRbacFilters } from "./envoy_rbac.ts";
import { virtualServiceRoutes } from "./envoy_routes.ts";
import type { NodeIdentity } from "./proxy_kind.ts";
import { clusterName, type XdsService } from "./proxyless.ts";
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
 *   router to `inbound|<port>||` (127.0.0.1); other ports pass through
 *   behind network RBAC. Policies are the ones the mesh model selects for
 *   the workload, as for the Node sidecar.
 * - `virtualOutbound` (0.0.0.0:15001, `use_original_dst`) handing each
 *   connection to the listener of its port, else to `PassthroughCluster`;
 *   `0.0.0.0_<port>` per HTTP service port of the mesh (not bound), its
 *   HttpConnectionManager running the filter then the router, routes by RDS
 *   `<port>` over ADS.
 * - RouteConfiguration `<port>`: a virtual host per service on that port
 *   (every name a client in the proxy's namespace may use, with and without
 *   `:<port>`), routes from the VirtualServices, else to
 *   `outbound|<port>||<host>`; `allow_any` sends unknown hosts through.
 * - `<pod ip>_<port>` per endpoint of a headless Service's TCP ports
 *   (envoy_outbound_clusters.ts).
 * - Clusters: `outbound|<port>|<subset>|<host>`, over EDS (the same load
 *   assignments proxyless clients get), ORIGINAL_DST or DNS as the service
 *   resolves (envoy_outbound_clusters.ts), HTTP/2 for grpc and http2 ports;
 *   `inbound|<port>||`; `hub_server`; the passthrough and black-hole
 *   clusters; `jwks|<host>|<port>` per remote JWT key set.
 * - The filter, `envoy.filters.http.wasm` with the module and the hub client
 *   configuration, as the TypedExtensionConfig `mesh.hub_client` (ECDS): the
 *   listeners name it through `config_discovery` over ADS, so a policy
 *   change re-sends that one resource and no listener.
 *
 * Non-HTTP ports (tcp, tls, mongo, …) get no HTTP listener: their traffic
 * goes through the passthrough chains. Pure.
 */

export interface EnvoyMesh {
  readonly registry: MeshRegistry;
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
}

/** What spec 2's variables change in what Envoy is served (docs/discovery.md); the cluster side in envoy_outbound_clusters.ts. */
export interface EnvoyServing extends ClusterServing {
  /** DISCO_ENABLE_FALLTHROUGH_ROUTE (true): false leaves out the `allow_any` route, so unknown hosts get 404. */
  readonly fallthroughRoute: boolean;
  /** DISCO_HTTP10 (false): the outbound HTTP listeners accept HTTP/1.0. */
  readonly acceptHttp10: boolean;
  /** DISCO_INITIAL_FETCH_TIMEOUT in ms (0: Envoy waits for the first answer as long as it takes). */
  readonly initialFetchTimeoutMs: number;
  /** DISCO_BLOCK_HTTP_ON_443 (true): HTTP services on port 443 get no outbound HTTP listener (it would take every TLS connection to 443). */
  readonly blockHttpOn443: boolean;
}

/** Spec 2's defaults. */
export const DEFAULT_ENVOY_SERVING: EnvoyServing = { ...DEFAULT_CLUSTER_SERVING, fallthroughRoute: true, acceptHttp10: false, initialFetchTimeoutMs: 0, blockHttpOn443: true };

export const INBOUND_PORT = 15006;
export const OUTBOUND_PORT = 15001;
export const PASSTHROUGH = "PassthroughCluster";
export const INBOUND_PASSTHROUGH = "InboundPassthroughClusterIpv4";
export const BLACKHOLE = "BlackHoleCluster";

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

/** Upstream sniffs a port that names no protocol; we serve it as HTTP. */
/** The port TLS to external hosts goes to: an HTTP listener there would take all of it. */
export const HTTPS_PORT = 443;

export const isHttp = (protocol: string | undefined) => protocol === undefined || HTTP_PROTOCOLS.has(protocol);

type Json = Record<string, unknown>;

/** The HTTP filters of every listener: the module by ECDS, then the router. */
function httpFilters(ads: ConfigSource): Json[] {
  return [
    { name: PLUGIN_NAME, config_discovery: { config_source: ads, type_urls: [WASM_TYPE] } },
    { name: "envoy.filters.http.router", typed_config: { "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router" } },
  ];
}

function tcpProxy(statPrefix: string, cluster: string): Json {
  return {
    name: "envoy.filters.network.tcp_proxy",
    typed_config: { "@type": "type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy", stat_prefix: statPrefix, cluster },
  };
}

/** What the inbound side enforces before the app: per-port mutual TLS, then JWT authentication and authorization. */
interface InboundSecurity {
  /** The mode of a bound container port; `undefined` = the workload's own (the passthrough). */
  readonly mtls: (port: number | undefined) => ServerMtlsMode;
  /** jwt_authn and the RBAC filters (DENY first), in order, before the module. */
  readonly httpFilters: readonly Json[];
  readonly authorizationPolicies: readonly MeshResource<"AuthorizationPolicy">[];
}

function inboundChain(port: number, security: InboundSecurity, ads: ConfigSource): Json[] {
  const hcm = {
    name: "envoy.filters.network.http_connection_manager",
    typed_config: {
      "@type": HCM_TYPE,
      stat_prefix: `inbound_0.0.0.0_${port}`,
      // Upstream's BASE path normalization: policies see the path the app gets.
      normalize_path: true,
      route_config: {
        name: `inbound|${port}||`,
        virtual_hosts: [{ name: `inbound|http|${port}`, domains: ["*"], routes: [{ match: { prefix: "/" }, route: { cluster: `inbound|${port}||`, timeout: "0s" } }] }],
      },
      http_filters: [...security.httpFilters, ...httpFilters(ads)],
    },
  };
  return mtlsChains(security.mtls(port), { destination_port: port }, (tls) => ({ name: `inbound|${port}||${tls ? "mtls" : ""}`, filters: [hcm] }), HTTP_ALPN);
}

function inboundListener(ports: readonly number[], security: InboundSecurity, ads: ConfigSource): Json {
  // Traffic to other ports is passed through under the workload's mode and the policies a TCP connection can be held to.
  const passthroughFilters = [...networkRbacFilters(security.authorizationPolicies, INBOUND_PASSTHROUGH), tcpProxy(INBOUND_PASSTHROUGH, INBOUND_PASSTHROUGH)];
  const passthrough = mtlsChains(security.mtls(undefined), {}, (tls) => ({ name: `inbound-passthrough${tls ? "-mtls" : ""}`, filters: passthroughFilters }), []);
  const { filter_chain_match: _, ...fallback } = passthrough.pop()!;
  return {
    name: "virtualInbound",
    address: address("0.0.0.0", INBOUND_PORT),
    traffic_direction: "INBOUND",
    listener_filters: [
      { name: "envoy.filters.listener.original_dst", typed_config: { "@type": "type.googleapis.com/envoy.extensions.filters.listener.original_dst.v3.OriginalDst" } },
      TLS_INSPECTOR,
    ],
    filter_chains: [...ports.flatMap((port) => inboundChain(port, security, ads)), ...passthrough],
    default_filter_chain: fallback,
  };
}

function outboundListener(port: number, ads: ConfigSource, acceptHttp10: boolean): Json {
  return {
    name: `0.0.0.0_${port}`,
    address: address("0.0.0.0", port),
    bind_to_port: false,
    traffic_direction: "OUTBOUND",
    filter_chains: [
      {
        filters: [
          {
            name: "envoy.filters.network.http_connection_manager",
            typed_config: {
              "@type": HCM_TYPE,
              stat_prefix: `outbound_0.0.0.0_${port}`,
              rds: { route_config_name: String(port), config_source: ads },
              http_filters: httpFilters(ads),
              ...(acceptHttp10 ? { http_protocol_options: { accept_http_10: true } } : {}),
            },
          },
        ],
      },
    ],
  };
}

function virtualOutbound(): Json {
  return {
    name: "virtualOutbound",
    address: address("0.0.0.0", OUTBOUND_PORT),
    use_original_dst: true,
    traffic_direction: "OUTBOUND",
    filter_chains: [{ name: "virtualOutbound-catchall-tcp", filters: [tcpProxy(PASSTHROUGH, PASSTHROUGH)] }],
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
  return { name, type: "STATIC", connect_timeout: "10s", load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: address(ip, port) } }] }] } };
}

function passthrough(name: string): Json {
  return { name, type: "ORIGINAL_DST", connect_timeout: "10s", lb_policy: "CLUSTER_PROVIDED" };
}

/** The workload a node names: its pod, else the Deployment its pod name was made from. */
export function findWorkload(registry: MeshRegistry, who: NodeIdentity): MeshWorkload | undefined {
  const inNamespace = registry.workloads.filter((w) => w.namespace === who.namespace);
  return inNamespace.find((w) => w.kind === "Pod" && w.name === who.pod) ?? inNamespace.find((w) => w.kind === "Deployment" && who.pod.startsWith(`${w.name}-`));
}

/** The HTTP container ports Services of the workload target, sorted. */
function inboundPorts(registry: MeshRegistry, namespace: string, labels: Labels | undefined, workload: MeshWorkload | undefined): number[] {
  if (!labels) return [];
  const out = new Set<number>();
  for (const s of servicesOfWorkload(registry, { namespace, labels })) {
    for (const p of s.ports) {
      const n = targetContainerPort(p, workload);
      if (n !== undefined && isHttp(p.protocol)) out.add(n);
    }
  }
  return [...out].sort((a, b) => a - b);
}

function routeConfiguration(port: number, services: readonly XdsService[], mesh: EnvoyMesh, namespace: string, labels: Labels | undefined): Json {
  const used = new Set<string>();
  const virtualHosts: Json[] = [];
  const portsOf = (host: string) => mesh.services.filter((s) => s.host === host).map((s) => s.port);
  for (const s of services) {
    const addresses = mesh.registry.services.find((m) => m.fqdn === s.host)?.addresses ?? [];
    // A name two services answer on goes to the first (Envoy refuses a domain twice in one route configuration).
    const domains = serviceDomains(s.host, namespace, addresses).flatMap((d) => [d, `${d}:${port}`]).filter((d) => !used.has(d));
    if (domains.length === 0) continue;
    for (const d of domains) used.add(d);
    const routes = virtualServiceRoutes(s.host, { virtualServices: mesh.catalog.byKind.VirtualService, clientNamespace: namespace, clientLabels: labels, port, portsOf }) ?? [
      { name: "default", match: { prefix: "/" }, route: { cluster: clusterName(s.host, port), timeout: "0s" } },
    ];
    virtualHosts.push({ name: `${s.host}:${port}`, domains, routes });
  }
  // Unknown hosts go through, unless a ServiceEntry already answers on every name.
  if (!used.has("*") && mesh.serving.fallthroughRoute) virtualHosts.push({ name: "allow_any", domains: ["*"], routes: [{ name: "allow_any", match: { prefix: "/" }, route: { cluster: PASSTHROUGH, timeout: "0s" } }] });
  return { name: String(port), virtual_hosts: virtualHosts, validate_clusters: false };
}

/** The policies of the mesh model that select the workload, as Envoy's native filters and filter chains. */
function inboundSecurity(mesh: EnvoyMesh, workload: { namespace: string; labels: Labels }): InboundSecurity & { clusters: Json[] } {
  const byKind = mesh.catalog.byKind;
  const root = mesh.rootNamespace;
  const authorizationPolicies = authorizationPoliciesFor(byKind.AuthorizationPolicy, workload, root);
  const jwt = jwtAuthn(jwtRulesFor(byKind.RequestAuthentication, workload, root));
  return {
    // The ports served here are the ones Services bind, so port-level settings apply to each of them.
    mtls: (port) => effectiveMtls(byKind.PeerAuthentication, workload, root, port, port === undefined ? undefined : true).mode,
    httpFilters: [...(jwt ? [jwt.filter] : []), ...httpRbacFilters(authorizationPolicies)],
    authorizationPolicies,
    clusters: jwt?.clusters ?? [],
  };
}

/** The proxy's view of the mesh: who it is (namespace, labels, workload) and what it is served. */
export function envoyResources(mesh: EnvoyMesh, who: NodeIdentity): ResourceSet {
  const workload = findWorkload(mesh.registry, who);
  const namespace = who.namespace;
  const labels = who.labels ?? workload?.labels;
  const set: ResourceSet = new Map([[LISTENER, new Map()], [ROUTE, new Map()], [CLUSTER, new Map()], [ENDPOINT, new Map(mesh.endpoints)], [EXTENSION_CONFIG, new Map()]]);
  const add = (type: string, typeName: string, name: string, json: Json) => set.get(type)!.set(name, { name, any: packJson(typeName, json) });
  const listener = (json: Json) => add(LISTENER, "envoy.config.listener.v3.Listener", json.name as string, json);
  const cluster = (json: Json) => add(CLUSTER, "envoy.config.cluster.v3.Cluster", json.name as string, withDnsTtl(json, mesh.serving));

  const inbound = inboundPorts(mesh.registry, namespace, labels, workload);
  const security = inboundSecurity(mesh, { namespace, labels: labels ?? {} });
  const ads = adsSource(mesh.serving);
  listener(inboundListener(inbound, security, ads));
  for (const c of security.clusters) cluster(c);
  for (const port of inbound) cluster(staticCluster(`inbound|${port}||`, "127.0.0.1", port));

  listener(virtualOutbound());
  const blocked = (s: XdsService) => mesh.serving.blockHttpOn443 && s.port === HTTPS_PORT;
  const http = mesh.services.filter((s) => isHttp(s.protocol) && !blocked(s));
  for (const port of [...new Set(http.map((s) => s.port))].sort((a, b) => a - b)) {
    listener(outboundListener(port, ads, mesh.serving.acceptHttp10));
    add(ROUTE, "envoy.config.route.v3.RouteConfiguration", String(port), routeConfiguration(port, http.filter((s) => s.port === port), mesh, namespace, labels));
  }
  for (const pod of headlessPodListeners(mesh, mesh.serving, who.ip, isHttp)) listener(podListener(pod));
  for (const c of outboundClusters(mesh, { type: who.type, namespace, labels }, mesh.serving, ads)) cluster(c);
  cluster(hubCluster());
  cluster(passthrough(PASSTHROUGH));
  cluster(passthrough(INBOUND_PASSTHROUGH));
  cluster({ name: BLACKHOLE, type: "STATIC", connect_timeout: "10s" });
  if ("remote" in mesh.module) cluster(remoteHttpCluster(MODULE_CLUSTER, mesh.module.remote.uri));

  add(EXTENSION_CONFIG, "envoy.config.core.v3.TypedExtensionConfig", PLUGIN_NAME, { name: PLUGIN_NAME, typed_config: wasmFilterConfig(mesh.pluginConfig, mesh.module) });
  return set;
}
