import fastJsonPatch from "fast-json-patch";
import { Document } from "yaml";
import { type CatalogChecks, decodeDocuments } from "../config/catalog.ts";
import { Field } from "../config/decode.ts";
import { resourceName } from "../config/documents.ts";
import { ConfigError, formatProblem } from "../config/errors.ts";
import { formatConfigProblem } from "../config/problems.ts";
import { injectPodTemplate } from "../inject/inject_template.ts";
import type { InjectionSettings } from "../inject/settings.ts";
import { podTemplatePath } from "../inject/workloads.ts";

/**
 * The orchestrator's admission webhooks (`AdmissionReview`,
 * `admission.k8s.io/v1`), as disco-discovery serves them on `--httpsAddr`:
 * validation by the decoder `meshctl validate` uses, injection by the code
 * `meshctl orch-inject` uses, answered as a JSONPatch. Pure: a review in, a
 * review out, plus what happened (for the counters).
 */

export const ADMISSION_API_VERSION = "admission.k8s.io/v1";

export interface AdmissionRequest {
  uid: string;
  kind?: { group?: string; version?: string; kind?: string };
  namespace?: string;
  name?: string;
  operation?: string;
  object?: Record<string, unknown>;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: { code?: number; message: string };
  patchType?: "JSONPatch";
  /** base64 of the JSON Patch (RFC 6902) document. */
  patch?: string;
  warnings?: string[];
}

export interface AdmissionReview {
  apiVersion: string;
  kind: "AdmissionReview";
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

/** A request body that is not an AdmissionReview v1: answered 400 with the reason. */
export class BadReview extends Error {}

/** The review a body carries; throws BadReview naming what is wrong. */
export function parseReview(body: string): AdmissionRequest {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (e) {
    throw new BadReview(`the body is not JSON: ${(e as Error).message}`);
  }
  const review = value as Partial<AdmissionReview>;
  if (typeof value !== "object" || value === null || review.kind !== "AdmissionReview") throw new BadReview("expected kind: AdmissionReview");
  if (review.apiVersion !== ADMISSION_API_VERSION)
    throw new BadReview(`apiVersion: expected ${ADMISSION_API_VERSION}, got ${JSON.stringify(review.apiVersion)}`);
  const request = review.request;
  if (typeof request !== "object" || request === null || typeof request.uid !== "string" || request.uid === "")
    throw new BadReview("request.uid: expected the request's uid");
  return request;
}

export function reviewOf(response: AdmissionResponse): AdmissionReview {
  return { apiVersion: ADMISSION_API_VERSION, kind: "AdmissionReview", response };
}

/** `passed`/`failed` (collector_validation_*): a refused resource carries every problem, one a line. */
export function validate(request: AdmissionRequest, checks: CatalogChecks): { response: AdmissionResponse; outcome: "passed" | "failed" } {
  const object = request.object;
  if (request.operation === "DELETE" || object === undefined) return { response: { uid: request.uid, allowed: true }, outcome: "passed" };
  const metadata = (object.metadata ?? {}) as { name?: unknown; namespace?: unknown };
  const namespace = typeof metadata.namespace === "string" ? metadata.namespace : request.namespace;
  const doc = {
    file: "AdmissionReview",
    index: 0,
    apiVersion: String(object.apiVersion ?? ""),
    kind: String(object.kind ?? request.kind?.kind ?? ""),
    name: String(metadata.name ?? request.name ?? ""),
    namespace,
    body: object,
  };
  const catalog = decodeDocuments([doc], checks, namespace ? { defaultNamespace: namespace } : {});
  const errors = catalog.problems.filter((p) => p.severity === "error");
  const warnings = catalog.problems.filter((p) => p.severity !== "error").map((p) => formatConfigProblem(p).replace(/^AdmissionReview: /, ""));
  if (errors.length === 0) return { response: { uid: request.uid, allowed: true, ...(warnings.length > 0 ? { warnings } : {}) }, outcome: "passed" };
  const message = errors.map((p) => formatConfigProblem(p).replace(/^AdmissionReview: /, "")).join("\n");
  return { response: { uid: request.uid, allowed: false, status: { code: 400, message } }, outcome: "failed" };
}

/** The label a workload names its control plane's revision with (upstream's `istio.io/rev`). */
export const REVISION_LABEL = "mesh.io/rev";

/**
 * Why a control plane of `revision` (REVISION; "" for none) does not inject a
 * pod with these labels, or undefined when it does. Upstream's orchestrator
 * picks the revision's webhook by the `istio.io/rev` label of the namespace
 * or pod; the review carries the pod's labels only, so they are matched here:
 * a revision injects the pods labelled with it, the control plane without one
 * the pods labelled with none.
 */
export function revisionMismatch(labels: Readonly<Record<string, unknown>>, revision: string): string | undefined {
  const wanted = typeof labels[REVISION_LABEL] === "string" ? (labels[REVISION_LABEL] as string) : "";
  if (wanted === revision) return undefined;
  if (revision === "") return `the pod selects revision ${JSON.stringify(wanted)} (label ${REVISION_LABEL}); this control plane has none (REVISION unset)`;
  return wanted === ""
    ? `the pod has no label ${REVISION_LABEL}: ${revision} (REVISION=${revision} injects its revision's pods only)`
    : `the pod selects revision ${JSON.stringify(wanted)} (label ${REVISION_LABEL}), not this control plane's ${JSON.stringify(revision)}`;
}

/** `success`/`skip`/`failure` (sidecar_injection_*); `revision`: REVISION (host/discovery/admission.ts revisionMismatch). */
export function inject(
  request: AdmissionRequest,
  settings: InjectionSettings,
  revision = "",
): { response: AdmissionResponse; outcome: "success" | "skip" | "failure"; reason?: string } {
  const pod = request.object;
  if (pod === undefined || (request.kind?.kind !== undefined && request.kind.kind !== "Pod")) {
    return { response: { uid: request.uid, allowed: true }, outcome: "skip", reason: "not a Pod" };
  }
  const metadata = (pod.metadata ?? {}) as Record<string, unknown>;
  const mismatch = revisionMismatch((metadata.labels ?? {}) as Record<string, unknown>, revision);
  if (mismatch) return { response: { uid: request.uid, allowed: true }, outcome: "skip", reason: mismatch };
  // A Pod being created often has no namespace yet: the request's applies (system namespaces are never injected).
  const working = structuredClone(pod);
  const namespaceGiven = typeof metadata.namespace === "string";
  if (!namespaceGiven && request.namespace) working.metadata = { ...(working.metadata as object), namespace: request.namespace };
  const resource = resourceName({ kind: "Pod", name: String(metadata.name ?? metadata.generateName ?? request.name ?? ""), namespace: request.namespace });
  try {
    const doc = new Document(working);
    const outcome = injectPodTemplate(
      doc,
      [],
      Field.root(working, { file: "AdmissionReview", resource, warnings: [] }),
      podTemplatePath("v1", "Pod")!,
      settings,
    );
    if (!outcome.injected) return { response: { uid: request.uid, allowed: true }, outcome: "skip", reason: outcome.reason };
    const injected = doc.toJS() as Record<string, unknown>;
    if (!namespaceGiven) delete (injected.metadata as Record<string, unknown>).namespace;
    const patch = fastJsonPatch.compare(pod, injected);
    return {
      response: {
        uid: request.uid,
        allowed: true,
        patchType: "JSONPatch",
        patch: Buffer.from(JSON.stringify(patch)).toString("base64"),
        ...(outcome.notes.length > 0 ? { warnings: outcome.notes.map((n) => formatProblem({ resource }, "", n)) } : {}),
      },
      outcome: "success",
    };
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    const message = e.message.replace(/^AdmissionReview: /, "");
    return { response: { uid: request.uid, allowed: false, status: { code: 400, message } }, outcome: "failure", reason: message };
  }
}
