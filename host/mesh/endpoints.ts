import type { MeshRegistry, MeshService, MeshServicePort } from "./registry.ts";
import { type Labels, labelsMatch } from "./labels.ts";

/**
 * The instances a service port is served by, as a proxy is told about them:
 * for a Service, its ready instances (Endpoints document, EndpointSlices, or
 * the Pods its selector matches: host/mesh/service_endpoints.ts), on the
 * instance port whose name is the service port's (the orchestrator's rule;
 * both unnamed for a single-port Service); for a ServiceEntry, its
 * `endpoints` (resolution STATIC or DNS), each on the port its `ports` map
 * gives for the port's name, else the port's `targetPort`, else the port
 * itself (upstream's rule).
 */

/**
 * Upstream's `security.istio.io/tlsMode` label, renamed: injection sets it to
 * `mesh` on every pod it gives a sidecar, and an endpoint carrying it tells a
 * client's auto mutual TLS that mutual TLS reaches it (any other value, or
 * none, means plain text).
 */
export const TLS_MODE_LABEL = "security.mesh.io/tlsMode";
export const MESH_TLS_MODE = "mesh";

/** Whether an endpoint's labels say a sidecar of the mesh runs in front of it. */
export function endpointHasSidecar(labels: Labels | undefined): boolean {
  return labels?.[TLS_MODE_LABEL] === MESH_TLS_MODE;
}

/**
 * One endpoint of a service port, as a client's proxy load-balances over
 * them: the one endpoint type of the mesh (disco-discovery's load
 * assignments, the Node sidecar's outbound routing).
 */
export interface ServiceEndpoint {
  readonly address: string;
  readonly port: number;
  readonly labels: Labels;
  readonly serviceAccount?: string;
  /** Upstream's endpoint weight; 1 when unset. */
  readonly weight: number;
  /** A sidecar of the mesh runs in front of it (endpointHasSidecar): auto mutual TLS reaches it. */
  readonly sidecar: boolean;
}

function endpoint(address: string, port: number, labels: Labels, serviceAccount: string | undefined, weight: number): ServiceEndpoint {
  return Object.freeze({ address, port, labels, serviceAccount, weight, sidecar: endpointHasSidecar(labels) });
}

/** What a service's endpoints are read from. */
export type EndpointSource = Pick<MeshService, "source" | "resource" | "instances">;

/**
 * The endpoints of one port of a service, optionally only those a subset's
 * labels select (a DestinationRule subset; empty labels select all).
 */
export function endpointsOf(service: EndpointSource, port: MeshServicePort, subsetLabels?: Labels): ServiceEndpoint[] {
  const all = allEndpointsOf(service, port);
  return subsetLabels === undefined ? all : all.filter((e) => labelsMatch(subsetLabels, e.labels));
}

function allEndpointsOf(service: EndpointSource, port: MeshServicePort): ServiceEndpoint[] {
  if (service.source !== "ServiceEntry") {
    return (service.instances ?? []).flatMap((i) => {
      const p = i.ports.find((x) => x.name === port.name);
      return p ? [endpoint(i.address, p.port, i.labels, i.serviceAccount, 1)] : [];
    });
  }
  const entry = service.resource;
  if (entry?.kind !== "ServiceEntry") return [];
  const spec = entry.spec;
  if (spec.resolution !== "STATIC" && spec.resolution !== "DNS" && spec.resolution !== "DNS_ROUND_ROBIN") return [];
  const fallback = typeof port.targetPort === "number" ? port.targetPort : port.port;
  return spec.endpoints.map((e) =>
    endpoint(e.address, (port.name !== undefined ? e.ports[port.name] : undefined) ?? fallback, e.labels, e.serviceAccount, e.weight ?? 1),
  );
}

/**
 * The registry's answer for outbound routing: the endpoints of service port
 * `port` of the service whose host is `host` (its FQDN, or a ServiceEntry
 * host; host/mesh/registry.ts `resolveAuthority` turns any host form a
 * client writes into it), optionally of one subset. Empty when the registry
 * has no such service port.
 */
export function serviceEndpoints(registry: Pick<MeshRegistry, "services">, host: string, port: number, subsetLabels?: Labels): ServiceEndpoint[] {
  for (const service of registry.services) {
    if (service.fqdn !== host) continue;
    const p = service.ports.find((x) => x.port === port);
    if (p) return endpointsOf(service, p, subsetLabels);
  }
  return [];
}

/**
 * The service port an endpoint address serves (a client that dialled a pod
 * IP directly, or a captured connection to one): the first service whose
 * endpoints on some port include `address:port`, with that endpoint.
 */
export function endpointAt(
  registry: Pick<MeshRegistry, "services">,
  address: string,
  port: number,
): { readonly service: MeshService; readonly port: MeshServicePort; readonly endpoint: ServiceEndpoint } | undefined {
  for (const service of registry.services) {
    for (const p of service.ports) {
      const endpoint = endpointsOf(service, p).find((e) => e.address === address && e.port === port);
      if (endpoint) return { service, port: p, endpoint };
    }
  }
  return undefined;
}
