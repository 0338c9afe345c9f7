import type { Catalog, Resource } from "../../../config/catalog.ts";
import type { SourceDocument } from "../../../config/documents.ts";
import type { ContainerPort, ServicePort } from "../../../config/resources/orch.ts";
import type { MtlsMode } from "../../../config/resources/security.ts";
import { hostMatches as meshHostMatches, serviceFqdn } from "../../../mesh/hosts.ts";
import { formatLabels, selectorSelects } from "../../../mesh/labels.ts";
import { effectiveMtls as meshEffectiveMtls, workloadsSelectedBy } from "../../../mesh/policies.ts";
import { servicesOfWorkload as meshServicesOfWorkload, targetContainerPort as meshTargetContainerPort, workloadsOfService as meshWorkloadsOfService } from "../../../mesh/registry.ts";
import type { AnalyzeMeshConfig } from "./mesh_config.ts";

/**
 * What the analyzers know about the orchestrator, learned offline from the
 * `v1` Service, Namespace, Pod and `apps/v1` Deployment documents of the same
 * inputs (as upstream's analyzer does with files), plus the default ingress
 * gateway that upstream also assumes when analyzing files only.
 */
export interface Workload {
  readonly kind: "Pod" | "Deployment";
  readonly name: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly ports: readonly ContainerPort[];
  /** Undefined for the assumed default ingress gateway. */
  readonly resource?: Resource<"Pod"> | Resource<"Deployment">;
}

export interface KnownService {
  readonly name: string;
  readonly namespace: string;
  /** `<name>.<namespace>.svc.cluster.local`. */
  readonly fqdn: string;
  readonly selector?: Readonly<Record<string, string>>;
  readonly ports: readonly ServicePort[];
  readonly resource?: Resource<"Service">;
}

/** Which kinds of orchestrator documents the input holds (analyzers that need a kind are skipped without it). */
export type Knowledge = "Service" | "Workload" | "Namespace";

export interface MeshModel {
  readonly config: AnalyzeMeshConfig;
  readonly services: readonly KnownService[];
  readonly workloads: readonly Workload[];
  /** Namespace documents, the namespaces every document lives in, the root and the default namespace. */
  readonly namespaces: ReadonlySet<string>;
  /** Workloads some Gateway selects, plus the default ingress gateway. */
  readonly gatewayWorkloads: readonly Workload[];
  readonly knows: ReadonlySet<Knowledge>;
}

export function buildModel(catalog: Catalog, documents: readonly SourceDocument[], config: AnalyzeMeshConfig, defaultNamespace: string): MeshModel {
  const workloads: Workload[] = [
    ...catalog.byKind.Pod.map((p): Workload => ({ kind: "Pod", name: p.name, namespace: p.namespace, labels: p.labels, ports: p.spec.containers.flatMap((c) => c.ports), resource: p })),
    ...catalog.byKind.Deployment.map(
      (d): Workload => ({ kind: "Deployment", name: d.name, namespace: d.namespace, labels: d.spec.template.labels, ports: d.spec.template.spec.containers.flatMap((c) => c.ports), resource: d }),
    ),
  ];
  const services: KnownService[] = catalog.byKind.Service.map((s) => ({
    name: s.name,
    namespace: s.namespace,
    fqdn: serviceFqdn(s.name, s.namespace, catalog.domain),
    selector: s.spec.selector,
    ports: s.spec.ports,
    resource: s,
  }));
  const knows = new Set<Knowledge>();
  if (services.length > 0) knows.add("Service");
  if (workloads.length > 0) knows.add("Workload");
  if (catalog.byKind.Namespace.length > 0) knows.add("Namespace");

  // Upstream adds a default ingress gateway (deployment and service) when analyzing files only, so
  // Gateways selecting it are not reported; ours carries `mesh: <ingressSelector>`.
  const ingress: Workload[] = [];
  if (config.ingressControllerMode !== "OFF") {
    const ns = config.rootNamespace;
    const name = config.ingressService;
    const labels = Object.freeze({ mesh: config.ingressSelector, app: name });
    if (!workloads.some((w) => w.namespace === ns && w.name === name)) {
      const w: Workload = { kind: "Deployment", name, namespace: ns, labels, ports: Object.freeze([{ containerPort: 8080, name: "http2", protocol: "TCP" }, { containerPort: 8443, name: "https", protocol: "TCP" }]) };
      workloads.push(w);
      ingress.push(w);
    }
    if (!services.some((s) => s.namespace === ns && s.name === name)) {
      services.push({
        name,
        namespace: ns,
        fqdn: serviceFqdn(name, ns, catalog.domain),
        selector: labels,
        ports: Object.freeze([{ name: "http2", port: 80, targetPort: 8080, protocol: "TCP" }, { name: "https", port: 443, targetPort: 8443, protocol: "TCP" }]),
      });
    }
  }
  const gatewaySelected = workloads.filter((w) => catalog.byKind.Gateway.some((g) => selectorSelects(g.spec.selector, w.labels)));
  const namespaces = new Set<string>([config.rootNamespace, defaultNamespace]);
  for (const n of catalog.byKind.Namespace) namespaces.add(n.name);
  for (const d of documents) namespaces.add(d.namespace ?? defaultNamespace);
  return Object.freeze({
    config,
    services: Object.freeze(services),
    workloads: Object.freeze(workloads),
    namespaces,
    gatewayWorkloads: Object.freeze([...new Set([...gatewaySelected, ...ingress])]),
    knows,
  });
}

/** `k=v, k2=v2`, sorted, as messages show selectors. */
export { formatLabels };

/** Whether a mesh host (`reviews.foo.svc.cluster.local`, `*.foo.svc.cluster.local`, `*`) covers an FQDN. */
export function hostMatches(host: string, fqdn: string): boolean {
  return meshHostMatches(host, fqdn);
}

/** Services a host (already resolved to an FQDN when short) stands for. */
export function servicesForHost(model: MeshModel, host: string): KnownService[] {
  return model.services.filter((s) => meshHostMatches(host, s.fqdn));
}

/** Workloads of the service's namespace its selector picks: the mesh model's query. */
export function workloadsOfService(model: MeshModel, service: KnownService): Workload[] {
  return meshWorkloadsOfService(model, service);
}

/** Services of the workload's namespace whose selector picks the workload: the mesh model's query. */
export function servicesOfWorkload(model: MeshModel, workload: Workload): KnownService[] {
  return meshServicesOfWorkload(model, workload);
}

/** The container port a service port reaches on a workload (a named targetPort is looked up in its container ports). */
export function targetContainerPort(port: ServicePort, workload?: Workload): number | undefined {
  return meshTargetContainerPort(port, workload);
}

/**
 * Workloads a policy selector (AuthorizationPolicy, RequestAuthentication,
 * PeerAuthentication) picks: its namespace, or every namespace for
 * AuthorizationPolicy and RequestAuthentication in the root namespace.
 */
export function selectedWorkloads(model: MeshModel, kind: string, namespace: string, matchLabels: Readonly<Record<string, string>>): Workload[] {
  return workloadsSelectedBy(model.workloads, { kind, namespace, spec: { selector: { matchLabels } } } as unknown as Resource<"AuthorizationPolicy">, model.config.rootNamespace);
}

// ---- effective server-side mutual TLS mode (security.md §1.1)

export type MtlsScope = "mesh" | "namespace" | "workload" | "port";

export interface EffectiveMtls {
  /** Never UNSET: PERMISSIVE when nothing sets a mode. */
  readonly mode: Exclude<MtlsMode, "UNSET">;
  /** The scope that decided the mode; undefined when no policy did (PERMISSIVE default). */
  readonly scope?: MtlsScope;
  readonly policy?: Resource<"PeerAuthentication">;
  /** The mode the namespace and mesh policies alone give (what auto mutual TLS infers). */
  readonly inherited: Exclude<MtlsMode, "UNSET">;
}

/** The mode a workload's container port accepts: the mesh model's answer (host/mesh/policies.ts). */
export function effectiveMtls(catalog: Catalog, config: AnalyzeMeshConfig, namespace: string, labels: Readonly<Record<string, string>> | undefined, containerPort: number | undefined): EffectiveMtls {
  const pas = catalog.byKind.PeerAuthentication;
  const m = meshEffectiveMtls(pas, { namespace, labels: labels ?? {} }, config.rootNamespace, containerPort);
  const policy = m.policy === null ? undefined : pas.find((p) => `${p.namespace}/${p.name}` === m.policy);
  return { mode: m.mode, scope: m.scope === "default" ? undefined : m.scope, policy, inherited: m.namespaceMode };
}
