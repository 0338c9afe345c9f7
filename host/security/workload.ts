import type { Resource } from "../config/catalog.ts";
import { type MeshWorkload, workloadFromPod as meshWorkloadFromPod } from "../mesh/registry.ts";
import { DEFAULT_TRUST_DOMAIN } from "../config/mesh_config.ts";

/**
 * The workload a security decision is made for, and which policies select
 * it. Built from an orchestrator Pod or Deployment (host/config/resources/orch.ts)
 * or by hand (meshctl x simulate's `workloads[]`).
 */

/** Spec 1: the root namespace; policies without selector there are mesh-wide. */
export { DEFAULT_ROOT_NAMESPACE, DEFAULT_TRUST_DOMAIN } from "../config/mesh_config.ts";

/** A workload of the mesh model (host/mesh/registry.ts MeshWorkload) and whether a sidecar proxy runs next to it (auto mutual TLS, rule 2). */
export interface Workload extends Pick<MeshWorkload, "name" | "namespace" | "labels" | "serviceAccount" | "ports"> {
  readonly sidecar: boolean;
}

/** A mesh workload as security decisions take it; `sidecar` defaults to true (an injected pod). */
function securityWorkload(w: Pick<MeshWorkload, "name" | "namespace" | "labels" | "serviceAccount" | "ports">, sidecar = true): Workload {
  return Object.freeze({ name: w.name, namespace: w.namespace, labels: w.labels, serviceAccount: w.serviceAccount, ports: w.ports, sidecar });
}

/** A workload from a Pod resource; `sidecar` defaults to true (an injected pod). */
export function workloadFromPod(pod: Resource<"Pod">, sidecar = true): Workload {
  return securityWorkload(meshWorkloadFromPod(pod), sidecar);
}

/** `spiffe://<trust-domain>/ns/<ns>/sa/<sa>` of a workload (issue 6, mesh_ca). */
export function spiffeId(workload: Pick<Workload, "namespace" | "serviceAccount">, trustDomain = DEFAULT_TRUST_DOMAIN): string {
  return `spiffe://${trustDomain}/ns/${workload.namespace}/sa/${workload.serviceAccount}`;
}

/** `ns/name` of a resource, as decisions and logs name policies. */
export function policyName(r: Pick<Resource, "namespace" | "name">): string {
  return `${r.namespace}/${r.name}`;
}
