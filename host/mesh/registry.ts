import type { ResourcesByKind, Resource } from "../config/catalog.ts";
import { type ContainerPort, type ServicePort, selectorMatches } from "../config/resources/orch.ts";
import { canonicalHost, serviceDomains, serviceFqdn, splitAuthority } from "./hosts.ts";
import { type Labels, selectorSelects } from "./labels.ts";
import { type EndpointInstance, type EndpointSource, serviceInstances } from "./service_endpoints.ts";

export type { EndpointInstance, EndpointSource } from "./service_endpoints.ts";

/**
 * Which services, ports and workloads exist: learned from the orchestrator
 * documents (`Service`, `Pod`, `Deployment`) and the `ServiceEntry`s of a
 * configuration, plus any the caller adds (the sidecar's `--endpoint`
 * registry, the analyzer's assumed ingress gateway). Pure: built from
 * decoded resources, queried by every consumer.
 */

export interface MeshServicePort {
  readonly name?: string;
  /** The port clients call. */
  readonly port: number;
  /** A container port number or name; equal to `port` for ServiceEntry ports. */
  readonly targetPort: number | string;
  /** `http`, `grpc`, … as `appProtocol` or the port name prefix say; undefined when neither does. */
  readonly protocol?: string;
}

export interface MeshService {
  readonly name: string;
  readonly namespace: string;
  readonly fqdn: string;
  /** Addresses clients may call it on (clusterIP, ServiceEntry addresses). */
  readonly addresses: readonly string[];
  /** A Service with `clusterIP: None`: clients call its pods' own addresses. */
  readonly headless?: boolean;
  /** Absent: no selector (endpoints managed elsewhere, or an external service). */
  readonly selector?: Labels;
  readonly ports: readonly MeshServicePort[];
  /** `Service`, `ServiceEntry` or `registry` (added by the caller). */
  readonly source: "Service" | "ServiceEntry" | "registry";
  /** ServiceEntry `location`: MESH_EXTERNAL services are outside the mesh. */
  readonly external: boolean;
  readonly resource?: Resource<"Service"> | Resource<"ServiceEntry">;
  /**
   * Ready addresses: for a Service, from its `Endpoints` document, else its
   * EndpointSlices, else the Pods its selector matches (host/mesh/service_endpoints.ts);
   * for a caller's service (`registry`), what the caller says. Undefined for ServiceEntries (their `endpoints` say).
   */
  readonly instances?: readonly EndpointInstance[];
  /** Addresses known but not ready (left out of load balancing). */
  readonly notReadyInstances?: readonly EndpointInstance[];
  /** Where a Service's instances were read from. */
  readonly endpointSource?: EndpointSource;
}

export interface MeshWorkload {
  readonly kind: "Pod" | "Deployment" | "WorkloadEntry" | "assumed";
  readonly name: string;
  readonly namespace: string;
  readonly labels: Labels;
  readonly serviceAccount: string;
  readonly ports: readonly ContainerPort[];
  /** A Pod's addresses (`status.podIPs`); none for a Deployment's pod template. */
  readonly addresses?: readonly string[];
  readonly resource?: Resource<"Pod"> | Resource<"Deployment">;
}

export interface MeshRegistry {
  /** The mesh's DNS domain (`cluster.local` by default): service hosts are `<name>.<namespace>.svc.<domain>`. */
  readonly domain: string;
  readonly services: readonly MeshService[];
  readonly workloads: readonly MeshWorkload[];
  /** Namespaces known to exist (documents, Namespace resources, services). */
  readonly namespaces: ReadonlySet<string>;
}

export interface RegistryExtras {
  /** The mesh's DNS domain (host/mesh/hosts.ts DEFAULT_DOMAIN when the program has no setting for it). */
  readonly domain: string;
  /** Services the documents do not describe; for a host they do, its instances join the documented service's. */
  readonly services?: readonly MeshService[];
  readonly workloads?: readonly MeshWorkload[];
  readonly namespaces?: readonly string[];
}

/** The protocol upstream infers for a service port: `appProtocol`, else the name's `<protocol>[-suffix]` prefix. */
export function portProtocol(p: { name?: string; appProtocol?: string }): string | undefined {
  if (p.appProtocol) return p.appProtocol.toLowerCase();
  const prefix = p.name?.split("-")[0].toLowerCase();
  return prefix && KNOWN_PROTOCOLS.has(prefix) ? prefix : undefined;
}
export const KNOWN_PROTOCOLS: ReadonlySet<string> = new Set([
  "http",
  "http2",
  "https",
  "grpc",
  "grpc-web",
  "tcp",
  "tls",
  "mongo",
  "mysql",
  "redis",
  "thrift",
  "udp",
]);

export function workloadFromPod(p: Resource<"Pod">): MeshWorkload {
  return Object.freeze({
    kind: "Pod",
    name: p.name,
    namespace: p.namespace,
    labels: p.labels,
    serviceAccount: p.spec.serviceAccountName,
    ports: Object.freeze(p.spec.containers.flatMap((c) => c.ports)),
    addresses: p.spec.status.podIPs,
    resource: p,
  });
}

export function workloadFromDeployment(d: Resource<"Deployment">): MeshWorkload {
  const t = d.spec.template;
  return Object.freeze({
    kind: "Deployment",
    name: d.name,
    namespace: d.namespace,
    labels: t.labels,
    serviceAccount: t.spec.serviceAccountName,
    ports: Object.freeze(t.spec.containers.flatMap((c) => c.ports)),
    resource: d,
  });
}

export function serviceFromResource(s: Resource<"Service">, domain: string): MeshService {
  return Object.freeze({
    name: s.name,
    namespace: s.namespace,
    fqdn: serviceFqdn(s.name, s.namespace, domain),
    addresses: Object.freeze([...(s.spec.addresses ?? [])]),
    ...(s.spec.headless ? { headless: true } : {}),
    selector: s.spec.selector,
    ports: Object.freeze(
      s.spec.ports.map((p: ServicePort) => Object.freeze({ name: p.name, port: p.port, targetPort: p.targetPort, protocol: portProtocol(p) })),
    ),
    source: "Service" as const,
    external: false,
    resource: s,
  });
}

/** One MeshService per host of a ServiceEntry. */
export function servicesFromEntry(e: Resource<"ServiceEntry">): MeshService[] {
  return e.spec.hosts.map((host) =>
    Object.freeze({
      name: host,
      namespace: e.namespace,
      fqdn: host,
      addresses: e.spec.addresses,
      selector: e.spec.workloadSelector,
      ports: Object.freeze(
        e.spec.ports.map((p) => Object.freeze({ name: p.name, port: p.number, targetPort: p.targetPort ?? p.number, protocol: p.protocol.toLowerCase() })),
      ),
      source: "ServiceEntry" as const,
      external: e.spec.location === "MESH_EXTERNAL",
      resource: e,
    }),
  );
}

/** The registry of a decoded configuration in a mesh of DNS domain `extras.domain` (and whatever the caller knows besides). */
export function buildRegistry(
  byKind: Pick<ResourcesByKind, "Service" | "Pod" | "Deployment" | "Namespace"> &
    Partial<Pick<ResourcesByKind, "ServiceEntry" | "Endpoints" | "EndpointSlice">>,
  extras: RegistryExtras,
): MeshRegistry {
  // A Deployment's pod template stands for its pods only where the documents give none of them (the Pods are the truer answer: their own labels, addresses).
  const templates = byKind.Deployment.filter((d) => !byKind.Pod.some((p) => p.namespace === d.namespace && selectorMatches(d.spec.selector, p.labels)));
  const workloads = [...byKind.Pod.map(workloadFromPod), ...templates.map(workloadFromDeployment), ...(extras.workloads ?? [])];
  const withInstances = (s: Resource<"Service">): MeshService => {
    const found = serviceInstances(s, byKind);
    return Object.freeze({ ...serviceFromResource(s, extras.domain), instances: found.ready, notReadyInstances: found.notReady, endpointSource: found.source });
  };
  const services = [...byKind.Service.map(withInstances), ...(byKind.ServiceEntry ?? []).flatMap(servicesFromEntry)];
  for (const s of extras.services ?? []) {
    const at = services.findIndex((x) => x.fqdn === s.fqdn);
    if (at < 0) services.push(s);
    else if (s.instances?.length) services[at] = withCallerInstances(services[at], s);
  }
  const namespaces = new Set<string>([
    ...byKind.Namespace.map((n) => n.name),
    ...services.map((s) => s.namespace),
    ...workloads.map((w) => w.namespace),
    ...(extras.namespaces ?? []),
  ]);
  return Object.freeze({ domain: extras.domain, services: Object.freeze(services), workloads: Object.freeze(workloads), namespaces });
}

/**
 * A documented service plus the instances a caller knows for it (the
 * sidecar's `--endpoint`): their ports are renamed to the documented port of
 * the same number, so they serve it; the documented ports stay.
 */
function withCallerInstances(service: MeshService, caller: MeshService): MeshService {
  const rename = new Map<string | undefined, string | undefined>();
  for (const p of caller.ports) {
    const documented = service.ports.find((x) => x.port === p.port);
    if (documented) rename.set(p.name, documented.name);
  }
  const added = (caller.instances ?? []).flatMap((i) => {
    const ports = i.ports.flatMap((p) => (rename.has(p.name) ? [{ name: rename.get(p.name), port: p.port }] : []));
    return ports.length > 0 ? [Object.freeze({ ...i, ports: Object.freeze(ports) })] : [];
  });
  return Object.freeze({ ...service, instances: Object.freeze([...(service.instances ?? []), ...added]) });
}

/** Workloads of the service's namespace its selector picks (none for a service without selector). Any registry-shaped value will do (the analyzer's too). */
export function workloadsOfService<W extends Pick<MeshWorkload, "namespace" | "labels">>(
  registry: { readonly workloads: readonly W[] },
  service: Pick<MeshService, "namespace" | "selector">,
): W[] {
  return registry.workloads.filter((w) => w.namespace === service.namespace && selectorSelects(service.selector, w.labels));
}

/** Services of the workload's namespace whose selector picks the workload (ServiceEntries select WorkloadEntries, not pods). */
export function servicesOfWorkload<S extends Pick<MeshService, "namespace" | "selector"> & { readonly source?: MeshService["source"] }>(
  registry: { readonly services: readonly S[] },
  workload: Pick<MeshWorkload, "namespace" | "labels">,
): S[] {
  return registry.services.filter((s) => s.source !== "ServiceEntry" && s.namespace === workload.namespace && selectorSelects(s.selector, workload.labels));
}

/** The container port a service port reaches on a workload (a named targetPort is looked up in its container ports); undefined when the name is unknown. */
export function targetContainerPort(port: Pick<MeshServicePort, "targetPort">, workload?: Pick<MeshWorkload, "ports">): number | undefined {
  if (typeof port.targetPort === "number") return port.targetPort;
  return workload?.ports.find((p) => p.name === port.targetPort)?.containerPort;
}

/** Container ports of a workload that some Service selecting it targets (spec 1 rule 6: port-level mTLS only applies to those). */
export function boundContainerPorts(registry: MeshRegistry, workload: Pick<MeshWorkload, "namespace" | "labels" | "ports">): Set<number> {
  const out = new Set<number>();
  for (const s of servicesOfWorkload(registry, workload)) {
    for (const p of s.ports) {
      const n = targetContainerPort(p, workload);
      if (n !== undefined) out.add(n);
    }
  }
  return out;
}

/** The service port a gateway Service exposes for a container port of its workload (upstream: Gateway server ports are Service ports). */
export function containerPortForServicePort(
  registry: MeshRegistry,
  workload: Pick<MeshWorkload, "namespace" | "labels" | "ports">,
  servicePort: number,
): number | undefined {
  for (const s of servicesOfWorkload(registry, workload)) {
    const p = s.ports.find((x) => x.port === servicePort);
    if (p) return targetContainerPort(p, workload);
  }
  return undefined;
}

export interface ResolvedHost {
  /** The service's FQDN (or the external host as written). */
  readonly host: string;
  /** The port named in the authority, else the default. */
  readonly port: number;
  /** Undefined: the host names no service the registry knows. */
  readonly service?: MeshService;
}

/**
 * What a request's authority names, as a client in `clientNamespace` sees
 * it: any of upstream's host forms (`httpbin`, `httpbin.foo`,
 * `httpbin.foo.svc`, the FQDN, a service address), with or without `:port`.
 */
export function resolveAuthority(registry: MeshRegistry, authority: string, clientNamespace: string | undefined, defaultPort = 80): ResolvedHost {
  const { host, port } = splitAuthority(authority);
  const p = port ?? defaultPort;
  const byDomain = registry.services.find((s) => serviceDomains(s.fqdn, clientNamespace, registry.domain, s.addresses).includes(host));
  if (byDomain) return { host: byDomain.fqdn, port: p, service: byDomain };
  const canonical = canonicalHost(host, clientNamespace, registry.domain, (ns) => registry.namespaces.has(ns));
  const service = registry.services.find((s) => s.fqdn === canonical || (s.source === "ServiceEntry" && hostMatchesEntry(s.fqdn, canonical)));
  return { host: canonical, port: p, service };
}

function hostMatchesEntry(pattern: string, host: string): boolean {
  return pattern.startsWith("*.") ? host.endsWith(pattern.slice(1)) : pattern === host;
}
