/**
 * Where the pod template of each injectable kind lives (upstream
 * `pkg/kube/inject`, IntoObject: Pod, Deployment, ReplicaSet, StatefulSet,
 * DaemonSet, Job, CronJob, ReplicationController, DeploymentConfig).
 * Kinds are matched with their API groups, so a custom resource that happens
 * to be called `Deployment` passes through.
 */
export interface PodTemplatePath {
  /** Path of the pod's metadata (annotations, labels) from the document root. */
  metadata: readonly string[];
  /** Path of the PodSpec (containers, volumes, hostNetwork). */
  spec: readonly string[];
}

const POD: PodTemplatePath = { metadata: ["metadata"], spec: ["spec"] };
const TEMPLATE: PodTemplatePath = { metadata: ["spec", "template", "metadata"], spec: ["spec", "template", "spec"] };
const JOB_TEMPLATE: PodTemplatePath = {
  metadata: ["spec", "jobTemplate", "spec", "template", "metadata"],
  spec: ["spec", "jobTemplate", "spec", "template", "spec"],
};

/** kind → API groups (`""` = core) → template path. */
const WORKLOADS: Record<string, { groups: readonly string[]; path: PodTemplatePath }> = {
  Pod: { groups: [""], path: POD },
  ReplicationController: { groups: [""], path: TEMPLATE },
  Deployment: { groups: ["apps", "extensions"], path: TEMPLATE },
  ReplicaSet: { groups: ["apps", "extensions"], path: TEMPLATE },
  DaemonSet: { groups: ["apps", "extensions"], path: TEMPLATE },
  StatefulSet: { groups: ["apps"], path: TEMPLATE },
  Job: { groups: ["batch"], path: TEMPLATE },
  CronJob: { groups: ["batch"], path: JOB_TEMPLATE },
  DeploymentConfig: { groups: ["apps.openshift.io", ""], path: TEMPLATE },
};

/** Kinds orch-inject injects into, for help texts and docs. */
export const INJECTABLE_KINDS = Object.keys(WORKLOADS);

/** The template path of an injectable document, or undefined for kinds that pass through. */
export function podTemplatePath(apiVersion: string, kind: string): PodTemplatePath | undefined {
  const workload = WORKLOADS[kind];
  if (!workload) return undefined;
  const group = apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.lastIndexOf("/")) : "";
  return workload.groups.includes(group) ? workload.path : undefined;
}

/** Namespaces upstream never injects into. */
export const IGNORED_NAMESPACES: readonly string[] = ["kube-system", "kube-public"];
