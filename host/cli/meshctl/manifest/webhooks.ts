import { GROUPS } from "./crds.ts";
import { type Obj, componentLabels, discoService } from "./components.ts";
import type { OperatorSpec } from "./values.ts";

/**
 * The admission webhook configurations disco-discovery serves on its
 * `--httpsAddr` (docs/discovery.md "Admission webhooks"): injection
 * (`mesh-sidecar-injector`, spec 2's INJECTION_WEBHOOK_CONFIG_NAME; Pods of
 * namespaces labelled `mesh-injection=enabled`, upstream's
 * `istio-injection`) and validation (`meshd-<namespace>`, spec 2's
 * VALIDATION_WEBHOOK_CONFIG_NAME; every mesh kind). `caBundle` is left
 * empty: the orchestrator's operator (or `meshctl x post-install webhook
 * enable --ca-bundle-file`) fills it with the root of disco-discovery's
 * certificate.
 */
export const INJECTION_WEBHOOK_NAME = "mesh-sidecar-injector";
export const INJECTION_NAMESPACE_LABEL = "mesh-injection";

export function validationWebhookName(namespace: string): string {
  return `meshd-${namespace}`;
}

export function injectionWebhook(spec: OperatorSpec): Obj {
  const service = discoService(spec);
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingWebhookConfiguration",
    metadata: { name: INJECTION_WEBHOOK_NAME, labels: componentLabels("disco") },
    webhooks: [
      {
        name: "sidecar-injector.mesh.io",
        clientConfig: { service: { name: service.name, namespace: service.namespace, path: "/inject", port: 443 } },
        rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] }],
        namespaceSelector: { matchLabels: { [INJECTION_NAMESPACE_LABEL]: "enabled" } },
        failurePolicy: "Fail",
        sideEffects: "None",
        admissionReviewVersions: ["v1"],
        timeoutSeconds: 10,
      },
    ],
  };
}

export function validationWebhook(spec: OperatorSpec): Obj {
  const service = discoService(spec);
  const groups = GROUPS.map((g) => ({ group: g.storage.split("/")[0], versions: g.apiVersions.map((v) => v.split("/")[1]) }));
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: validationWebhookName(spec.meshNamespace), labels: componentLabels("disco") },
    webhooks: [
      {
        name: "validation.mesh.io",
        clientConfig: { service: { name: service.name, namespace: service.namespace, path: "/validate", port: 443 } },
        rules: groups.map((g) => ({ operations: ["CREATE", "UPDATE"], apiGroups: [g.group], apiVersions: g.versions, resources: ["*"] })),
        // Upstream's: while disco-discovery is not reachable the orchestrator still accepts configuration.
        failurePolicy: "Ignore",
        sideEffects: "None",
        admissionReviewVersions: ["v1"],
        timeoutSeconds: 10,
      },
    ],
  };
}
