import { MESH_GATEWAY } from "../../../../config/resources/networking.ts";
import type { Analyzer } from "../analyzer.ts";
import { ReferencedResourceNotFound, VirtualServiceDestinationPortSelectorRequired } from "../messages.ts";
import { hostMatches, servicesForHost } from "../model.ts";

/**
 * Route destinations (upstream's destination-host and destination-rule
 * analyzers): the host must be a known Service (a route to an unknown host
 * has no upstream: 503), its port one the Service has, its subset one a
 * DestinationRule for that host defines. A VirtualService bound to gateways
 * must name the port of a multi-port Service. ServiceEntry is not modelled:
 * suppress MSH0101 for external hosts with `-S`.
 */
export const virtualServiceDestinationsAnalyzer: Analyzer = {
  name: "virtualservice-destinations",
  description: "VirtualService destinations whose host, port or subset is not defined",
  codes: [ReferencedResourceNotFound, VirtualServiceDestinationPortSelectorRequired],
  needs: ["Service"],
  analyze(ctx) {
    for (const vs of ctx.catalog.byKind.VirtualService) {
      const onGateway = vs.spec.gateways.some((g) => g !== MESH_GATEWAY);
      vs.spec.http.forEach((route, i) => {
        route.route.forEach((r, j) => {
          const d = r.destination;
          const at = `spec.http[${i}].route[${j}].destination`;
          const services = servicesForHost(ctx.model, d.fqdn);
          if (services.length === 0) {
            ctx.report(ReferencedResourceNotFound, vs, `Referenced host not found: ${JSON.stringify(d.host)}`, `${at}.host`);
            return;
          }
          const ports = [...new Set(services.flatMap((s) => s.ports.map((p) => p.port)))].sort((a, b) => a - b);
          if (d.port !== undefined && !ports.includes(d.port)) {
            ctx.report(ReferencedResourceNotFound, vs, `Referenced host+port not found: ${JSON.stringify(`${d.host}:${d.port}`)}`, `${at}.port`);
          } else if (d.port === undefined && onGateway && ports.length > 1) {
            ctx.report(
              VirtualServiceDestinationPortSelectorRequired,
              vs,
              `This VirtualService routes to a service ${JSON.stringify(d.host)} that exposes multiple ports [${ports.join(", ")}]. Specifying a port in the destination is required to disambiguate.`,
              at,
            );
          }
          if (d.subset !== undefined) {
            const defined = ctx.catalog.byKind.DestinationRule.some(
              (dr) => services.some((s) => hostMatches(dr.spec.fqdn, s.fqdn)) && dr.spec.subsets.some((s) => s.name === d.subset),
            );
            if (!defined) ctx.report(ReferencedResourceNotFound, vs, `Referenced host+subset in destinationrule not found: ${JSON.stringify(`${d.host}+${d.subset}`)}`, `${at}.subset`);
          }
        });
      });
    }
  },
};
