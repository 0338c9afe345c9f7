import { type Document, isMap, isScalar, isSeq } from "yaml";
import { Field } from "../config/decode.ts";
import { REWRITE_PROBES_ANNOTATION, rewriteAppProbes } from "./app_probes.ts";
import { podCapture } from "./capture.ts";
import { INIT_CONTAINER_NAME, INJECT_ANNOTATION, STATUS_ANNOTATION, initContainer, sidecarContainer, sidecarVolumes, statusAnnotation } from "./sidecar.ts";
import type { InjectionSettings } from "./settings.ts";
import { IGNORED_NAMESPACES, type PodTemplatePath } from "./workloads.ts";
import { MESH_TLS_MODE, TLS_MODE_LABEL } from "../mesh/endpoints.ts";

/** What happened to one pod template. */
export type InjectOutcome = { injected: true; notes: string[] } | { injected: false; reason: string; warning: boolean };

const YES = ["y", "yes", "true", "on"];
/** Upstream's canonical service labels (`service.istio.io/canonical-name`, `-revision`), set when the pod has none. */
/** The control plane revision that injected the pod (upstream's `istio.io/rev` annotation). */
export const REVISION_ANNOTATION = "mesh.io/rev";
export const CANONICAL_NAME_LABEL = "service.mesh.io/canonical-name";
export const CANONICAL_REVISION_LABEL = "service.mesh.io/canonical-revision";
const NO = ["n", "no", "false", "off"];

/**
 * Injects the sidecar into the pod template at `base` + `path` of `doc`
 * (the capture init container, the sidecar container, the token and root
 * volumes, the app probes pointed at the agent, the status annotation and
 * upstream's `tlsMode` and canonical labels, host/mesh/endpoints.ts), editing the YAML tree in place (comments and key order stay). `workload` is
 * the decoded object at `base` and names fields in errors. Skips (leaving the
 * tree untouched) as upstream does: already injected, hostNetwork, system
 * namespaces, annotation `sidecar.mesh.io/inject` not true.
 */
export function injectPodTemplate(
  doc: Document,
  base: readonly (string | number)[],
  workload: Field,
  path: PodTemplatePath,
  s: InjectionSettings,
): InjectOutcome {
  const at = (field: Field, segments: readonly string[]) => segments.reduce((f, name) => f.get(name), field);
  const meta = at(workload, path.metadata);
  const spec = at(workload, path.spec);
  if (meta.present) meta.object();
  spec.object();
  const containers = spec.get("containers").nonEmptyList();
  let appPort: number | undefined;
  const names: string[] = [];
  for (const c of [...containers, ...spec.get("initContainers").list()]) {
    names.push(c.get("name").nonEmptyString());
    for (const p of c.get("ports").list()) {
      const port = p.get("containerPort").integer(1, 65535);
      if (appPort === undefined && containers.includes(c)) appPort = port;
    }
  }
  const annotations = meta.get("annotations").stringMap();
  const labels = meta.get("labels").stringMap();

  if (STATUS_ANNOTATION in annotations) return { injected: false, reason: `already injected (annotation ${STATUS_ANNOTATION})`, warning: false };
  if (names.includes(s.containerName) || names.includes(INIT_CONTAINER_NAME))
    return {
      injected: false,
      reason: `already has a container named ${names.includes(s.containerName) ? s.containerName : INIT_CONTAINER_NAME}`,
      warning: false,
    };
  if (spec.get("hostNetwork").bool(false)) return { injected: false, reason: "the pod uses hostNetwork", warning: false };
  const namespace = meta.get("namespace").optionalString() ?? workload.get("metadata").get("namespace").optionalString();
  if (namespace !== undefined && IGNORED_NAMESPACES.includes(namespace))
    return { injected: false, reason: `namespace ${namespace} is never injected`, warning: false };
  const inject = annotations[INJECT_ANNOTATION];
  if (inject !== undefined && !YES.includes(inject.toLowerCase())) {
    const known = NO.includes(inject.toLowerCase());
    return {
      injected: false,
      reason: known
        ? `sidecar injection disabled by annotation ${INJECT_ANNOTATION}: ${JSON.stringify(inject)}`
        : `annotation ${INJECT_ANNOTATION}: ${JSON.stringify(inject)} is not true or false; treated as false`,
      warning: !known,
    };
  }

  const notes: string[] = [];
  if (appPort === undefined) notes.push("no container declares a port; the sidecar forwards inbound traffic to its default --appPort 8080");
  const name = workload.get("metadata").get("name").optionalString();
  const app = labels.app ?? name ?? "unknown";
  const capture = podCapture(s, annotations, meta.get("annotations"));
  const rewrite =
    annotations[REWRITE_PROBES_ANNOTATION] === undefined ? s.rewriteAppProbes : YES.includes(annotations[REWRITE_PROBES_ANNOTATION].toLowerCase());
  const { rewrites, probers } = rewrite ? rewriteAppProbes(containers, capture.statusPort) : { rewrites: [], probers: {} };
  const appContainers = containers.map((c) => c.get("name").nonEmptyString());
  const ports = containers.flatMap((c) =>
    c
      .get("ports")
      .list()
      .map((p) => p.value),
  );
  const ns = namespace ?? "default";
  const { workloadName, owner } = podOwner(workload, labels, ns);
  const facts = { appPort, app, capture, probers, appContainers, ports, workloadName: workloadName ?? app, ...(owner ? { owner } : {}) };
  const specPath = [...base, ...path.spec];
  for (const r of rewrites) doc.setIn([...specPath, "containers", r.container, r.field], doc.createNode(r.probe));
  const inits = capture.args.length > 0 ? [INIT_CONTAINER_NAME] : [];
  if (inits.length > 0) appendTo(doc, [...specPath, "initContainers"], initContainer(s, facts));
  appendTo(doc, [...specPath, "containers"], sidecarContainer(s, facts));
  for (const volume of sidecarVolumes()) appendTo(doc, [...specPath, "volumes"], volume);
  const metaPath = [...base, ...path.metadata];
  ensureMap(doc, metaPath);
  ensureMap(doc, [...metaPath, "annotations"]);
  doc.setIn([...metaPath, "annotations", STATUS_ANNOTATION], statusAnnotation(s, inits));
  doc.setIn([...metaPath, "annotations", REVISION_ANNOTATION], s.revision ?? "default");
  // As upstream's injector: the label that tells clients' auto mutual TLS a sidecar answers on this pod's endpoints.
  ensureMap(doc, [...metaPath, "labels"]);
  doc.setIn([...metaPath, "labels", TLS_MODE_LABEL], MESH_TLS_MODE);
  if (labels[CANONICAL_NAME_LABEL] === undefined) doc.setIn([...metaPath, "labels", CANONICAL_NAME_LABEL], labels["app.kubernetes.io/name"] ?? app);
  if (labels[CANONICAL_REVISION_LABEL] === undefined)
    doc.setIn([...metaPath, "labels", CANONICAL_REVISION_LABEL], labels["app.kubernetes.io/version"] ?? labels.version ?? "latest");
  return { injected: true, notes };
}

/**
 * The workload a pod template belongs to, as upstream's injector names it
 * (MESH_META_WORKLOAD_NAME, MESH_META_OWNER `orch://apis/<apiVersion>/namespaces/<ns>/<kind>s/<name>`):
 * the workload document itself, or for a Pod its controller (a ReplicaSet with
 * the `pod-template-hash` label stands for its Deployment); a bare Pod is its own workload.
 */
function podOwner(workload: Field, labels: Readonly<Record<string, string>>, ns: string): { workloadName?: string; owner?: string } {
  const kind = workload.get("kind").optionalString();
  const apiVersion = workload.get("apiVersion").optionalString();
  const name = workload.get("metadata").get("name").optionalString();
  const ownerUrl = (v: string, k: string, n: string) => `orch://apis/${v}/namespaces/${ns}/${k.toLowerCase()}s/${n}`;
  if (kind !== "Pod") return kind && apiVersion && name ? { workloadName: name, owner: ownerUrl(apiVersion, kind, name) } : { workloadName: name };
  const controller = workload
    .get("metadata")
    .get("ownerReferences")
    .list()
    .map((r) => r.value as Record<string, unknown>)
    .find((r) => r.controller === true);
  if (!controller || typeof controller.kind !== "string" || typeof controller.name !== "string" || typeof controller.apiVersion !== "string")
    return { workloadName: name, ...(name && apiVersion ? { owner: ownerUrl(apiVersion, "Pod", name) } : {}) };
  const hash = labels["pod-template-hash"];
  if (controller.kind === "ReplicaSet" && hash && controller.name.endsWith(`-${hash}`)) {
    const deployment = controller.name.slice(0, -hash.length - 1);
    return { workloadName: deployment, owner: ownerUrl(controller.apiVersion, "Deployment", deployment) };
  }
  return { workloadName: controller.name, owner: ownerUrl(controller.apiVersion, controller.kind, controller.name) };
}

/** Makes the node at `path` a map; a new `metadata` goes before its sibling `spec`, where people expect it. */
function ensureMap(doc: Document, path: readonly (string | number)[]): void {
  const node = doc.getIn(path, true);
  if (isMap(node)) return;
  const parent = doc.getIn(path.slice(0, -1), true);
  const key = path[path.length - 1];
  if (node === undefined && isMap(parent)) {
    const specAt = parent.items.findIndex((pair) => isScalar(pair.key) && pair.key.value === "spec");
    if (specAt >= 0) {
      parent.items.splice(specAt, 0, doc.createPair(key, {}));
      return;
    }
  }
  doc.setIn(path, doc.createNode({}));
}

function appendTo(doc: Document, path: readonly (string | number)[], item: unknown): void {
  const node = doc.getIn(path, true);
  if (isSeq(node)) node.add(doc.createNode(item));
  else doc.setIn(path, doc.createNode([item]));
}
