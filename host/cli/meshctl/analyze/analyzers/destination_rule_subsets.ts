import { labelsMatch } from "../../../../mesh/labels.ts";
import type { Analyzer } from "../analyzer.ts";
import { DestinationRuleSubsetNoPods } from "../messages.ts";
import { servicesForHost, workloadsOfService } from "../model.ts";

/** A subset whose labels pick none of the service's workloads: traffic routed to it finds no endpoint. */
export const destinationRuleSubsetsAnalyzer: Analyzer = {
  name: "destinationrule-subsets",
  description: "DestinationRule subsets whose labels select no workload of the service",
  codes: [DestinationRuleSubsetNoPods],
  needs: ["Service", "Workload"],
  analyze(ctx) {
    for (const dr of ctx.catalog.byKind.DestinationRule) {
      const services = servicesForHost(ctx.model, dr.spec.fqdn).filter((s) => s.resource !== undefined);
      const workloads = services.flatMap((s) => workloadsOfService(ctx.model, s));
      if (workloads.length === 0) continue;
      dr.spec.subsets.forEach((subset, i) => {
        if (workloads.some((w) => labelsMatch(subset.labels, w.labels))) return;
        ctx.report(DestinationRuleSubsetNoPods, dr, `Subset ${subset.name} (labels ${Object.entries(subset.labels).map(([k, v]) => `${k}=${v}`).join(",")}) selects no workload of ${dr.spec.fqdn}`, `spec.subsets[${i}]`);
      });
    }
  },
};
