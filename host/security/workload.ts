import type { Resource } from "../config/catalog.ts";
import type { ContainerPort, PodSpec } from "../config/resources/orch.ts";
import { DEFAULT_TRUST_DOMAIN } from "../config/mesh_config.ts";

/**
 * The workload a security decision is made for, and which policies select
 * it. Built from an orchestrator Pod or Deployment (host/config/resources/orch.ts)
 * or by hand (meshctl x simulate's `workloads[]`).
 */

/** Spec 1: the root namespace; policies without selector there are mesh-wide. */
export { DEFAULT_ROOT_NAMESPACE, DEFAULT_TRUST_DOMAIN } from "../config/mesh_config.ts";

export interface Workload {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly serviceAccount: string;
  /** The pod's container ports (named ports resolve Service targetPorts). */
  readonly ports: readonly ContainerPort[];
  /** Whether a sidecar proxy runs next to it (auto mutual TLS, rule 2). */
  readonly sidecar: boolean;
}

/** A workload from a Pod resource; `sidecar` defaults to true (an injected pod). */
export function workloadFromPod(pod: Resource<"Pod">, sidecar = true): Workload {
  return fromPodSpec(pod.name, pod.namespace, pod.labels, pod.spec, sidecar);
}

/** The workload of a Deployment's pods (template labels, service account, ports). */
export function workloadFromDeployment(deployment: Resource<"Deployment">, sidecar = true): Workload {
  const t = deployment.spec.template;
  return fromPodSpec(deployment.name, deployment.namespace, t.labels, t.spec, sidecar);
}

function fromPodSpec(name: string, namespace: string, labels: Readonly<Record<string, string>>, spec: PodSpec, sidecar: boolean): Workload {
  return Object.freeze({
    name,
    namespace,
    labels,
    serviceAccount: spec.serviceAccountName,
    ports: Object.freeze(spec.containers.flatMap((c) => c.ports)),
    sidecar,
  });
}

/** `spiffe://<trust-domain>/ns/<ns>/sa/<sa>` of a workload (issue 6, mesh_ca). */
export function spiffeId(workload: Pick<Workload, "namespace" | "serviceAccount">, trustDomain = DEFAULT_TRUST_DOMAIN): string {
  return `spiffe://${trustDomain}/ns/${workload.namespace}/sa/${workload.serviceAccount}`;
}

/** `ns/name` of a resource, as decisions and logs name policies. */
export function policyName(r: Pick<Resource, "namespace" | "name">): string {
  return `${r.namespace}/${r.name}`;
}
