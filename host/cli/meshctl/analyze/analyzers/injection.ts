import { DEFAULT_CONTAINER_NAME } from "../../../../inject/settings.ts";
import { INJECT_ANNOTATION } from "../../../../inject/sidecar.ts";
import type { Analyzer } from "../analyzer.ts";
import { NamespaceMultipleInjectionLabels, NamespaceNotInjected, PodMissingProxy } from "../messages.ts";
import { SYSTEM_NAMESPACES } from "../model.ts";

/** The namespace label that turns sidecar injection on (`enabled`) or explicitly off (`disabled`). */
export const INJECTION_LABEL = "mesh-injection";
/** The revision label that also selects an injector (upstream's `istio.io/rev`). */
export const REVISION_LABEL = "mesh.io/rev";
/** The data plane mode label (upstream's `istio.io/dataplane-mode`). */
export const DATAPLANE_MODE_LABEL = "mesh.io/dataplane-mode";

/**
 * Upstream's injection analyzer, on Namespace and Pod documents:
 * - a namespace without an injection label gets no sidecars: NamespaceNotInjected (Info; the root, system and ambient (`mesh.io/dataplane-mode=ambient`) namespaces are not reported);
 * - a namespace with both `mesh-injection` and a revision or data plane mode label: NamespaceMultipleInjectionLabels;
 * - a Pod of a namespace labelled `mesh-injection=enabled` without the proxy container, not opted out (`sidecar.mesh.io/inject: "false"` label or annotation) and not on the host network: PodMissingProxy.
 */
export const injectionAnalyzer: Analyzer = {
  name: "injection",
  upstream: "injection.Analyzer",
  description: "Namespaces without (or with conflicting) injection labels, and pods of injected namespaces running without the proxy",
  codes: [NamespaceNotInjected, NamespaceMultipleInjectionLabels, PodMissingProxy],
  needs: [],
  analyze(ctx) {
    const injected = new Set<string>();
    for (const ns of ctx.catalog.byKind.Namespace) {
      if (ns.name === ctx.model.config.rootNamespace || SYSTEM_NAMESPACES.has(ns.name)) continue;
      const injection = ns.labels[INJECTION_LABEL];
      const labels = injection !== undefined ? [`${INJECTION_LABEL}=${injection}`] : [];
      for (const l of [REVISION_LABEL, DATAPLANE_MODE_LABEL]) {
        if (ns.labels[l] !== undefined && (injection === undefined || injection === "enabled")) labels.push(`${l}=${ns.labels[l]}`);
      }
      if (labels.length > 1)
        ctx.report(
          NamespaceMultipleInjectionLabels,
          ns,
          `The namespace has more than one type of injection labels [${labels.join(" ")}], which may lead to undefined behavior. Make sure only one injection label exists.`,
          "metadata.labels",
        );
      // An ambient namespace has no sidecars by design.
      if (ns.labels[DATAPLANE_MODE_LABEL] === "ambient") continue;
      if (!injection && ns.labels[REVISION_LABEL] === undefined) {
        ctx.report(
          NamespaceNotInjected,
          ns,
          `The namespace is not enabled for mesh injection. Label it ${INJECTION_LABEL}=enabled to inject sidecars into its workloads, or ${INJECTION_LABEL}=disabled to mark it as not needing injection.`,
          "metadata.name",
        );
        continue;
      }
      if (injection === "enabled") injected.add(ns.name);
    }
    for (const pod of ctx.catalog.byKind.Pod) {
      if (!injected.has(pod.namespace)) continue;
      const inject = pod.labels[INJECT_ANNOTATION] ?? pod.annotations[INJECT_ANNOTATION];
      if (inject?.toLowerCase() === "false" || pod.spec.hostNetwork) continue;
      if (pod.spec.containers.some((c) => c.name === DEFAULT_CONTAINER_NAME)) continue;
      ctx.report(
        PodMissingProxy,
        pod,
        `The pod ${pod.namespace}/${pod.name} is missing the mesh proxy. This can often be resolved by restarting or redeploying the workload.`,
        "spec.containers",
      );
    }
  },
};
