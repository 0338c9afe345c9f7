import type { Writable } from "node:stream";
import { DEFAULT_DOMAIN, splitProxyDnsDomain } from "../../mesh/hosts.ts";
import { buildRegistry, type MeshRegistry, type MeshWorkload, servicesOfWorkload, workloadFromDeployment, workloadFromPod } from "../../mesh/registry.ts";
import {
  type AnyResource,
  type CatalogChecks,
  KINDS,
  KIND_API_VERSIONS,
  type Resource,
  type ResourcesByKind,
  decodeDocuments,
  filterChecks,
} from "../../config/catalog.ts";
import { formatConfigProblem } from "../../config/problems.ts";
import { loadSources } from "../../config/sources.ts";
import { FilterModule } from "../../wasm/filter_module.ts";
import { type ConfigDump, fetchDump, readDumpFile } from "./sidecar_admin.ts";

/**
 * What `authn tls-check` and `authz check` look at: resources by kind, read
 * either from files (`-f`, through the catalog) or from a sidecar's
 * `/config_dump` (`configuration.resources`, already decoded by the sidecar),
 * plus the sidecar's identity when there is one.
 */
export interface MeshView {
  /** What was read, for messages: `files a.yaml, b.yaml`, `sidecar http://…`, `config dump x.json`. */
  readonly source: string;
  readonly byKind: ResourcesByKind;
  /** The mesh's DNS domain the resources were decoded in (meshctl has no `--domain`, as upstream's CLI: `cluster.local` for files; a sidecar's own). */
  readonly domain: string;
  readonly sidecar?: SidecarFacts;
}

/** What a sidecar says about itself in /config_dump. */
export interface SidecarFacts {
  /** `<pod>.<namespace>`. */
  readonly id: string;
  readonly pod: string;
  readonly namespace: string;
  /** Undefined when the sidecar was given no labels (and has no Pod document for itself). */
  readonly labels?: Readonly<Record<string, string>>;
  /** The inbound listener: the service it fronts (`--inboundService`) and the app port behind it. */
  readonly inboundService?: string;
  readonly appPort?: number;
  /** The container port the inbound listener stands for (`--containerPort`; the app port when not told). */
  readonly containerPort?: number;
  /** False when the sidecar shows its policies without enforcing them (no security path); undefined in older dumps. */
  readonly enforced?: boolean;
}

export interface ViewOptions {
  /** `-f` paths (files, directories, `-`). */
  files?: readonly string[];
  /** A saved config dump (authz check `-f`, proxy-config `--file`). */
  dumpFile?: string;
  /** Admin URL of a running sidecar. */
  admin?: string;
  /** `-n`: namespace of documents without one. */
  namespace?: string;
  checks?: CatalogChecks;
}

/** A usage or input problem that stops the command: message for stderr and the exit code. */
export class ViewError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = "ViewError";
  }
}

/** Reads the view from files, a dump file or a sidecar. Problems in files are printed to `errors` as warnings (the resource is ignored). */
export async function loadView(o: ViewOptions, errors: Writable): Promise<MeshView> {
  if (o.admin) {
    const dump = await fetchDump(o.admin);
    return viewFromDump(dump, `sidecar ${o.admin}`);
  }
  if (o.dumpFile) return viewFromDump(readDumpFile(o.dumpFile), `config dump ${o.dumpFile}`);
  const files = o.files ?? [];
  // A single JSON file that is a config dump is read as one (authz check -f config_dump.json).
  if (files.length === 1 && files[0].endsWith(".json")) {
    try {
      return viewFromDump(readDumpFile(files[0]), `config dump ${files[0]}`);
    } catch {
      // Not a dump: read it as resource documents below.
    }
  }
  const loaded = loadSources(files, { recursive: true });
  if (loaded.unreadable.length > 0) {
    throw new ViewError(loaded.unreadable.map((u) => `cannot read ${JSON.stringify(u.path)}: ${u.reason}`).join("\n"), 2);
  }
  const catalog = decodeDocuments(loaded.documents, o.checks ?? filterChecks(FilterModule.load()), { defaultNamespace: o.namespace || undefined });
  for (const p of [...loaded.problems, ...catalog.errors]) errors.write(`Warning: ignored: ${formatConfigProblem(p)}\n`);
  return { source: `files ${files.join(", ")}`, byKind: catalog.byKind, domain: catalog.domain };
}

/** The resources a sidecar decoded from its configuration directory, as catalog resources. */
export function viewFromDump(dump: ConfigDump, source: string): MeshView {
  const given = dump.configuration.resources ?? {};
  const byKind = Object.fromEntries(
    KINDS.map((kind) => [
      kind,
      (given[kind] ?? []).map((r, index) =>
        Object.freeze({
          kind,
          apiVersion: KIND_API_VERSIONS[kind],
          name: r.name,
          namespace: r.namespace,
          id: kind === "Namespace" ? `${kind} ${r.name}` : `${kind} ${r.namespace}/${r.name}`,
          labels: r.labels ?? {},
          annotations: r.annotations ?? {},
          origin: { file: r.file ?? source, index },
          spec: r.spec,
        }),
      ),
    ]),
  ) as unknown as ResourcesByKind;
  const id = dump.identity.id;
  const dot = id.lastIndexOf(".");
  const inbound = dump.listeners.inbound;
  const appPort = inbound?.upstream ? Number(inbound.upstream.slice(inbound.upstream.lastIndexOf(":") + 1)) : undefined;
  return {
    source,
    byKind,
    // The sidecar's DNS domain `<namespace>.svc.<mesh domain>` (its --domain) says in which mesh domain it decoded them.
    domain: splitProxyDnsDomain(dump.identity.domain ?? "")?.domain ?? DEFAULT_DOMAIN,
    sidecar: {
      id,
      pod: dot > 0 ? id.slice(0, dot) : id,
      namespace: dot > 0 ? id.slice(dot + 1) : "default",
      labels: dump.identity.labels,
      inboundService: inbound?.service,
      appPort: Number.isInteger(appPort) ? appPort : undefined,
      containerPort: inbound?.containerPort ?? (Number.isInteger(appPort) ? appPort : undefined),
      enforced: dump.configuration.enforced,
    },
  };
}

// ---- workloads

/** A mesh workload (host/mesh/registry.ts) as the checks see it: the pod name asked for, and where its labels and container ports came from. */
export interface Workload extends Pick<MeshWorkload, "namespace" | "labels" | "ports"> {
  readonly pod: string;
  /** False when the labels are unknown (a sidecar told no labels): workload-scoped policies cannot be matched. */
  readonly labelsKnown: boolean;
  /** Where the workload was found: `Pod ns/name`, `Deployment ns/name`, `sidecar <id>`. */
  readonly from: string;
}

function checked(pod: string, w: MeshWorkload & { resource: AnyResource }): Workload {
  return { pod, namespace: w.namespace, labels: w.labels, labelsKnown: true, ports: w.ports, from: w.resource.id };
}

/**
 * The workload named `pod` in `namespace`: a Pod document of that name, else a
 * Deployment whose pods it names (`<deployment>` or `<deployment>-…`), else the
 * sidecar itself when its identity matches. Undefined when none is known.
 */
export function findWorkload(view: MeshView, pod: string, namespace: string): Workload | undefined {
  const p = view.byKind.Pod.find((r) => r.name === pod && r.namespace === namespace);
  if (p) return checked(pod, { ...workloadFromPod(p), resource: p });
  const d = view.byKind.Deployment.find((r) => r.namespace === namespace && (r.name === pod || pod.startsWith(`${r.name}-`)));
  if (d) return checked(pod, { ...workloadFromDeployment(d), resource: d });
  const s = view.sidecar;
  if (s && s.pod === pod && s.namespace === namespace) {
    return { pod, namespace, labels: s.labels ?? {}, labelsKnown: s.labels !== undefined, ports: [], from: `sidecar ${s.id}` };
  }
  return undefined;
}

/** Every workload of the view's Pods and Deployments (one per Deployment, named after it). */
export function allWorkloads(view: MeshView): Workload[] {
  const out: Workload[] = [];
  for (const p of view.byKind.Pod) out.push(findWorkload(view, p.name, p.namespace)!);
  for (const d of view.byKind.Deployment) out.push(findWorkload(view, d.name, d.namespace)!);
  return out;
}

/** The mesh model's registry of the view (services, workloads), for the mesh questions the commands ask. */
export function registryOf(view: MeshView): MeshRegistry {
  return buildRegistry(view.byKind, { domain: view.domain });
}

/** Services of the workload's namespace whose selector matches its labels (none while its labels are unknown). */
export function servicesOf(view: MeshView, w: Workload): Resource<"Service">[] {
  if (!w.labelsKnown) return [];
  return servicesOfWorkload(registryOf(view), w).map((s) => s.resource as Resource<"Service">);
}

/** `name.namespace`, how upstream's debug commands name resources. */
export function shortName(r: Pick<AnyResource, "name" | "namespace">): string {
  return `${r.name}.${r.namespace}`;
}
