import type { Analyzer } from "../analyzer.ts";
import { NamespaceNotInjected } from "../messages.ts";

/** The namespace label that turns sidecar injection on (`enabled`) or explicitly off (`disabled`). */
export const INJECTION_LABEL = "mesh-injection";

/**
 * Upstream IST0102: a Namespace document without the injection label gets no
 * sidecars from the injector, so none of the mesh policies apply to its
 * workloads. Info: leaving a namespace out of the mesh may be deliberate.
 * The root namespace is not reported.
 */
export const namespaceInjectionAnalyzer: Analyzer = {
  name: "namespace-injection",
  description: "Namespaces without the mesh-injection label",
  codes: [NamespaceNotInjected],
  needs: ["Namespace"],
  analyze(ctx) {
    for (const ns of ctx.catalog.byKind.Namespace) {
      if (ns.name === ctx.model.config.rootNamespace || ns.labels[INJECTION_LABEL] !== undefined) continue;
      ctx.report(
        NamespaceNotInjected,
        ns,
        `The namespace is not enabled for mesh injection. Label it ${INJECTION_LABEL}=enabled to inject sidecars into its workloads, or ${INJECTION_LABEL}=disabled to mark it as not needing injection.`,
        "metadata",
      );
    }
  },
};
