import { clusterName } from "../mesh/cluster_names.ts";
import { formatLabels, labelsMatch } from "../mesh/labels.ts";
import type { MeshRegistry, MeshService } from "../mesh/registry.ts";
import type { XdsService } from "./proxyless.ts";

/**
 * What disco-discovery tells operators about endpoints: every cluster it
 * serves with its endpoints and where they came from (`/debug/endpointz`,
 * upstream's page of the same name), and why a cluster has none (the warning
 * logged once when a cluster becomes empty). Pure: read from one snapshot.
 */

export interface ClusterEndpointsReport {
  readonly cluster: string;
  readonly service: string;
  readonly namespace: string;
  readonly port: number;
  readonly subset?: string;
  /** `Endpoints`, `EndpointSlice`, `Pods` (computed by the endpoints controller's rules), `none`, `ServiceEntry` or `registry`. */
  readonly source: string;
  readonly endpoints: readonly {
    readonly address: string;
    readonly port: number;
    readonly labels: Readonly<Record<string, string>>;
    readonly serviceAccount?: string;
    readonly sidecar?: boolean;
  }[];
  /** Addresses known but not ready (left out). */
  readonly notReady: readonly string[];
}

function sourceOf(service: MeshService | undefined): string {
  if (!service) return "registry";
  return service.source === "Service" ? (service.endpointSource ?? "none") : service.source;
}

/** Every cluster served (service ports and their subsets) with its endpoints. */
export function endpointReport(registry: MeshRegistry, services: readonly XdsService[]): ClusterEndpointsReport[] {
  return services.flatMap((s) => {
    const service = registry.services.find((m) => m.fqdn === s.host);
    const base = {
      service: s.host,
      namespace: service?.namespace ?? "",
      port: s.port,
      source: sourceOf(service),
      notReady: Object.freeze((service?.notReadyInstances ?? []).map((i) => i.address)),
    };
    const view = (endpoints: XdsService["endpoints"]) =>
      endpoints.map((e) => ({
        address: e.address,
        port: e.port,
        labels: e.labels ?? {},
        ...(e.serviceAccount !== undefined ? { serviceAccount: e.serviceAccount } : {}),
        ...("sidecar" in e ? { sidecar: Boolean(e.sidecar) } : {}),
      }));
    return [
      { ...base, cluster: clusterName(s.host, s.port), endpoints: view(s.endpoints) },
      ...(s.subsets ?? []).map((subset) => ({
        ...base,
        cluster: clusterName(s.host, s.port, subset.name),
        subset: subset.name,
        endpoints: view(s.endpoints.filter((e) => labelsMatch(subset.labels, e.labels))),
      })),
    ];
  });
}

/**
 * The clusters without an endpoint whose traffic has nowhere to go, each with
 * the reason in words: orchestrator Services and STATIC ServiceEntries
 * (a DNS ServiceEntry without endpoints is reached by its host name).
 */
export function emptyClusters(registry: MeshRegistry, report: readonly ClusterEndpointsReport[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const r of report) {
    if (r.endpoints.length > 0) continue;
    const service = registry.services.find((m) => m.fqdn === r.service);
    const entry = service?.resource?.kind === "ServiceEntry" ? service.resource : undefined;
    if (entry && entry.spec.resolution !== "STATIC") continue;
    out.set(r.cluster, emptyReason(r, service, report));
  }
  return out;
}

function emptyReason(r: ClusterEndpointsReport, service: MeshService | undefined, report: readonly ClusterEndpointsReport[]): string {
  const notReady = r.notReady.length > 0 ? ` (${r.notReady.length} not ready: ${r.notReady.join(", ")})` : "";
  if (r.subset !== undefined) {
    const whole = report.find((x) => x.service === r.service && x.port === r.port && x.subset === undefined);
    if (whole && whole.endpoints.length > 0) return `subset ${r.subset} selects none of the service's ${whole.endpoints.length} endpoint(s)`;
  }
  const id = service?.resource?.id ?? r.service;
  switch (r.source) {
    case "Pods":
      return `${id} has no Endpoints document and no ready Pod with an address matches its selector ${formatLabels(service?.selector ?? {})}${notReady}`;
    case "Endpoints":
    case "EndpointSlice":
      return `its ${r.source} document lists no ready address for port ${r.port}${notReady}`;
    case "none":
      return `${id} has no selector (or is ExternalName) and no Endpoints or EndpointSlice document`;
    case "ServiceEntry":
      return `${id} lists no endpoints`;
    default:
      return "the registry has no endpoint for it";
  }
}
