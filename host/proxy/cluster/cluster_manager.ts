import type { Catalog, Resource } from "../../config/catalog.ts";
import type { ConnectionPool, OutlierDetection } from "../../config/resources/networking.ts";
import { type EndpointFlag, endpointFlagServices } from "../../hub/clusters.ts";
import { type ServiceEndpoint, endpointsOf as endpointsOfPort, serviceEndpoints } from "../../mesh/endpoints.ts";
import { clusterName } from "../../mesh/cluster_names.ts";
import { destinationFor } from "../../mesh/destination_rules.ts";
import { serviceNamespace } from "../../mesh/hosts.ts";
import { type MeshRegistry, buildRegistry } from "../../mesh/registry.ts";
import { type ClientTls, autoMtlsFacts, clientTls } from "../../security/mtls/destination_rule.ts";
import { spiffeId } from "../../security/workload.ts";
import type { LocalReply } from "../../wasm/abi_types.ts";
import type { MeshSettings } from "../mesh_config.ts";
import type { OutlierDetector } from "./outlier_detection.ts";

/**
 * Envoy's cluster manager for one applied configuration: the upstream
 * clusters (`outbound|port|subset|host`) of the registry the sidecar is
 * served, their endpoints, which endpoint a request goes to (load
 * balancing, endpoints ejected by outlier detection left out) and with which
 * client TLS (DestinationRule or auto mutual TLS) and DestinationRule limits.
 * The router asks it; it asks nobody above it.
 */

/**
 * The upstream cluster a forwarded request joins, which endpoint of it, and
 * the DestinationRule limits in force: what the data path enforces
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

/** Where a request to an endpoint connects, and how; or the local reply when the cluster's TLS cannot be originated here. */
/**
 * An endpoint of a cluster as the router sends to it: the service host and
 * service port it serves (the cluster), where it listens, whether a sidecar
 * runs in front of it (auto mutual TLS), the identity it must prove, its labels.
 */
export type UpstreamEndpoint = Omit<EndpointFlag, "name">;

export type EndpointConnection =
  | { kind: "endpoint"; host: string; port: number; mtls: ClientTls | null; endpoint: UpstreamEndpoint; upstream: UpstreamCluster }
  | { kind: "reply"; reply: LocalReply };

/** What the cluster manager reads of the sidecar's identity. */
export interface ClusterClient {
  /** The client's namespace: DestinationRule visibility and short host names are read in it. */
  readonly namespace: string;
}

export class ClusterManager {
  /** Services, workloads and endpoints: the configuration's documents, plus the `--endpoint` flags' hosts and instances. */
  readonly registry: MeshRegistry;
  /** Round robin: the next endpoint index per cluster. */
  private readonly next = new Map<string, number>();

  constructor(
    private readonly catalog: Catalog,
    private readonly mesh: MeshSettings,
    private readonly client: ClusterClient,
    flags: ReadonlyMap<string, EndpointFlag>,
    private readonly outliers: Pick<OutlierDetector, "ejected"> = { ejected: () => false },
  ) {
    this.registry = buildRegistry(catalog.byKind, { domain: catalog.domain, services: endpointFlagServices(flags.values()) });
  }

  /**
   * The next endpoint of a service port (round robin, as Envoy's default load
   * balancer), leaving out those outlier detection ejected; with a subset,
   * among those whose labels the DestinationRule subset selects (none when
   * the subset is not defined).
   */
  pick(fqdn: string, port: number, subset?: string): UpstreamEndpoint | undefined {
    const cluster = clusterName(fqdn, port, subset);
    const candidates = this.endpointsOf(fqdn, port, subset).filter((e) => !this.outliers.ejected(cluster, endpointKey(e)));
    if (candidates.length <= 1) return candidates[0];
    const i = (this.next.get(cluster) ?? 0) % candidates.length;
    this.next.set(cluster, i + 1);
    return candidates[i];
  }

  /** Every endpoint of a service port (and subset), ejected or not; none when the subset is not defined. */
  endpointsOf(fqdn: string, port: number, subset?: string): UpstreamEndpoint[] {
    let labels: Readonly<Record<string, string>> | undefined;
    if (subset !== undefined) {
      const applied = destinationFor(this.catalog.byKind.DestinationRule, fqdn, port, subset, this.client.namespace, this.mesh.rootNamespace);
      if (!applied.subset) return [];
      labels = applied.subset.labels;
    }
    return serviceEndpoints(this.registry, fqdn, port, labels).map((e) => upstreamEndpoint(fqdn, port, e));
  }

  /**
   * The endpoint listening on `address:port` (a pod IP called directly),
   * as the first service port it serves; undefined when no service of the
   * registry has it.
   */
  endpointAt(address: string, port: number): UpstreamEndpoint | undefined {
    for (const s of this.registry.services) {
      for (const p of s.ports) {
        const e = endpointsOfPort(s, p).find((x) => x.address === address && x.port === port);
        if (e) return upstreamEndpoint(s.fqdn, p.port, e);
      }
    }
    return undefined;
  }

  /** The port of a service named by its FQDN: the one matching `preferred`, else its only port, else `preferred` or 80. */
  servicePort(fqdn: string, preferred?: number): number {
    const svc = this.registry.services.find((s) => s.fqdn === fqdn);
    if (svc && preferred !== undefined && svc.ports.some((p) => p.port === preferred)) return preferred;
    if (svc && svc.ports.length === 1) return svc.ports[0].port;
    return preferred ?? 80;
  }

  /** How a request reaches the endpoint: the client TLS the DestinationRule or auto mutual TLS decides, and the cluster's limits. */
  connect(ep: UpstreamEndpoint, subset?: string): EndpointConnection {
    const k = this.catalog.byKind;
    const tls = clientTls({
      host: ep.host,
      servicePort: ep.servicePort,
      clientNamespace: this.client.namespace,
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
      };
    }
    const policy = destinationFor(k.DestinationRule, ep.host, ep.servicePort, subset, this.client.namespace, this.mesh.rootNamespace).trafficPolicy;
    const upstream: UpstreamCluster = {
      cluster: clusterName(ep.host, ep.servicePort, subset),
      endpoint: endpointKey(ep),
      size: this.endpointsOf(ep.host, ep.servicePort, subset).length,
      connectionPool: policy?.connectionPool,
      outlierDetection: policy?.outlierDetection,
    };
    return { kind: "endpoint", host: ep.address.host, port: ep.address.port, mtls: tls.mode === "MESH_MUTUAL" ? tls : null, endpoint: ep, upstream };
  }

  /** The SPIFFE identity an endpoint must present, when `sa=` names one. */
  expectedIdentity(ep: UpstreamEndpoint | null): string | undefined {
    const ns = ep ? serviceNamespace(ep.host) : undefined;
    return ep?.serviceAccount && ns ? spiffeId({ namespace: ns, serviceAccount: ep.serviceAccount }, this.mesh.trustDomain) : undefined;
  }
}

/** An endpoint's address as outlier detection keys it. */
export function endpointKey(ep: Pick<UpstreamEndpoint, "address">): string {
  return `${ep.address.host}:${ep.address.port}`;
}

/** Where a ServiceEntry host is reached: its first STATIC endpoint (port by the port's name), else the host itself (DNS). */
export function entryTarget(entry: Resource<"ServiceEntry">, port: number): { host: string; port: number } {
  const p = entry.spec.ports.find((x) => x.number === port);
  const ep = entry.spec.endpoints[0];
  if (entry.spec.resolution === "STATIC" && ep) return { host: ep.address, port: (p && ep.ports[p.name]) ?? p?.targetPort ?? port };
  return { host: entry.spec.hosts[0], port: p?.targetPort ?? port };
}

function upstreamEndpoint(host: string, servicePort: number, e: ServiceEndpoint): UpstreamEndpoint {
  return {
    host,
    servicePort,
    address: { host: e.address, port: e.port },
    sidecar: e.sidecar,
    ...(e.serviceAccount ? { serviceAccount: e.serviceAccount } : {}),
    labels: e.labels,
  };
}
