import { MESH_GATEWAY } from "../../../../config/resources/networking.ts";
import type { Analyzer } from "../analyzer.ts";
import { ReferencedResourceNotFound } from "../messages.ts";
import { isDefined } from "../model.ts";

/**
 * A VirtualService bound to a Gateway that is not defined: its routes are
 * served by no gateway (short names resolve in the VirtualService's
 * namespace). A Gateway the catalog refused is still defined, as upstream's
 * analyzer still knows it.
 */
export const virtualServiceGatewaysAnalyzer: Analyzer = {
  name: "virtualservice-gateways",
  upstream: "virtualservice.GatewayAnalyzer",
  description: "VirtualServices referring to a Gateway that is not defined",
  codes: [ReferencedResourceNotFound],
  needs: [],
  analyze(ctx) {
    for (const vs of ctx.catalog.byKind.VirtualService) {
      vs.spec.gateways.forEach((g, i) => {
        if (g === MESH_GATEWAY) return;
        const [ns, name] = g.includes("/") ? g.split("/", 2) : [vs.namespace, g];
        if (isDefined(ctx.catalog, ctx.model, "Gateway", ns, name)) return;
        ctx.report(ReferencedResourceNotFound, vs, `Referenced gateway not found: ${JSON.stringify(g)}`, `spec.gateways[${i}]`);
      });
    }
  },
};
