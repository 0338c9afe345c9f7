import type { MeshService, MeshServicePort } from "./registry.ts";
import type { Labels } from "./labels.ts";

/**
 * The instances a service port is served by, as a proxy is told about them:
 * for a Service, the ready addresses of its `Endpoints` document, on the
 * endpoint port whose name is the service port's (the orchestrator's rule;
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

export interface ServiceEndpoint {
  readonly address: string;
  readonly port: number;
  readonly labels: Labels;
  readonly serviceAccount?: string;
  /** Upstream's endpoint weight; 1 when unset. */
  readonly weight: number;
}

export function endpointsOf(service: MeshService, port: MeshServicePort): ServiceEndpoint[] {
  if (service.source === "Service") {
    return (service.instances ?? []).flatMap((i) => {
      const p = i.ports.find((x) => x.name === port.name);
      return p ? [{ address: i.address, port: p.port, labels: i.labels, serviceAccount: i.serviceAccount, weight: 1 }] : [];
    });
  }
  const entry = service.source === "ServiceEntry" ? service.resource : undefined;
  if (entry?.kind !== "ServiceEntry") return [];
  const spec = entry.spec;
  if (spec.resolution !== "STATIC" && spec.resolution !== "DNS" && spec.resolution !== "DNS_ROUND_ROBIN") return [];
  const fallback = typeof port.targetPort === "number" ? port.targetPort : port.port;
  return spec.endpoints.map((e) => ({
    address: e.address,
    port: (port.name !== undefined ? e.ports[port.name] : undefined) ?? fallback,
    labels: e.labels,
    serviceAccount: e.serviceAccount,
    weight: e.weight ?? 1,
  }));
}
