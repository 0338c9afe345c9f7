// Test support: from a user's YAML to the documents an orchestrator would hold.
//
// The e2e mesh suite deploys upstream's samples as a user does: `kubectl
// apply -n <ns> -f <(meshctl orch-inject -f sample.yaml)`. Here the apply is
// done by hand: each document gets the namespace, `meshctl orch-inject` (the
// built program) injects the workloads, Deployments become their Pods (what
// the orchestrator's controllers would create), every Service gets a cluster
// address and every Pod an address and a Running, Ready status. The Pod and
// Service documents are what disco-discovery's --configDir is given in place
// of the orchestrator API server.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { parseAllDocuments, stringify } from "yaml";
import { MESHCTL_BIN } from "../../host/demo/binaries.ts";
import { runProcess, tail } from "./processes.ts";

export type Doc = Record<string, any>;

/** The documents of a YAML file (empty documents dropped). */
export function readManifest(file: string): Doc[] {
  return parseYaml(readFileSync(file, "utf8"), file);
}

export function parseYaml(text: string, what: string): Doc[] {
  return parseAllDocuments(text)
    .map((d) => {
      if (d.errors.length > 0) throw new Error(`${what}: ${d.errors[0].message}`);
      return d.toJS() as Doc | null;
    })
    .filter((d): d is Doc => d !== null && typeof d === "object");
}

/** `kubectl apply -n <namespace>`: documents without a namespace get it (cluster-scoped kinds excepted). */
export function inNamespace(docs: Doc[], namespace: string): Doc[] {
  const clusterScoped = new Set([
    "Namespace",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
  ]);
  return docs.map((d) => (clusterScoped.has(d.kind) || d.metadata?.namespace ? d : { ...d, metadata: { ...d.metadata, namespace } }));
}

/** Selects documents as `kubectl apply -l k=v,…` does (by the document's own labels). */
export function withLabels(docs: Doc[], selector: Record<string, string>): Doc[] {
  return docs.filter((d) => Object.entries(selector).every(([k, v]) => d.metadata?.labels?.[k] === v));
}

/** `meshctl orch-inject -f -` (with the given extra flags) over the documents; throws with its output when it fails. */
export async function orchInject(docs: Doc[], flags: string[] = []): Promise<Doc[]> {
  const input = docs.map((d) => stringify(d)).join("---\n");
  const r = await runProcess(process.execPath, [MESHCTL_BIN, "orch-inject", "-f", "-", ...flags], { input });
  if (r.status !== 0) throw new Error(`meshctl orch-inject exited ${r.status}:\n${tail(r.stderr || r.stdout)}`);
  return parseYaml(r.stdout, "meshctl orch-inject's output");
}

const WORKLOADS = new Set(["Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"]);

/**
 * The Pods the orchestrator's controllers would create: each Deployment's
 * template `replicas` times (name `<deployment>-<template hash>-<n>`, owner
 * reference as the ReplicaSet's), Pods as they are. Other documents are not Pods.
 */
export function podsOf(docs: Doc[]): Doc[] {
  const pods: Doc[] = [];
  for (const d of docs) {
    if (d.kind === "Pod") pods.push(structuredClone(d));
    if (!WORKLOADS.has(d.kind)) continue;
    const template = d.spec?.template ?? {};
    const hash = createHash("sha256").update(JSON.stringify(template)).digest("hex").slice(0, 9);
    const replicas = d.kind === "DaemonSet" ? 1 : (d.spec?.replicas ?? 1);
    for (let i = 0; i < replicas; i++) {
      const meta = structuredClone(template.metadata ?? {});
      pods.push({
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
          ...meta,
          name: `${d.metadata.name}-${hash}-${i}`,
          namespace: d.metadata.namespace,
          labels: { ...(meta.labels ?? {}), "pod-template-hash": hash },
          ownerReferences: [
            { apiVersion: "apps/v1", kind: d.kind === "Deployment" ? "ReplicaSet" : d.kind, name: `${d.metadata.name}-${hash}`, controller: true },
          ],
        },
        spec: structuredClone(template.spec ?? {}),
      });
    }
  }
  return pods;
}

/** The Pod as the orchestrator reports it once scheduled and started: its address, Running, Ready. */
export function withStatus(pod: Doc, podIp: string, hostIp: string): Doc {
  const ready = { type: "Ready", status: "True" };
  return {
    ...pod,
    spec: { nodeName: "e2e-node", serviceAccountName: pod.spec.serviceAccountName ?? "default", ...pod.spec },
    status: { phase: "Running", podIP: podIp, podIPs: [{ ip: podIp }], hostIP: hostIp, conditions: [ready, { type: "ContainersReady", status: "True" }] },
  };
}

/** The Service with the cluster address the orchestrator assigned. */
export function withClusterIp(service: Doc, clusterIp: string): Doc {
  return { ...service, spec: { ...service.spec, clusterIP: clusterIp, clusterIPs: [clusterIp], type: service.spec?.type ?? "ClusterIP" } };
}

/** Whether the pod's labels match the Service's selector (a Service without one selects nothing). */
export function selects(service: Doc, pod: Doc): boolean {
  const selector: Record<string, string> | undefined = service.spec?.selector;
  if (!selector || Object.keys(selector).length === 0) return false;
  if (service.metadata?.namespace !== pod.metadata?.namespace) return false;
  return Object.entries(selector).every(([k, v]) => pod.metadata?.labels?.[k] === v);
}

/** A Service port's target port on a pod: a number, or a named container port resolved (as the endpoints controller does). */
export function targetPort(servicePort: Doc, pod: Doc): number | undefined {
  const target = servicePort.targetPort ?? servicePort.port;
  if (typeof target === "number") return target;
  if (/^\d+$/.test(String(target))) return Number(target);
  for (const c of pod.spec?.containers ?? [])
    for (const p of c.ports ?? []) if (p.name === target && (p.protocol ?? "TCP") === (servicePort.protocol ?? "TCP")) return p.containerPort;
  return undefined;
}

/** The names a Service answers to in the orchestrator's DNS, as seen from `namespace`. */
export function serviceNames(service: Doc, fromNamespace: string, domain = "cluster.local"): string[] {
  const { name, namespace } = service.metadata;
  const names = [`${name}.${namespace}`, `${name}.${namespace}.svc`, `${name}.${namespace}.svc.${domain}`];
  return fromNamespace === namespace ? [name, ...names] : names;
}
