import type { Analyzer } from "../analyzer.ts";
import { ReferencedResourceNotFound } from "../messages.ts";
import { labelsMatch } from "../../../../mesh/labels.ts";
import { formatLabels } from "../model.ts";
import { gatewaysOf } from "./gateways.ts";

/**
 * Upstream's gateway analyzer: a Gateway whose selector matches no workload
 * in any namespace (nor the default ingress gateway upstream also assumes
 * offline) is served by nobody. Runs without Pod or Deployment documents too,
 * and on Gateways validation refuses, as upstream's.
 */
export const gatewaySelectorAnalyzer: Analyzer = {
  name: "gateway-selector",
  upstream: "gateway.IngressGatewayPortAnalyzer",
  description: "Gateways whose selector matches no Pod or Deployment (nor the default ingress gateway)",
  codes: [ReferencedResourceNotFound],
  needs: [],
  analyze(ctx) {
    for (const gw of gatewaysOf(ctx)) {
      const selector = gw.selector;
      if (Object.keys(selector).length === 0) continue;
      if (ctx.model.workloads.some((w) => labelsMatch(selector, w.labels))) continue;
      gw.report(ReferencedResourceNotFound, `Referenced selector not found: ${JSON.stringify(formatLabels(selector))}`, "spec.selector");
    }
  },
};
