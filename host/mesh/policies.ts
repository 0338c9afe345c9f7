import type { Resource } from "../config/catalog.ts";
import type { MtlsMode } from "../config/resources/security.ts";
import { type Labels, hasLabels, labelsMatch, labelsMatchKnown } from "./labels.ts";
import type { MeshWorkload } from "./registry.ts";

/**
 * Which PeerAuthentication, RequestAuthentication and AuthorizationPolicy
 * select a workload and port (security.md §1.1, §4.1, §5.1), and the
 * effective server-side mutual TLS mode that follows. One answer for the
 * sidecar, simulate, analyze, tls-check and authz check.
 */

export { DEFAULT_ROOT_NAMESPACE } from "../config/mesh_config.ts";

/** A mesh workload as policy selection sees it; `labels` undefined = unknown (a sidecar that reported none). */
export interface SelectedWorkload extends Pick<MeshWorkload, "namespace"> {
  readonly labels: Labels | undefined;
}

type Selecting = Resource<"RequestAuthentication"> | Resource<"AuthorizationPolicy"> | Resource<"PeerAuthentication">;

export type PolicyScope = "mesh" | "mesh-selector" | "namespace" | "workload";

/** Where a policy applies: root namespace without selector = mesh, with one = mesh-selector; elsewhere namespace or workload. */
export function policyScope(r: Selecting, rootNamespace: string): PolicyScope {
  const selected = hasLabels(r.spec.selector?.matchLabels);
  if (r.namespace === rootNamespace) return selected ? "mesh-selector" : "mesh";
  return selected ? "workload" : "namespace";
}

/**
 * Whether a RequestAuthentication or AuthorizationPolicy applies to a
 * workload: those of its namespace and of the root namespace; no selector =
 * every workload of that namespace (root: the whole mesh); a root-namespace
 * selector matches in every namespace. Undefined when that depends on
 * unknown labels.
 */
export function policyApplies(
  r: Resource<"RequestAuthentication"> | Resource<"AuthorizationPolicy">,
  w: SelectedWorkload,
  rootNamespace: string,
): boolean | undefined {
  if (r.namespace !== rootNamespace && r.namespace !== w.namespace) return false;
  return labelsMatchKnown(r.spec.selector?.matchLabels, w.labels);
}

/** The RequestAuthentication / AuthorizationPolicy resources that apply to a workload with known labels, in input order. */
export function selectingPolicies<R extends Resource<"RequestAuthentication"> | Resource<"AuthorizationPolicy">>(
  policies: readonly R[],
  w: { namespace: string; labels: Labels },
  rootNamespace: string,
): R[] {
  return policies.filter((p) => policyApplies(p, w, rootNamespace) === true);
}

// ---- PeerAuthentication

export type ServerMtlsMode = Exclude<MtlsMode, "UNSET">;
export type MtlsScope = "default" | "mesh" | "namespace" | "workload" | "port";

export interface PeerAuthnLevels {
  readonly mesh?: Resource<"PeerAuthentication">;
  readonly namespace?: Resource<"PeerAuthentication">;
  readonly workload?: Resource<"PeerAuthentication">;
  /** Policies that would apply but lose: `ns/name` and why. */
  readonly ignored: ReadonlyArray<{ readonly policy: string; readonly why: string }>;
}

export const policyRef = (r: { namespace: string; name: string }) => `${r.namespace}/${r.name}`;

/**
 * The mesh, namespace and workload PeerAuthentication of a workload. One per
 * level: the first given (upstream: the oldest). A selector policy in the
 * root namespace applies only to workloads of the root namespace (upstream
 * matches PeerAuthentication selectors within their namespace only).
 */
export function peerAuthenticationLevels(policies: readonly Resource<"PeerAuthentication">[], w: SelectedWorkload, rootNamespace: string): PeerAuthnLevels {
  const out: {
    mesh?: Resource<"PeerAuthentication">;
    namespace?: Resource<"PeerAuthentication">;
    workload?: Resource<"PeerAuthentication">;
    ignored: Array<{ policy: string; why: string }>;
  } = { ignored: [] };
  const take = (level: "mesh" | "namespace" | "workload", p: Resource<"PeerAuthentication">) => {
    const first = out[level];
    if (first)
      out.ignored.push({ policy: policyRef(p), why: `only one ${level}-wide policy is honoured: ${policyRef(first)} comes first (upstream keeps the oldest)` });
    else out[level] = p;
  };
  for (const p of policies) {
    const selector = p.spec.selector?.matchLabels;
    if (!hasLabels(selector)) {
      if (p.namespace === rootNamespace) take("mesh", p);
      else if (p.namespace === w.namespace) take("namespace", p);
    } else if (p.namespace === w.namespace && w.labels !== undefined && labelsMatch(selector, w.labels)) {
      take("workload", p);
    } else if (p.namespace === rootNamespace && w.labels !== undefined && labelsMatch(selector, w.labels)) {
      out.ignored.push({
        policy: policyRef(p),
        why: `a PeerAuthentication with a selector in the root namespace ${rootNamespace} applies to workloads of ${rootNamespace} only`,
      });
    }
  }
  return Object.freeze(out);
}

export interface EffectiveMtls {
  /** Never UNSET: PERMISSIVE when nothing sets a mode. */
  readonly mode: ServerMtlsMode;
  readonly scope: MtlsScope;
  /** `ns/name` of the PeerAuthentication that set the mode; null by default. */
  readonly policy: string | null;
  /** The mode of the mesh and namespace levels alone (what auto mutual TLS infers, security.md §2.1). */
  readonly namespaceMode: ServerMtlsMode;
  readonly levels: PeerAuthnLevels;
  /** Set when the workload policy's `portLevelMtls` entry for this port was ignored: no Service binds the port (rule 6). */
  readonly ignoredPortLevel?: string;
}

/**
 * The mode a workload's container port accepts: mesh → namespace → workload
 * → port; each level overrides only when its mode is set. `portBound`:
 * whether some Service targets the container port (port-level entries for
 * unbound ports are ignored); undefined = assume bound.
 */
export function effectiveMtls(
  policies: readonly Resource<"PeerAuthentication">[],
  w: SelectedWorkload,
  rootNamespace: string,
  containerPort?: number,
  portBound?: boolean,
): EffectiveMtls {
  const levels = peerAuthenticationLevels(policies, w, rootNamespace);
  let mode: ServerMtlsMode = "PERMISSIVE";
  let scope: MtlsScope = "default";
  let policy: string | null = null;
  const apply = (m: MtlsMode, s: MtlsScope, p: Resource<"PeerAuthentication">) => {
    if (m === "UNSET") return;
    [mode, scope, policy] = [m, s, policyRef(p)];
  };
  // UNSET at mesh scope means PERMISSIVE, set by that policy.
  if (levels.mesh) apply(levels.mesh.spec.mtlsMode === "UNSET" ? "PERMISSIVE" : levels.mesh.spec.mtlsMode, "mesh", levels.mesh);
  if (levels.namespace) apply(levels.namespace.spec.mtlsMode, "namespace", levels.namespace);
  const namespaceMode: ServerMtlsMode = mode;
  let ignoredPortLevel: string | undefined;
  const wl = levels.workload;
  if (wl) {
    apply(wl.spec.mtlsMode, "workload", wl);
    const entry = containerPort === undefined ? undefined : wl.spec.portLevelMtls.find((p) => p.port === containerPort);
    if (entry) {
      if (portBound === false) ignoredPortLevel = policyRef(wl);
      else apply(entry.mode, "port", wl);
    }
  }
  return Object.freeze({ mode, scope, policy, namespaceMode, levels, ...(ignoredPortLevel ? { ignoredPortLevel } : {}) });
}

/** The mode of the mesh and namespace levels of a namespace: what auto mutual TLS infers for a destination there. */
export function namespaceMtls(policies: readonly Resource<"PeerAuthentication">[], namespace: string, rootNamespace: string): EffectiveMtls {
  return effectiveMtls(policies, { namespace, labels: {} }, rootNamespace);
}

/**
 * Workloads a policy's selector picks: its namespace, or every namespace for
 * AuthorizationPolicy and RequestAuthentication in the root namespace.
 */
export function workloadsSelectedBy<W extends { namespace: string; labels: Labels }>(workloads: readonly W[], policy: Selecting, rootNamespace: string): W[] {
  const anyNamespace = policy.namespace === rootNamespace && policy.kind !== "PeerAuthentication";
  return workloads.filter((w) => (anyNamespace || w.namespace === policy.namespace) && labelsMatch(policy.spec.selector?.matchLabels, w.labels));
}
