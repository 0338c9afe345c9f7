import type { Catalog } from "../config/catalog.ts";
import { type Labels, labelsMatch } from "../mesh/labels.ts";
import type { MeshRegistry, MeshService } from "../mesh/registry.ts";
import { gatewayDestinationHosts, gatewaysSelecting } from "../mesh/routing.ts";
import { findDestinationRule } from "../mesh/destination_rules.ts";
import { endpointHasSidecar, TLS_MODE_LABEL } from "../mesh/endpoints.ts";
import { autoMtlsFacts, clientTls } from "../security/mtls/destination_rule.ts";
import { spiffeId } from "../security/workload.ts";
import { address } from "./envoy_clusters.ts";
import { type UpstreamTls, transportSocketMetadata, upstreamTls } from "./envoy_upstream_tls.ts";
import { clusterName } from "../mesh/cluster_names.ts";
import type { XdsEndpoint, XdsService, XdsSubset } from "./proxyless.ts";

/**
 * The outbound clusters Envoy is served, one per service port and subset,
 * typed by how the service's clients find its instances, as upstream's:
 *
 * - `EDS`: a Service with a cluster IP, a ServiceEntry `resolution: STATIC`
 *   (the load assignments proxyless clients get too);
 * - `ORIGINAL_DST`: a headless Service (`clusterIP: None`; its clients
 *   resolve the pods themselves and the connection's own destination is
 *   kept), unless DISCO_ENABLE_EDS_FOR_HEADLESS_SERVICES serves its
 *   endpoints over EDS; a ServiceEntry `resolution: NONE`;
 * - `STRICT_DNS` for a ServiceEntry `resolution: DNS` (every endpoint
 *   address, else every host, resolved and all answers used) and
 *   `LOGICAL_DNS` for `DNS_ROUND_ROBIN` (one name, one answer at a time),
 *   their endpoints inline.
 *
 * Each cluster originates the TLS the mesh model decides for the client's
 * namespace (a DestinationRule's `tls`, else auto mutual TLS:
 * host/discovery/envoy_upstream_tls.ts), as the Node sidecar does.
 *
 * A gateway (node type `router`) is served, under
 * DISCO_FILTER_GATEWAY_CLUSTER_CONFIG, only the clusters of the hosts the
 * VirtualServices of its Gateways route or mirror to
 * (DISCO_SCOPE_GATEWAY_TO_NAMESPACE: Gateways of its namespace only). Pure.
 */

type Json = Record<string, unknown>;

/** What spec 2's cluster-side variables change in what Envoy is served. */
export interface ClusterServing {
  /** DISCO_ENABLE_EDS_FOR_HEADLESS_SERVICES (false): headless Services get EDS clusters instead of ORIGINAL_DST. */
  readonly edsForHeadless: boolean;
  /** DISCO_ENABLE_HEADLESS_SERVICE_POD_LISTENERS (true): an outbound listener `<pod ip>_<port>` per endpoint of a headless Service's TCP ports. */
  readonly headlessPodListeners: boolean;
  /** DISCO_FILTER_GATEWAY_CLUSTER_CONFIG (false): gateways get only the clusters their Gateways' VirtualServices send to. */
  readonly filterGatewayClusters: boolean;
  /** DISCO_SCOPE_GATEWAY_TO_NAMESPACE (false): a gateway workload is selected by Gateways of its own namespace only. */
  readonly scopeGatewayToNamespace: boolean;
  /** DISCO_RESPECT_DNS_TTL (true): DNS clusters re-resolve when the answer's TTL ends (`respect_dns_ttl`). */
  readonly respectDnsTtl: boolean;
}

/** Spec 2's defaults. */
export const DEFAULT_CLUSTER_SERVING: ClusterServing = {
  edsForHeadless: false,
  headlessPodListeners: true,
  filterGatewayClusters: false,
  scopeGatewayToNamespace: false,
  respectDnsTtl: true,
};

export type ClusterDiscovery = "EDS" | "ORIGINAL_DST" | "STRICT_DNS" | "LOGICAL_DNS";

/** How Envoy finds the instances of a service (undefined: one the registry does not list, served over EDS). */
export function clusterDiscovery(service: MeshService | undefined, serving: Pick<ClusterServing, "edsForHeadless">): ClusterDiscovery {
  if (service?.headless) return serving.edsForHeadless ? "EDS" : "ORIGINAL_DST";
  const entry = service?.resource?.kind === "ServiceEntry" ? service.resource : undefined;
  switch (entry?.spec.resolution) {
    case "NONE":
      return "ORIGINAL_DST";
    case "DNS":
      return "STRICT_DNS";
    case "DNS_ROUND_ROBIN":
      return "LOGICAL_DNS";
    default:
      return "EDS";
  }
}

const H2_PROTOCOLS: ReadonlySet<string> = new Set(["http2", "grpc"]);
const DNS_TYPES: ReadonlySet<unknown> = new Set(["STRICT_DNS", "LOGICAL_DNS"]);

/** `respect_dns_ttl` on a DNS cluster when DISCO_RESPECT_DNS_TTL says so; other clusters as they are. */
export function withDnsTtl(cluster: Json, serving: Pick<ClusterServing, "respectDnsTtl">): Json {
  return serving.respectDnsTtl && DNS_TYPES.has(cluster.type) ? { ...cluster, respect_dns_ttl: true } : cluster;
}

/** A DNS cluster's endpoints inline: one locality weighted by its endpoints (LOGICAL_DNS takes one endpoint only, as Envoy requires). */
function dnsLoadAssignment(name: string, type: ClusterDiscovery, endpoints: readonly XdsEndpoint[]): Json {
  const used = type === "LOGICAL_DNS" ? endpoints.slice(0, 1) : endpoints;
  if (used.length === 0) return { cluster_name: name };
  const weight = (e: XdsEndpoint) => e.weight ?? 1;
  return {
    cluster_name: name,
    endpoints: [
      {
        load_balancing_weight: used.reduce((sum, e) => sum + weight(e), 0),
        lb_endpoints: used.map((e) => ({
          endpoint: { address: address(e.address, e.port) },
          load_balancing_weight: weight(e),
          ...transportSocketMetadata(e.labels?.[TLS_MODE_LABEL]),
        })),
      },
    ],
  };
}

/** A ServiceEntry `DNS` without endpoints resolves its host on the port itself (upstream's rule). */
function dnsEndpoints(service: XdsService): readonly XdsEndpoint[] {
  return service.endpoints.length > 0 ? service.endpoints : [{ address: service.host, port: service.port }];
}

/** Upstream's HttpProtocolOptions of a cluster: HTTP/2 for grpc and http2 ports, auto SNI and SAN validation when its TLS asks; none when neither. */
function httpProtocolOptions(http2: boolean, tls: UpstreamTls | undefined): Json {
  if (!http2 && !tls?.httpOptions) return {};
  const options = {
    "@type": "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
    ...(tls?.httpOptions ? { upstream_http_protocol_options: tls.httpOptions } : {}),
    explicit_http_config: http2 ? { http2_protocol_options: {} } : { http_protocol_options: {} },
  };
  return { typed_extension_protocol_options: { "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": options } };
}

function outboundCluster(name: string, service: XdsService, type: ClusterDiscovery, ads: Json, tls: UpstreamTls | undefined, subset?: Labels): Json {
  const shape: Json =
    type === "EDS"
      ? { type, lb_policy: "ROUND_ROBIN", eds_cluster_config: { service_name: name, eds_config: ads } }
      : type === "ORIGINAL_DST"
        ? { type, lb_policy: "CLUSTER_PROVIDED" }
        : {
            type,
            lb_policy: "ROUND_ROBIN",
            dns_lookup_family: "V4_ONLY",
            load_assignment: dnsLoadAssignment(
              name,
              type,
              dnsEndpoints(service).filter((e) => labelsMatch(subset, e.labels)),
            ),
          };
  return {
    name,
    connect_timeout: "10s",
    ...shape,
    ...tls?.fields,
    ...httpProtocolOptions(isHttp2(service), tls),
  };
}

const isHttp2 = (service: XdsService) => service.protocol !== undefined && H2_PROTOCOLS.has(service.protocol);

/** What a proxy's outbound clusters depend on. */
export interface OutboundMesh {
  readonly registry: MeshRegistry;
  readonly catalog: Catalog;
  readonly services: readonly XdsService[];
  /** Where mesh-wide DestinationRules and PeerAuthentications live. */
  readonly rootNamespace: string;
  /** The SPIFFE trust domain of the destinations' identities (`--trust-domain`, the mesh config's `trustDomain`). */
  readonly trustDomain: string;
  /** Mesh config `enableAutoMtls` (true). */
  readonly enableAutoMtls: boolean;
}

/** Who asks: a gateway (node type `router`) may get fewer clusters than a sidecar. */
export interface OutboundClient {
  readonly type: string;
  readonly namespace: string;
  readonly labels?: Labels;
}

/**
 * The service ports a client is served clusters for (all of them, or a
 * gateway's own destinations under DISCO_FILTER_GATEWAY_CLUSTER_CONFIG), each
 * with the subsets of the DestinationRule the client's namespace sees, as
 * upstream builds subset clusters per proxy.
 */
export function servedServices(mesh: OutboundMesh, client: OutboundClient, serving: ClusterServing): XdsService[] {
  let services = mesh.services;
  if (client.type === "router" && serving.filterGatewayClusters) {
    const gateways = gatewaysSelecting(
      mesh.catalog.byKind.Gateway,
      { namespace: client.namespace, labels: client.labels ?? {} },
      serving.scopeGatewayToNamespace,
    );
    const hosts = gatewayDestinationHosts(mesh.catalog.byKind.VirtualService, gateways);
    services = services.filter((s) => hosts.has(s.host));
  }
  const rules = mesh.catalog.byKind.DestinationRule;
  return services.map((s) => {
    const rule = findDestinationRule(rules, s.host, client.namespace, mesh.rootNamespace);
    return { ...s, subsets: rule?.spec.subsets.map((x) => ({ name: x.name, labels: x.labels })) ?? [] };
  });
}

/** The registry's services by host (ServiceEntry hosts as written). */
function servicesByHost(registry: MeshRegistry): Map<string, MeshService> {
  const out = new Map<string, MeshService>();
  for (const s of registry.services) if (!out.has(s.fqdn)) out.set(s.fqdn, s);
  return out;
}

/**
 * The identities a client checks a destination's certificate against, as
 * upstream collects them: a ServiceEntry's `subjectAltNames`, and the SPIFFE
 * identity of each endpoint's service account (in the service's namespace).
 */
function destinationIdentities(service: XdsService, meshService: MeshService | undefined, trustDomain: string): string[] {
  const entry = meshService?.resource?.kind === "ServiceEntry" ? meshService.resource : undefined;
  const namespace = meshService?.namespace;
  const accounts =
    namespace === undefined
      ? []
      : service.endpoints.flatMap((e) => (e.serviceAccount ? [spiffeId({ namespace, serviceAccount: e.serviceAccount }, trustDomain)] : []));
  return [...new Set([...(entry?.spec.subjectAltNames ?? []), ...accounts])].sort();
}

/** The TLS one outbound cluster originates for the client: the mesh model's decision (the Node sidecar's), as Envoy's sockets. */
function clusterTls(
  mesh: OutboundMesh,
  client: OutboundClient,
  service: XdsService,
  meshService: MeshService | undefined,
  type: ClusterDiscovery,
  ads: Json,
  subset?: XdsSubset,
): UpstreamTls | undefined {
  const originalDst = type === "ORIGINAL_DST";
  // Upstream's passthrough resolution (a headless Service, a ServiceEntry NONE), whatever the cluster's type.
  const passthrough = Boolean(meshService?.headless) || (meshService?.resource?.kind === "ServiceEntry" && meshService.resource.spec.resolution === "NONE");
  const endpoints = subset ? service.endpoints.filter((e) => labelsMatch(subset.labels, e.labels)) : service.endpoints;
  const decision = clientTls({
    host: service.host,
    servicePort: service.port,
    clientNamespace: client.namespace,
    destinationRules: mesh.catalog.byKind.DestinationRule,
    // Envoy tells endpoints apart by their metadata; a passthrough service has a sidecar when every known instance does (upstream's inference).
    destinationHasSidecar: passthrough ? endpoints.length > 0 && endpoints.every((e) => endpointHasSidecar(e.labels)) : true,
    ...autoMtlsFacts(mesh.registry, mesh.catalog.byKind.PeerAuthentication, service.host, mesh.rootNamespace),
    enableAutoMtls: mesh.enableAutoMtls,
    rootNamespace: mesh.rootNamespace,
    ...(subset ? { subset: subset.name } : {}),
  });
  return upstreamTls(decision, {
    host: service.host,
    port: service.port,
    ...(subset ? { subset: subset.name } : {}),
    http2: isHttp2(service),
    originalDst,
    identities: destinationIdentities(service, meshService, mesh.trustDomain),
    serviceEntry: meshService?.source === "ServiceEntry",
    gateway: client.type === "router",
    ads,
  });
}

/** `outbound|<port>|<subset>|<host>` for every service port (and DestinationRule subset) the client is served (`servedServices`). */
export function outboundClusters(mesh: OutboundMesh, client: OutboundClient, services: readonly XdsService[], serving: ClusterServing, ads: Json): Json[] {
  const byHost = servicesByHost(mesh.registry);
  return services.flatMap((s) => {
    const meshService = byHost.get(s.host);
    const type = clusterDiscovery(meshService, serving);
    const cluster = (subset?: XdsSubset) =>
      outboundCluster(clusterName(s.host, s.port, subset?.name), s, type, ads, clusterTls(mesh, client, s, meshService, type, ads, subset), subset?.labels);
    return [cluster(), ...(s.subsets ?? []).map((subset) => cluster(subset))];
  });
}

/** An outbound listener of one pod of a headless service: its address and port, and the cluster its TCP traffic goes to. */
export interface PodListener {
  readonly name: string;
  readonly ip: string;
  readonly port: number;
  readonly cluster: string;
}

/**
 * Under DISCO_ENABLE_HEADLESS_SERVICE_POD_LISTENERS, upstream's listener per
 * endpoint of a headless Service's non-HTTP ports, `<pod ip>_<port>`: a
 * client connects to a pod's own address, which no `0.0.0.0_<port>`
 * listener knows (HTTP ports are routed by host on theirs). The proxy's own
 * address is left out (its inbound listener takes that traffic).
 */
export function headlessPodListeners(
  mesh: OutboundMesh,
  serving: ClusterServing,
  proxyIp: string,
  isHttp: (protocol: string | undefined) => boolean,
): PodListener[] {
  if (!serving.headlessPodListeners) return [];
  const byHost = servicesByHost(mesh.registry);
  const out = new Map<string, PodListener>();
  for (const s of mesh.services) {
    if (!byHost.get(s.host)?.headless || isHttp(s.protocol)) continue;
    for (const e of s.endpoints) {
      const name = `${e.address}_${s.port}`;
      if (e.address !== proxyIp && !out.has(name)) out.set(name, { name, ip: e.address, port: s.port, cluster: clusterName(s.host, s.port) });
    }
  }
  return [...out.values()];
}

/** Whether a proxy's address is an endpoint of a headless service (its view then differs from its peers': one pod listener fewer). */
export function isHeadlessEndpoint(registry: MeshRegistry, ip: string): boolean {
  return ip !== "" && registry.services.some((s) => s.headless && s.instances?.some((i) => i.address === ip));
}
