import { packAny } from "../wire/envoy_protos.ts";
import { clusterName } from "../mesh/cluster_names.ts";
import { type ServiceEndpoint, TLS_MODE_LABEL } from "../mesh/endpoints.ts";
import { labelsMatch } from "../mesh/labels.ts";
import { TLS_MODE_KEY, TRANSPORT_SOCKET_MATCH } from "./envoy_upstream_tls.ts";
import { CLUSTER, ENDPOINT, LISTENER, ROUTE } from "./type_urls.ts";
import type { Resource, ResourceSet } from "./resource_set.ts";
import { VersionMemo } from "./encoded_json.ts";

/**
 * xDS resources for gRPC's proxyless clients (`xds:///<host>:<port>`), built
 * from the services and endpoints the mesh model knows. Pure.
 *
 * Per service host H and port P: an API listener `H:P` (HttpConnectionManager
 * with RDS over ADS and the router filter last), a RouteConfiguration `H:P`,
 * an EDS cluster `outbound|P||H` (and `outbound|P|<subset>|H` per subset) and
 * its ClusterLoadAssignment, every locality with a load-balancing weight:
 * gRPC drops a locality without one. An endpoint labelled
 * `security.mesh.io/tlsMode` carries it as upstream's metadata
 * (`envoy.transport_socket_match`), which Envoy's auto mutual TLS matches
 * (host/discovery/envoy_upstream_tls.ts); gRPC ignores it.
 */

/** A ServiceEndpoint of the mesh model (host/mesh/endpoints.ts) as the xDS builders take it: a caller may leave out what it does not know, and add a locality. */
export interface XdsEndpoint
  extends Pick<ServiceEndpoint, "address" | "port">,
    Partial<Pick<ServiceEndpoint, "labels" | "serviceAccount" | "weight" | "sidecar">> {
  readonly locality?: { readonly region?: string; readonly zone?: string; readonly subZone?: string };
}

export interface XdsSubset {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

export interface XdsService {
  /** The service's host name (FQDN, or a ServiceEntry host as written). */
  readonly host: string;
  readonly port: number;
  /** `http`, `grpc`, … as the mesh model infers it; undefined when the port does not say. */
  readonly protocol?: string;
  readonly endpoints: readonly XdsEndpoint[];
  readonly subsets?: readonly XdsSubset[];
}

const HCM = "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";
const ROUTER = "envoy.extensions.filters.http.router.v3.Router";

function apiListener(name: string): Resource {
  const hcm = packAny(HCM, {
    rds: { route_config_name: name, config_source: { ads: {}, resource_api_version: "V3" } },
    http_filters: [{ name: "envoy.filters.http.router", typed_config: packAny(ROUTER, {}) }],
  });
  return { name, any: packAny("envoy.config.listener.v3.Listener", { name, api_listener: { api_listener: hcm } }) };
}

function routeConfiguration(name: string, cluster: string): Resource {
  return {
    name,
    any: packAny("envoy.config.route.v3.RouteConfiguration", {
      name,
      virtual_hosts: [{ name, domains: [name], routes: [{ match: { prefix: "" }, route: { cluster } }] }],
    }),
  };
}

function edsCluster(name: string): Resource {
  return {
    name,
    any: packAny("envoy.config.cluster.v3.Cluster", {
      name,
      type: "EDS",
      lb_policy: "ROUND_ROBIN",
      eds_cluster_config: { service_name: name, eds_config: { ads: {}, resource_api_version: "V3" } },
    }),
  };
}

function loadAssignment(name: string, endpoints: readonly XdsEndpoint[]): Resource {
  // One locality group per distinct locality, weighted by its endpoints.
  const groups = new Map<string, XdsEndpoint[]>();
  for (const e of endpoints) {
    const key = JSON.stringify([e.locality?.region ?? "", e.locality?.zone ?? "", e.locality?.subZone ?? ""]);
    groups.set(key, [...(groups.get(key) ?? []), e]);
  }
  const localities = [...groups.values()].map((group) => ({
    locality: { region: group[0].locality?.region ?? "", zone: group[0].locality?.zone ?? "", sub_zone: group[0].locality?.subZone ?? "" },
    load_balancing_weight: { value: group.reduce((sum, e) => sum + (e.weight ?? 1), 0) },
    lb_endpoints: group.map((e) => ({
      endpoint: { address: { socket_address: { address: e.address, port_value: e.port } } },
      health_status: "HEALTHY",
      load_balancing_weight: { value: e.weight ?? 1 },
      ...tlsModeMetadata(e),
    })),
  }));
  return { name, any: packAny("envoy.config.endpoint.v3.ClusterLoadAssignment", { cluster_name: name, endpoints: localities }) };
}

/** An endpoint's `tlsMode` label as Envoy endpoint metadata (protobufjs object form of the Struct); none for `disabled` or no label. */
function tlsModeMetadata(e: XdsEndpoint): Record<string, unknown> {
  const mode = e.labels?.[TLS_MODE_LABEL];
  if (mode === undefined || mode === "disabled") return {};
  return { metadata: { filter_metadata: { [TRANSPORT_SOCKET_MATCH]: { fields: { [TLS_MODE_KEY]: { stringValue: mode } } } } } };
}

/** The load assignments of the subsets of these service ports (each with the subsets one client sees) that `known` does not hold yet. */
export function subsetLoadAssignments(services: readonly XdsService[], known: ReadonlyMap<string, Resource>): Resource[] {
  return services.flatMap((s) =>
    (s.subsets ?? []).flatMap((subset) => {
      const name = clusterName(s.host, s.port, subset.name);
      return known.has(name)
        ? []
        : [
            loadAssignment(
              name,
              s.endpoints.filter((e) => labelsMatch(subset.labels, e.labels)),
            ),
          ];
    }),
  );
}

/**
 * The resources a proxyless client may ask for, for every service port.
 * `memo` (handed on from version to version) keeps each resource made from
 * the same inputs as the version before's: one service's endpoints moved,
 * only its load assignment is encoded again.
 */
export function proxylessResources(services: readonly XdsService[], memo: VersionMemo<Resource> = new VersionMemo()): ResourceSet {
  const set: ResourceSet = new Map([
    [LISTENER, new Map()],
    [ROUTE, new Map()],
    [CLUSTER, new Map()],
    [ENDPOINT, new Map()],
  ]);
  const add = (type: string, r: Resource) => set.get(type)!.set(r.name, r);
  const assignment = (name: string, endpoints: readonly XdsEndpoint[]) =>
    memo.get(`E\0${name}\0${JSON.stringify(endpoints)}`, () => loadAssignment(name, endpoints));
  for (const s of services) {
    const name = `${s.host}:${s.port}`;
    const cluster = clusterName(s.host, s.port);
    add(
      LISTENER,
      memo.get(`L\0${name}`, () => apiListener(name)),
    );
    add(
      ROUTE,
      memo.get(`R\0${name}\0${cluster}`, () => routeConfiguration(name, cluster)),
    );
    add(
      CLUSTER,
      memo.get(`C\0${cluster}`, () => edsCluster(cluster)),
    );
    add(ENDPOINT, assignment(cluster, s.endpoints));
    for (const subset of s.subsets ?? []) {
      const subsetCluster = clusterName(s.host, s.port, subset.name);
      add(
        CLUSTER,
        memo.get(`C\0${subsetCluster}`, () => edsCluster(subsetCluster)),
      );
      add(
        ENDPOINT,
        assignment(
          subsetCluster,
          s.endpoints.filter((e) => labelsMatch(subset.labels, e.labels)),
        ),
      );
    }
  }
  return set;
}
