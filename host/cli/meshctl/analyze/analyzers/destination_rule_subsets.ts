import { labelsMatch } from "../../../../mesh/labels.ts";
import type { Analyzer } from "../analyzer.ts";
import { DestinationRuleSubsetNotSelectPods } from "../messages.ts";
import type { Workload } from "../model.ts";
import { visibleServicesForHost } from "./service_lookup.ts";

/**
 * Labels a workload gets from the node it runs on (upstream adds them to
 * pod labels before matching subsets). Offline the node of a Deployment's
 * pods, or of a Pod without `spec.nodeName` and its Node document, is not
 * known: a subset label on one of these keys is then not held against it.
 */
export const NODE_TOPOLOGY_LABELS: ReadonlySet<string> = new Set([
  "topology.kubernetes.io/region",
  "topology.kubernetes.io/zone",
  "topology.mesh.io/subzone",
  "kubernetes.io/hostname",
]);

/** Whether a subset's labels select a workload, node topology labels taken from its node when known. */
export function subsetSelects(
  subset: Readonly<Record<string, string>>,
  workload: Workload,
  nodeLabels: ReadonlyMap<string, Readonly<Record<string, string>>>,
): boolean {
  const node = workload.kind === "Pod" ? workload.resource?.kind === "Pod" && workload.resource.spec.nodeName : undefined;
  const known = node ? nodeLabels.get(node) : undefined;
  for (const [k, v] of Object.entries(subset)) {
    if (!NODE_TOPOLOGY_LABELS.has(k) || workload.labels[k] !== undefined) {
      if (workload.labels[k] !== v) return false;
    } else if (v === "" || (known !== undefined && known[k] !== v)) return false;
  }
  return true;
}

/**
 * Upstream's subset analyzer, second half: for a DestinationRule whose host
 * is a known service (destinationrule-host reports the others), a subset
 * whose labels (with a ServiceEntry's workloadSelector) select none of the
 * input's workloads (any of them, as upstream matches): traffic routed to it finds no endpoint.
 */
export const destinationRuleSubsetsAnalyzer: Analyzer = {
  name: "destinationrule-subsets",
  upstream: "destinationrule.SubsetSelectPodAnalyzer",
  description: "DestinationRule subsets whose labels select no workload",
  codes: [DestinationRuleSubsetNotSelectPods],
  needs: [],
  analyze(ctx) {
    const nodes = ctx.model.nodeLabels;
    for (const dr of ctx.catalog.byKind.DestinationRule) {
      const services = visibleServicesForHost(ctx.model, dr.spec.fqdn, dr.namespace, dr.spec.exportTo);
      if (services.length === 0) continue;
      const entrySelector = services.find((s) => s.source === "ServiceEntry")?.selector ?? {};
      // Upstream matches any workload of the input, not only the service's own.
      const candidates = ctx.model.workloads;
      dr.spec.subsets.forEach((subset, i) => {
        if (candidates.some((w) => labelsMatch(entrySelector, w.labels) && subsetSelects(subset.labels, w, nodes))) return;
        ctx.report(
          DestinationRuleSubsetNotSelectPods,
          dr,
          `The Subset ${subset.name} defined in the DestinationRule does not select any pods. Which may lead to 503 UH (NoHealthyUpstream).`,
          `spec.subsets[${i}]`,
        );
      });
    }
  },
};
