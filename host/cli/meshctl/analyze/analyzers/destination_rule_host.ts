import type { Analyzer } from "../analyzer.ts";
import { UnknownDestinationRuleHost } from "../messages.ts";
import { refusedServiceHost } from "../model.ts";
import { visibleServicesForHost } from "./service_lookup.ts";

/**
 * Upstream's subset analyzer, first half: a DestinationRule whose host
 * matches no service visible from its namespace (a Service, or a ServiceEntry
 * host exported there, or one validation refused) configures nothing; usually a typo or a wrong
 * namespace in the FQDN. Runs without Service documents too, as upstream's.
 */
export const destinationRuleHostAnalyzer: Analyzer = {
  name: "destinationrule-host",
  upstream: "destinationrule.SubsetSelectPodAnalyzer",
  description: "DestinationRules whose host matches no Service or ServiceEntry host",
  codes: [UnknownDestinationRuleHost],
  needs: [],
  analyze(ctx) {
    for (const dr of ctx.catalog.byKind.DestinationRule) {
      if (visibleServicesForHost(ctx.model, dr.spec.fqdn, dr.namespace, dr.spec.exportTo).length > 0) continue;
      if (refusedServiceHost(ctx.model, dr.spec.fqdn, ctx.catalog.domain)) continue;
      ctx.report(
        UnknownDestinationRuleHost,
        dr,
        `The host ${dr.spec.host} defined in the DestinationRule does not match any services in the mesh.`,
        "spec.host",
      );
    }
  },
};
