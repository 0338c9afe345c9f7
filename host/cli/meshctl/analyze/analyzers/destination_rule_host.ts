import type { Analyzer } from "../analyzer.ts";
import { DestinationRuleHostNotFound } from "../messages.ts";
import { servicesForHost } from "../model.ts";

/** A DestinationRule whose host matches no known Service configures nothing; usually a typo or a wrong namespace in the FQDN. */
export const destinationRuleHostAnalyzer: Analyzer = {
  name: "destinationrule-host",
  description: "DestinationRules whose host matches no known Service",
  codes: [DestinationRuleHostNotFound],
  needs: ["Service"],
  analyze(ctx) {
    for (const dr of ctx.catalog.byKind.DestinationRule) {
      if (servicesForHost(ctx.model, dr.spec.fqdn).length > 0) continue;
      const resolved = dr.spec.fqdn !== dr.spec.host ? ` (${dr.spec.fqdn})` : "";
      ctx.report(DestinationRuleHostNotFound, dr, `DestinationRule host ${JSON.stringify(dr.spec.host)}${resolved} matches no known Service: the rule applies to nothing`, "spec.host");
    }
  },
};
