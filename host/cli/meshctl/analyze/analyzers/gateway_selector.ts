import type { Analyzer } from "../analyzer.ts";
import { ReferencedResourceNotFound } from "../messages.ts";
import { labelsMatch } from "../../../../mesh/labels.ts";
import { formatLabels } from "../model.ts";

/** Upstream's gateway analyzer: a Gateway whose selector matches no workload in any namespace is served by nobody. */
export const gatewaySelectorAnalyzer: Analyzer = {
  name: "gateway-selector",
  upstream: "gateway.IngressGatewayPortAnalyzer",
  description: "Gateways whose selector matches no Pod or Deployment (nor the default ingress gateway)",
  codes: [ReferencedResourceNotFound],
  needs: ["Workload"],
  analyze(ctx) {
    for (const gw of ctx.catalog.byKind.Gateway) {
      const selector = gw.spec.selector;
      if (Object.keys(selector).length === 0) continue;
      if (ctx.model.workloads.some((w) => labelsMatch(selector, w.labels))) continue;
      ctx.report(ReferencedResourceNotFound, gw, `Referenced selector not found: ${JSON.stringify(formatLabels(selector))}`, "spec.selector");
    }
  },
};
