import type { Catalog, Resource } from "../../../config/catalog.ts";
import { CLUSTER_SCOPED_KINDS, KINDS } from "../../../config/catalog.ts";
import type { SourceDocument } from "../../../config/documents.ts";
import type { MtlsMode } from "../../../config/resources/security.ts";
import { hostMatches as meshHostMatches } from "../../../mesh/hosts.ts";
import { formatLabels, selectorSelects } from "../../../mesh/labels.ts";
import { effectiveMtls as meshEffectiveMtls, workloadsSelectedBy } from "../../../mesh/policies.ts";
import {
  type MeshService,
  type MeshWorkload,
  buildRegistry,
  servicesOfWorkload as meshServicesOfWorkload,
  targetContainerPort as meshTargetContainerPort,
  workloadsOfService as meshWorkloadsOfService,
} from "../../../mesh/registry.ts";
import type { AnalyzeMeshConfig } from "./mesh_config.ts";

/**
 * What the analyzers know about the mesh, learned offline from the same
 * inputs (as upstream's analyzer does with files): the mesh registry
 * (host/mesh/registry.ts) of the `v1` Service, Pod and `apps/v1` Deployment
 * documents and the ServiceEntry hosts beside them, the Namespace documents,
 * plus the default ingress gateway that upstream also assumes when analyzing
 * files only. Documents the catalog refuses stay known by identity, so
 * references to them are not reported as missing (upstream analyzes what its
 * validation refuses too).
 */
export type Workload = MeshWorkload;
export type KnownService = MeshService;

/** The orchestrator's own namespaces: never expected in the mesh (upstream's analyzers leave them out). */
export const SYSTEM_NAMESPACES: ReadonlySet<string> = new Set(["kube-system", "kube-public", "kube-node-lease", "local-path-storage"]);

/** Which kinds of orchestrator documents the input holds (an analyzer that needs a kind is skipped without it). */
export type Knowledge = "Service" | "Workload" | "Namespace";

/** A document of a mesh kind that the catalog refused: its identity and raw body. */
export interface RefusedDocument {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  /** `Kind namespace/name` (`Kind name` when cluster-scoped), as resources are named. */
  readonly id: string;
  readonly body: Readonly<Record<string, unknown>>;
  readonly origin: { readonly file: string; readonly index: number };
}

export interface MeshModel {
  readonly config: AnalyzeMeshConfig;
  /** Orchestrator Services, ServiceEntry hosts (one each) and the assumed ingress gateway Service. */
  readonly services: readonly KnownService[];
  readonly workloads: readonly Workload[];
  /** Namespace documents, the namespaces every document lives in, the root and the default namespace. */
  readonly namespaces: ReadonlySet<string>;
  /** Workloads some Gateway selects, plus the default ingress gateway. */
  readonly gatewayWorkloads: readonly Workload[];
  readonly knows: ReadonlySet<Knowledge>;
  readonly refused: readonly RefusedDocument[];
  /** Labels of the `v1` Node documents of the input, by node name (upstream adds their topology labels to pod labels). */
  readonly nodeLabels: ReadonlyMap<string, Readonly<Record<string, string>>>;
  /** The document a resource was decoded from, as written (for fields the typed value does not keep, such as tcp and tls routes). */
  readonly bodyOf: (origin: { readonly file: string; readonly index: number }) => Readonly<Record<string, unknown>> | undefined;
}

export function buildModel(catalog: Catalog, documents: readonly SourceDocument[], config: AnalyzeMeshConfig, defaultNamespace: string): MeshModel {
  // Upstream adds a default ingress gateway (deployment and service) when analyzing files only, so
  // Gateways selecting it are not reported; ours carries `mesh: <ingressSelector>`.
  const assumedWorkloads: MeshWorkload[] = [];
  const assumedServices: MeshService[] = [];
  const ingress: MeshWorkload[] = [];
  if (config.ingressControllerMode !== "OFF") {
    const ns = config.rootNamespace;
    const name = config.ingressService;
    const labels = Object.freeze({ mesh: config.ingressSelector, app: name });
    const defined = (list: readonly { name: string; namespace: string }[]) => list.some((r) => r.namespace === ns && r.name === name);
    if (!defined(catalog.byKind.Pod) && !defined(catalog.byKind.Deployment)) {
      const w: MeshWorkload = Object.freeze({
        kind: "assumed",
        name,
        namespace: ns,
        labels,
        serviceAccount: `${name}-service-account`,
        ports: Object.freeze([
          { containerPort: 8080, name: "http2", protocol: "TCP" },
          { containerPort: 8443, name: "https", protocol: "TCP" },
        ] as const),
      });
      assumedWorkloads.push(w);
      ingress.push(w);
    }
    if (!defined(catalog.byKind.Service)) {
      assumedServices.push(
        Object.freeze({
          name,
          namespace: ns,
          fqdn: `${name}.${ns}.svc.${catalog.domain}`,
          addresses: Object.freeze([]),
          selector: labels,
          ports: Object.freeze([
            { name: "http2", port: 80, targetPort: 8080, protocol: "http2" },
            { name: "https", port: 443, targetPort: 8443, protocol: "https" },
          ]),
          source: "registry" as const,
          external: false,
        }),
      );
    }
  }
  const registry = buildRegistry(catalog.byKind, { domain: catalog.domain, services: assumedServices, workloads: assumedWorkloads });
  const knows = new Set<Knowledge>();
  if (catalog.byKind.Service.length > 0) knows.add("Service");
  if (catalog.byKind.Pod.length > 0 || catalog.byKind.Deployment.length > 0) knows.add("Workload");
  if (catalog.byKind.Namespace.length > 0) knows.add("Namespace");

  const bodies = new Map(documents.map((d) => [`${d.file}\0${d.index}`, d.body]));
  const gatewaySelected = registry.workloads.filter((w) => catalog.byKind.Gateway.some((g) => selectorSelects(g.spec.selector, w.labels)));
  const namespaces = new Set<string>([config.rootNamespace, defaultNamespace]);
  for (const n of catalog.byKind.Namespace) namespaces.add(n.name);
  for (const d of documents) namespaces.add(d.namespace ?? defaultNamespace);
  return Object.freeze({
    config,
    services: registry.services,
    workloads: registry.workloads,
    namespaces,
    gatewayWorkloads: Object.freeze([...new Set([...gatewaySelected, ...ingress])]),
    knows,
    refused: refusedDocuments(catalog, documents, defaultNamespace),
    nodeLabels: nodeLabels(documents),
    bodyOf: (origin: { readonly file: string; readonly index: number }) => bodies.get(`${origin.file}\0${origin.index}`),
  });
}

/** Node documents are the orchestrator's: only their string labels are read. */
function nodeLabels(documents: readonly SourceDocument[]): Map<string, Readonly<Record<string, string>>> {
  const out = new Map<string, Readonly<Record<string, string>>>();
  for (const d of documents) {
    if (d.kind !== "Node" || d.apiVersion !== "v1") continue;
    const labels = ((d.body.metadata as Record<string, unknown> | undefined)?.labels ?? {}) as Record<string, unknown>;
    out.set(d.name, Object.freeze(Object.fromEntries(Object.entries(labels).filter(([, v]) => typeof v === "string")) as Record<string, string>));
  }
  return out;
}

/** Documents of a kind the catalog decodes that are not among its resources (refused, or replaced by a later definition that was refused). */
function refusedDocuments(catalog: Catalog, documents: readonly SourceDocument[], defaultNamespace: string): RefusedDocument[] {
  const known = new Set<string>(KINDS);
  const decoded = new Set(catalog.resources.map((r) => `${r.kind}/${r.namespace}/${r.name}`));
  const out: RefusedDocument[] = [];
  for (const d of documents) {
    if (!known.has(d.kind)) continue;
    const namespace = CLUSTER_SCOPED_KINDS.has(d.kind) ? "" : (d.namespace ?? defaultNamespace);
    if (decoded.has(`${d.kind}/${namespace}/${d.name}`)) continue;
    const id = namespace ? `${d.kind} ${namespace}/${d.name}` : `${d.kind} ${d.name}`;
    out.push(Object.freeze({ kind: d.kind, namespace, name: d.name, id, body: d.body, origin: Object.freeze({ file: d.file, index: d.index }) }));
  }
  return out;
}

/** Whether the input defines `Kind namespace/name`, decoded or refused by validation (upstream still knows a refused resource). */
export function isDefined(catalog: Catalog, model: MeshModel, kind: string, namespace: string, name: string): boolean {
  const match = (r: { kind: string; namespace: string; name: string }) => r.kind === kind && r.namespace === namespace && r.name === name;
  return catalog.resources.some(match) || model.refused.some(match);
}

/**
 * Whether a Service or ServiceEntry the catalog refused names the host
 * (`name.namespace.svc.<domain>`, or one of the entry's `hosts` as written,
 * `*.` wildcards covering): upstream still knows it, so a reference to it is
 * not "not found".
 */
export function refusedServiceHost(model: MeshModel, host: string, domain: string): boolean {
  const h = host.toLowerCase();
  return model.refused.some((r) => {
    if (r.kind === "Service") return `${r.name}.${r.namespace}.svc.${domain}` === h;
    if (r.kind !== "ServiceEntry") return false;
    const hosts = ((r.body.spec ?? {}) as { hosts?: unknown }).hosts;
    return Array.isArray(hosts) && hosts.some((x) => typeof x === "string" && (meshHostMatches(x.toLowerCase(), h) || meshHostMatches(h, x.toLowerCase())));
  });
}

/** `k=v, k2=v2`, sorted, as messages show selectors. */
export { formatLabels };

/** Whether a mesh host (`reviews.foo.svc.cluster.local`, `*.foo.svc.cluster.local`, `*`) covers an FQDN. */
export function hostMatches(host: string, fqdn: string): boolean {
  return meshHostMatches(host, fqdn);
}

/**
 * Services a host (already resolved to an FQDN when short) stands for: those
 * whose name it covers, and ServiceEntries whose wildcard host covers it.
 */
export function servicesForHost(model: MeshModel, host: string): KnownService[] {
  return model.services.filter((s) => meshHostMatches(host, s.fqdn) || (s.fqdn.startsWith("*.") && meshHostMatches(s.fqdn, host.replace(/^\*\./, "x."))));
}

/** Workloads of the service's namespace its selector picks: the mesh model's query. */
export function workloadsOfService(model: MeshModel, service: KnownService): Workload[] {
  if (service.source === "ServiceEntry") return [];
  return meshWorkloadsOfService(model, service);
}

/** Services of the workload's namespace whose selector picks the workload: the mesh model's query. */
export function servicesOfWorkload(model: MeshModel, workload: Workload): KnownService[] {
  return meshServicesOfWorkload(model, workload);
}

/** The container port a service port reaches on a workload (a named targetPort is looked up in its container ports). */
export function targetContainerPort(port: { targetPort: number | string }, workload?: Workload): number | undefined {
  return meshTargetContainerPort(port, workload);
}

/**
 * Workloads a policy selector (AuthorizationPolicy, RequestAuthentication,
 * PeerAuthentication) picks: its namespace, or every namespace for
 * AuthorizationPolicy and RequestAuthentication in the root namespace.
 */
export function selectedWorkloads(model: MeshModel, kind: string, namespace: string, matchLabels: Readonly<Record<string, string>>): Workload[] {
  return workloadsSelectedBy(
    model.workloads,
    { kind, namespace, spec: { selector: { matchLabels } } } as unknown as Resource<"AuthorizationPolicy">,
    model.config.rootNamespace,
  );
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
export function effectiveMtls(
  catalog: Catalog,
  config: AnalyzeMeshConfig,
  namespace: string,
  labels: Readonly<Record<string, string>> | undefined,
  containerPort: number | undefined,
): EffectiveMtls {
  const pas = catalog.byKind.PeerAuthentication;
  const m = meshEffectiveMtls(pas, { namespace, labels: labels ?? {} }, config.rootNamespace, containerPort);
  const policy = m.policy === null ? undefined : pas.find((p) => `${p.namespace}/${p.name}` === m.policy);
  return { mode: m.mode, scope: m.scope === "default" ? undefined : m.scope, policy, inherited: m.namespaceMode };
}
