import type { Analyzer } from "../analyzer.ts";
import { IngressRouteRulesNotAffected } from "../messages.ts";

/**
 * Upstream's check: a VirtualService bound to gateways routes to a host
 * without subset while a VirtualService for that host splits it by subset:
 * the split applies to the mesh's sidecars, not to requests the gateway
 * routes (they reach every version).
 */
export const ingressRouteRulesAnalyzer: Analyzer = {
  name: "virtualservice-ingress-subsets",
  upstream: "virtualservice.DestinationHostAnalyzer",
  description: "Gateway VirtualServices routing without subset to a host another VirtualService splits by subset",
  codes: [IngressRouteRulesNotAffected],
  needs: [],
  analyze(ctx) {
    const vss = ctx.catalog.byKind.VirtualService;
    // VirtualServices that route a host of their own to one of its subsets.
    const splitting = vss.flatMap((vs) =>
      vs.spec.http
        .flatMap((r) => r.route.map((d) => d.destination))
        .filter((d) => d.subset !== undefined && vs.spec.hosts.includes(d.host))
        .map((d) => ({ vs, host: d.host })),
    );
    for (const vs of vss) {
      if (vs.spec.gateways.length === 0) continue;
      vs.spec.http.forEach((route, i) =>
        route.route.forEach((r, j) => {
          if (r.destination.subset !== undefined) return;
          for (const s of splitting) {
            if (s.host !== r.destination.host) continue;
            ctx.report(
              IngressRouteRulesNotAffected,
              vs,
              `Subset in virtual service ${s.vs.namespace}/${s.vs.name} has no effect on ingress gateway ${vs.namespace}/${vs.name} requests`,
              `spec.http[${i}].route[${j}].destination.host`,
            );
          }
        }),
      );
    }
  },
};
