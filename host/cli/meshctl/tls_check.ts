import type { Resource } from "../../config/catalog.ts";
import type { ClientTlsMode } from "../../config/resources/networking.ts";
import type { MtlsMode } from "../../config/resources/security.ts";
import { serviceFqdn } from "../../mesh/hosts.ts";
import { effectiveMtls, peerAuthenticationLevels } from "../../mesh/policies.ts";
import { boundContainerPorts, servicesOfWorkload, targetContainerPort, workloadsOfService } from "../../mesh/registry.ts";
import { clientTls } from "../../security/mtls/destination_rule.ts";
import { type MeshView, type Workload, allWorkloads, findWorkload, registryOf, servicesOf } from "./mesh_view.ts";
import { formatLabels, formatTable } from "./table.ts";

/**
 * `meshctl authn tls-check`: for each service port of a workload, the server
 * side (effective PeerAuthentication mode) and the client side (DestinationRule
 * TLS mode, or auto mutual TLS), and whether they agree. Semantics:
 * shared/research/security.md §1–2 and spec 1 rules 3–7.
 */

/** The effective server mode is never UNSET: no policy at all means PERMISSIVE. */
export type ServerMode = Exclude<MtlsMode, "UNSET">;
export type Status = "OK" | "CONFLICT";
/** Where the server mode came from. */
export type ServerScope = "default" | "mesh" | "namespace" | "workload" | "port";

export interface ServerDecision {
  readonly mode: ServerMode;
  readonly scope: ServerScope;
  /** `name/namespace` of the PeerAuthentication that decided; undefined for the default. */
  readonly policy?: string;
  /** The mode after the mesh and namespace levels only (what auto mutual TLS infers, security.md §2.1). */
  readonly namespaceMode: ServerMode;
  /** Every policy that applies, by level. */
  readonly applied: { readonly mesh: string | null; readonly namespace: string | null; readonly workload: string | null };
}

export interface ClientDecision {
  readonly mode: ClientTlsMode;
  /** True when no DestinationRule TLS setting applies: the client proxy's auto mutual TLS decides. */
  readonly auto: boolean;
  /** `name/namespace` of the DestinationRule for the host (even one without a TLS setting). */
  readonly rule?: string;
  /** True when the mode comes from `portLevelSettings` for this service port. */
  readonly portLevel: boolean;
}

export interface TlsCheckRow {
  /** Service FQDN. */
  readonly host: string;
  /** Service port. */
  readonly port: number;
  readonly service: string;
  /** The container port the service port targets; undefined when a named target port is not found. */
  readonly containerPort?: number;
  readonly status: Status;
  readonly server: ServerDecision;
  readonly client: ClientDecision;
  readonly notes: readonly string[];
}

export interface TlsCheckReport {
  readonly source: string;
  readonly workload?: { readonly pod: string; readonly namespace: string; readonly labels: Readonly<Record<string, string>>; readonly from: string };
  readonly rows: readonly TlsCheckRow[];
  /** Notes about the workload as a whole (ignored policies, unbound port-level settings). */
  readonly notes: readonly string[];
}

/**
 * The effective server mode for a workload (and one container port), in the
 * order mesh → namespace → workload → port; each level overrides only when its
 * mode is set (UNSET inherits; a mesh policy with UNSET is PERMISSIVE). One
 * policy per level: the first in input order (upstream: the oldest). Workload
 * policies come from the workload's namespace only; a policy with a selector
 * in the root namespace is ignored (security.md §1.1). `boundPorts`: the
 * container ports some service targets; port-level entries for other ports
 * are ignored (spec 1: "Ignored when the port is not bound to a service").
 */
export function resolveServerMode(
  policies: readonly Resource<"PeerAuthentication">[],
  w: Pick<Workload, "namespace" | "labels" | "labelsKnown">,
  rootNamespace: string,
  containerPort?: number,
  boundPorts?: ReadonlySet<number>,
): ServerDecision {
  const m = effectiveMtls(
    policies,
    selected(w),
    rootNamespace,
    containerPort,
    containerPort === undefined || boundPorts === undefined ? undefined : boundPorts.has(containerPort),
  );
  const ref = (r: Resource<"PeerAuthentication"> | undefined) => (r ? `${r.name}/${r.namespace}` : null);
  return {
    mode: m.mode,
    scope: m.scope,
    policy: m.policy === null ? undefined : m.policy.split("/").reverse().join("/"),
    namespaceMode: m.namespaceMode,
    applied: { mesh: ref(m.levels.mesh), namespace: ref(m.levels.namespace), workload: ref(m.levels.workload) },
  };
}

const selected = (w: Pick<Workload, "namespace" | "labels" | "labelsKnown">) => ({ namespace: w.namespace, labels: w.labelsKnown ? w.labels : undefined });

/**
 * The client side for one service port, as the sidecar decides it
 * (host/security/mtls/destination_rule.ts `clientTls`): a client in the
 * service's namespace, a destination with a sidecar, auto mutual TLS
 * following the mesh/namespace mode (the spec-era inference, which ignores
 * workload and port policies: why rules 5–7 ask for DestinationRules).
 */
export function clientDecision(
  rules: readonly Resource<"DestinationRule">[],
  host: string,
  serviceNamespace: string,
  servicePort: number,
  namespaceMode: ServerMode,
  rootNamespace: string,
): ClientDecision {
  const tls = clientTls({
    host,
    servicePort,
    clientNamespace: serviceNamespace,
    destinationRules: rules,
    destinationHasSidecar: true,
    destinationNamespaceMode: namespaceMode,
    rootNamespace,
  });
  const rule = tls.destinationRule === null ? undefined : tls.destinationRule.split("/").reverse().join("/");
  return { mode: tls.mode, auto: tls.source === "auto-mtls", rule, portLevel: tls.source === "port-level" };
}

/** Whether what the client sends is what the server accepts (SIMPLE and MUTUAL carry no mesh client certificate). */
export function compatible(server: ServerMode, client: ClientTlsMode): boolean {
  switch (server) {
    case "STRICT":
      return client === "MESH_MUTUAL";
    case "DISABLE":
      return client === "DISABLE";
    case "PERMISSIVE":
      // Plain text or mutual TLS with the mesh certificate; TLS without the mesh client certificate fails the handshake.
      return client === "MESH_MUTUAL" || client === "DISABLE";
  }
}

export interface TlsCheckOptions {
  /** `<pod>` and its namespace; undefined: every service of the view. */
  pod?: string;
  namespace: string;
  /** Optional service filter: `name`, `name.namespace` or the FQDN. */
  service?: string;
  rootNamespace: string;
}

export class TlsCheckError extends Error {}

/** Builds the report; throws TlsCheckError when the pod is unknown. */
export function tlsCheck(view: MeshView, o: TlsCheckOptions): TlsCheckReport {
  const notes: string[] = [];
  const rows: TlsCheckRow[] = [];
  let workload: Workload | undefined;
  if (o.pod !== undefined) {
    workload = findWorkload(view, o.pod, o.namespace);
    if (!workload) {
      const known = [
        ...view.byKind.Pod.map((p) => `${p.name}.${p.namespace}`),
        ...view.byKind.Deployment.map((d) => `${d.name}-….${d.namespace}`),
        ...(view.sidecar ? [view.sidecar.id] : []),
      ];
      throw new TlsCheckError(
        `pod ${o.pod}.${o.namespace} not found in ${view.source}${known.length ? ` (known: ${known.join(", ")})` : " (it has no Pod or Deployment documents)"}`,
      );
    }
    if (!workload.labelsKnown)
      notes.push(`${workload.from} reports no workload labels: workload-specific policies cannot be matched (give the sidecar a Pod document for itself)`);
    rows.push(...workloadRows(view, workload, o, notes));
  } else {
    for (const svc of view.byKind.Service) {
      const selector = svc.spec.selector ?? {};
      const w: Workload = workloadsOfService({ workloads: allWorkloads(view) }, { namespace: svc.namespace, selector })[0] ?? {
        pod: "",
        namespace: svc.namespace,
        labels: selector,
        labelsKnown: Object.keys(selector).length > 0,
        ports: [],
        from: `${svc.id} selector`,
      };
      rows.push(...serviceRows(view, w, svc, o, notes));
    }
  }
  return {
    source: view.source,
    workload: workload && { pod: workload.pod, namespace: workload.namespace, labels: workload.labels, from: workload.from },
    rows: rows.filter((r) => serviceMatches(o.service, r)),
    notes,
  };
}

function serviceMatches(filter: string | undefined, r: TlsCheckRow): boolean {
  if (!filter) return true;
  return filter === r.host || filter === r.service || filter === r.service.split(".")[0] || r.host.startsWith(`${filter}.svc.`);
}

function workloadRows(view: MeshView, w: Workload, o: TlsCheckOptions, notes: string[]): TlsCheckRow[] {
  const services = servicesOf(view, w);
  if (services.length > 0) return services.flatMap((svc) => serviceRows(view, w, svc, o, notes));
  const s = view.sidecar;
  if (s && s.id === `${w.pod}.${w.namespace}` && s.inboundService && s.containerPort !== undefined) {
    // No Service documents: the service the inbound listener fronts, on the container port it stands for (service port = container port).
    notes.push(`no Service document selects ${s.id}: checking the sidecar's inbound service ${s.inboundService} on its container port ${s.containerPort}`);
    const bound = new Set([s.containerPort]);
    workloadNotes(view, w, o, notes, bound);
    return [row(view, w, s.inboundService, s.inboundService.split(".").slice(0, 2).join("."), w.namespace, s.containerPort, s.containerPort, bound, o, [])];
  }
  notes.push(`no service selects ${w.pod}.${w.namespace} (labels ${formatLabels(w.labels)}): nothing to check`);
  return [];
}

function serviceRows(view: MeshView, w: Workload, svc: Resource<"Service">, o: TlsCheckOptions, notes: string[]): TlsCheckRow[] {
  const fqdn = serviceFqdn(svc.name, svc.namespace, view.domain);
  const bound = boundPorts(view, w);
  workloadNotes(view, w, o, notes, bound);
  return svc.spec.ports.map((p) => {
    const containerPort = resolveTargetPort(p.targetPort, w);
    const r = row(view, w, fqdn, `${svc.name}.${svc.namespace}`, svc.namespace, p.port, containerPort, bound, o, []);
    if (containerPort === undefined) {
      return { ...r, notes: [...r.notes, `targetPort ${JSON.stringify(p.targetPort)} names no container port of ${w.from}: port-level settings not applied`] };
    }
    return r;
  });
}

/** Records (once) the policies that apply but lose, and the port-level entries ignored because no service targets their port. */
function workloadNotes(view: MeshView, w: Workload, o: TlsCheckOptions, notes: string[], bound: ReadonlySet<number>): void {
  const levels = peerAuthenticationLevels(view.byKind.PeerAuthentication, selected(w), o.rootNamespace);
  const ref = (r: Resource<"PeerAuthentication">) => `${r.name}/${r.namespace}`;
  for (const i of levels.ignored) {
    const text = `PeerAuthentication ${i.policy.split("/").reverse().join("/")} ignored: ${i.why}`;
    if (!notes.includes(text)) notes.push(text);
  }
  for (const e of levels.workload?.spec.portLevelMtls ?? []) {
    if (bound.has(e.port)) continue;
    const text = `PeerAuthentication ${ref(levels.workload!)}: portLevelMtls[${e.port}] ignored: container port ${e.port} is bound to no service (spec 1, rule 6)`;
    if (!notes.includes(text)) notes.push(text);
  }
}

function resolveTargetPort(target: number | string, w: Workload): number | undefined {
  return targetContainerPort({ targetPort: target }, w);
}

function boundPorts(view: MeshView, w: Workload): Set<number> {
  const registry = registryOf(view);
  if (w.pod !== "" || !w.labelsKnown) return w.labelsKnown ? boundContainerPorts(registry, w) : new Set();
  // A service's selector stands in for its pods: its own numeric target ports are the bound ones.
  const out = new Set<number>();
  for (const svc of servicesOfWorkload(registry, w)) for (const p of svc.ports) if (typeof p.targetPort === "number") out.add(p.targetPort);
  return out;
}

function row(
  view: MeshView,
  w: Workload,
  host: string,
  service: string,
  serviceNamespace: string,
  port: number,
  containerPort: number | undefined,
  bound: ReadonlySet<number>,
  o: TlsCheckOptions,
  extra: string[],
): TlsCheckRow {
  const server = resolveServerMode(view.byKind.PeerAuthentication, w, o.rootNamespace, containerPort, bound);
  const client = clientDecision(view.byKind.DestinationRule, host, serviceNamespace, port, server.namespaceMode, o.rootNamespace);
  const status: Status = compatible(server.mode, client.mode) ? "OK" : "CONFLICT";
  const notes = [...extra, ...explain(server, client, status, host)];
  return { host, port, service, containerPort, status, server, client, notes };
}

/** Why a row is what it is, citing the spec rule. */
function explain(server: ServerDecision, client: ClientDecision, status: Status, host: string): string[] {
  const out: string[] = [];
  const sends = client.mode === "DISABLE" ? "plain text" : client.mode === "MESH_MUTUAL" ? "mutual TLS" : `${client.mode} TLS without the mesh certificate`;
  const why = client.auto
    ? `auto mutual TLS follows the mesh/namespace mode ${server.namespaceMode}`
    : `DestinationRule ${client.rule}${client.portLevel ? " port-level" : ""} tls.mode ${client.mode}`;
  if (status === "CONFLICT") {
    const by = server.policy ? `PeerAuthentication ${server.policy} (${server.scope})` : "the default";
    const accepts = server.mode === "STRICT" ? "only mutual TLS" : server.mode === "DISABLE" ? "only plain text" : "plain text or mutual TLS";
    const fix =
      server.mode === "DISABLE"
        ? `a DestinationRule for ${host} with tls.mode DISABLE (spec 1, rules 5 and 7)`
        : `a DestinationRule for ${host} with tls.mode MESH_MUTUAL (spec 1, rule 5)`;
    out.push(
      `server accepts ${accepts} (${by}), clients send ${sends} (${why}): needs ${fix}${server.scope === "port" ? " in portLevelSettings for this service port (rule 6)" : ""}`,
    );
  } else if (client.auto && (server.scope === "workload" || server.scope === "port") && server.mode === "STRICT") {
    out.push(`workload-specific STRICT relies on auto mutual TLS; spec 1 rule 5 asks for a DestinationRule for ${host} with tls.mode MESH_MUTUAL`);
  }
  return out;
}

// ---- output

/** `AUTO:MESH_MUTUAL` when auto mutual TLS decides, else the DestinationRule's mode. */
export function clientColumn(c: ClientDecision): string {
  return c.auto ? `AUTO:${c.mode}` : c.mode;
}

/** The upstream table: HOST:PORT, STATUS, SERVER, CLIENT, AUTHN POLICY, DESTINATION RULE; then the notes. */
export function formatTlsCheck(report: TlsCheckReport): string {
  const rows = [["HOST:PORT", "STATUS", "SERVER", "CLIENT", "AUTHN POLICY", "DESTINATION RULE"]];
  for (const r of report.rows)
    rows.push([`${r.host}:${r.port}`, r.status, r.server.mode, clientColumn(r.client), r.server.policy ?? "-", r.client.rule ?? "-"]);
  const notes = [...report.notes, ...report.rows.flatMap((r) => r.notes.map((n) => `${r.host}:${r.port}: ${n}`))];
  return formatTable(rows) + (notes.length ? `\n${notes.map((n) => `NOTE: ${n}\n`).join("")}` : "");
}

/** `-o json`: the report as documented in docs/meshctl.md (stable field order). */
export function tlsCheckJson(report: TlsCheckReport): string {
  return `${JSON.stringify(
    {
      source: report.source,
      workload: report.workload ?? null,
      results: report.rows.map((r) => ({
        host: r.host,
        port: r.port,
        service: r.service,
        containerPort: r.containerPort ?? null,
        status: r.status,
        server: { mode: r.server.mode, scope: r.server.scope, policy: r.server.policy ?? null, applied: r.server.applied },
        client: { mode: r.client.mode, auto: r.client.auto, destinationRule: r.client.rule ?? null, portLevel: r.client.portLevel },
        notes: r.notes,
      })),
      notes: report.notes,
    },
    null,
    2,
  )}\n`;
}
