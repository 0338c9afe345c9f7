import type { Resource } from "../../config/catalog.ts";
import { effectiveMtls, namespaceMtls as meshNamespaceMtls } from "../../mesh/policies.ts";
import { DEFAULT_DOMAIN } from "../../mesh/hosts.ts";
import { boundContainerPorts, buildRegistry } from "../../mesh/registry.ts";
import { DEFAULT_ROOT_NAMESPACE, type Workload } from "../workload.ts";

/**
 * The server-side mutual TLS mode of a workload's container port (spec rules
 * 3–7; security.md §1), as the sidecar applies it. Which PeerAuthentication
 * selects the workload and the mode that follows are the mesh model's answer
 * (host/mesh/policies.ts); this adapts it to the sidecar's workload.
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

type Svc = Resource<"Service">;

/** Whether some Service of the workload's namespace selects the workload and targets this container port (by number or port name). */
export function isPortBound(workload: Pick<Workload, "namespace" | "labels" | "ports">, containerPort: number, services: readonly Svc[]): boolean {
  // Which ports a Service binds does not depend on the DNS domain.
  const registry = buildRegistry({ Service: services, Pod: [], Deployment: [], Namespace: [] }, { domain: DEFAULT_DOMAIN });
  return boundContainerPorts(registry, workload).has(containerPort);
}

const strip = (m: ReturnType<typeof effectiveMtls>): ServerMtls =>
  Object.freeze({ mode: m.mode, scope: m.scope, policy: m.policy, ...(m.ignoredPortLevel ? { ignoredPortLevel: m.ignoredPortLevel } : {}) });

/** The mode from the mesh and namespace levels only: what auto mutual TLS infers for a destination service (security.md §2.1). */
export function namespaceMtls(policies: readonly Resource<"PeerAuthentication">[], namespace: string, rootNamespace = DEFAULT_ROOT_NAMESPACE): ServerMtls {
  return strip(meshNamespaceMtls(policies, namespace, rootNamespace));
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
  return strip(effectiveMtls(policies, workload, rootNamespace, containerPort, isPortBound(workload, containerPort, services)));
}
