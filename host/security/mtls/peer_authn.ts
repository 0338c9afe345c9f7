import type { Resource } from "../../config/catalog.ts";
import type { MtlsMode, PeerAuthenticationSpec } from "../../config/resources/security.ts";
import { DEFAULT_ROOT_NAMESPACE, type Workload, labelsMatch, policyName } from "../workload.ts";

/**
 * The server-side mutual TLS mode of a workload's container port (spec rules
 * 3–7; security.md §1). Levels: mesh (root namespace, no selector) →
 * namespace (no selector) → workload (selector, in the workload's
 * namespace) → port (`portLevelMtls`, keyed by container port, ignored when
 * no Service binds the port). Each level overrides the one before only when
 * its mode is set; UNSET inherits, and with no policy at all the mode is
 * PERMISSIVE.
 */

export type ServerMtlsMode = "STRICT" | "PERMISSIVE" | "DISABLE";
export type MtlsScope = "default" | "mesh" | "namespace" | "workload" | "port";

export interface ServerMtls {
  readonly mode: ServerMtlsMode;
  /** The level that set the mode. */
  readonly scope: MtlsScope;
  /** `ns/name` of the PeerAuthentication that set it; null by default. */
  readonly policy: string | null;
  /** Set when the workload policy has a `portLevelMtls` entry for this port that was ignored because no Service binds the port (rule 6). */
  readonly ignoredPortLevel?: string;
}

/** The policies that apply at each level; when several compete the first given wins (upstream: the oldest). */
export interface PeerAuthnPolicies {
  readonly mesh?: Resource<"PeerAuthentication">;
  readonly namespace?: Resource<"PeerAuthentication">;
  readonly workload?: Resource<"PeerAuthentication">;
}

type Svc = Pick<Resource<"Service">, "namespace" | "spec">;

function hasSelector(spec: PeerAuthenticationSpec): boolean {
  return spec.selector !== undefined && Object.keys(spec.selector.matchLabels).length > 0;
}

/**
 * Picks the mesh, namespace and workload policy of a workload. A selector
 * policy in the root namespace applies only to workloads of the root
 * namespace (upstream ignores it elsewhere, unlike the other policy kinds).
 */
export function peerAuthenticationFor(
  policies: readonly Resource<"PeerAuthentication">[],
  workload: Pick<Workload, "namespace" | "labels">,
  rootNamespace = DEFAULT_ROOT_NAMESPACE,
): PeerAuthnPolicies {
  const mesh = policies.find((p) => p.namespace === rootNamespace && !hasSelector(p.spec));
  const namespace = policies.find((p) => p.namespace === workload.namespace && !hasSelector(p.spec));
  const wl = policies.find((p) => p.namespace === workload.namespace && hasSelector(p.spec) && labelsMatch(p.spec.selector!.matchLabels, workload.labels));
  return Object.freeze({ mesh, namespace: workload.namespace === rootNamespace ? undefined : namespace, workload: wl });
}

/**
 * Whether some Service of the workload's namespace selects the workload and
 * targets this container port (by number, or by the name of the pod's port).
 */
export function isPortBound(workload: Pick<Workload, "namespace" | "labels" | "ports">, containerPort: number, services: readonly Svc[]): boolean {
  const names = new Set(workload.ports.filter((p) => p.containerPort === containerPort && p.name).map((p) => p.name!));
  return services.some(
    (s) =>
      s.namespace === workload.namespace &&
      s.spec.selector !== undefined &&
      Object.keys(s.spec.selector).length > 0 &&
      labelsMatch(s.spec.selector, workload.labels) &&
      s.spec.ports.some((p) => (typeof p.targetPort === "number" ? p.targetPort === containerPort : names.has(p.targetPort))),
  );
}

function apply(current: ServerMtls, mode: MtlsMode, scope: MtlsScope, policy: Resource<"PeerAuthentication">): ServerMtls {
  if (mode === "UNSET") return current;
  return { mode, scope, policy: policyName(policy) };
}

const DEFAULT_MODE: ServerMtls = Object.freeze({ mode: "PERMISSIVE", scope: "default", policy: null });

/** The mode from the mesh and namespace levels only: what auto mutual TLS infers for a destination service (security.md §2.1). */
export function namespaceMtls(
  policies: readonly Resource<"PeerAuthentication">[],
  namespace: string,
  rootNamespace = DEFAULT_ROOT_NAMESPACE,
): ServerMtls {
  const { mesh, namespace: ns } = peerAuthenticationFor(policies, { namespace, labels: {} }, rootNamespace);
  let m = DEFAULT_MODE;
  if (mesh) m = apply(m, mesh.spec.mtlsMode, "mesh", mesh);
  if (ns) m = apply(m, ns.spec.mtlsMode, "namespace", ns);
  return Object.freeze(m);
}

/**
 * The effective server mode for a workload's container port.
 *
 * @example
 * const m = serverMtls(catalog.byKind.PeerAuthentication, workload, 80, catalog.byKind.Service);
 * if (m.mode === "STRICT") listenTlsOnly(80);
 */
export function serverMtls(
  policies: readonly Resource<"PeerAuthentication">[],
  workload: Pick<Workload, "namespace" | "labels" | "ports">,
  containerPort: number,
  services: readonly Svc[],
  rootNamespace = DEFAULT_ROOT_NAMESPACE,
): ServerMtls {
  const selected = peerAuthenticationFor(policies, workload, rootNamespace);
  let m = DEFAULT_MODE;
  if (selected.mesh) m = apply(m, selected.mesh.spec.mtlsMode, "mesh", selected.mesh);
  if (selected.namespace) m = apply(m, selected.namespace.spec.mtlsMode, "namespace", selected.namespace);
  const wl = selected.workload;
  if (wl) {
    m = apply(m, wl.spec.mtlsMode, "workload", wl);
    const entry = wl.spec.portLevelMtls.find((p) => p.port === containerPort);
    if (entry) {
      if (isPortBound(workload, containerPort, services)) m = apply(m, entry.mode, "port", wl);
      else m = { ...m, ignoredPortLevel: policyName(wl) };
    }
  }
  return Object.freeze(m);
}
