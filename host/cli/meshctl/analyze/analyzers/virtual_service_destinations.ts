import type { Resource } from "../../../../config/catalog.ts";
import type { RouteDestination } from "../../../../config/resources/networking.ts";
import type { AnalysisContext, Analyzer } from "../analyzer.ts";
import { ReferencedResourceNotFound, VirtualServiceDestinationPortSelectorRequired } from "../messages.ts";
import { hostMatches, refusedServiceHost } from "../model.ts";
import { visibleServicesForHost } from "./service_lookup.ts";

/** Every route and mirror destination of a VirtualService with the field path it is at. */
export function destinations(vs: Resource<"VirtualService">): Array<{ d: RouteDestination; at: string; mirror: boolean }> {
  const out: Array<{ d: RouteDestination; at: string; mirror: boolean }> = [];
  vs.spec.http.forEach((route, i) => {
    route.route.forEach((r, j) => out.push({ d: r.destination, at: `spec.http[${i}].route[${j}].destination`, mirror: false }));
    if (route.mirror) out.push({ d: route.mirror, at: `spec.http[${i}].mirror`, mirror: true });
  });
  return out;
}

/** Whether a DestinationRule for the destination's host (decoded, or refused but naming that host and subset) defines the subset. */
function subsetDefined(ctx: AnalysisContext, d: RouteDestination): boolean {
  if (
    ctx.catalog.byKind.DestinationRule.some(
      (dr) => (dr.spec.fqdn === d.fqdn || hostMatches(dr.spec.fqdn, d.fqdn)) && dr.spec.subsets.some((s) => s.name === d.subset),
    )
  )
    return true;
  // Upstream still knows a DestinationRule its validation refuses: look at the refused documents' own words.
  return ctx.model.refused.some((r) => {
    if (r.kind !== "DestinationRule") return false;
    const spec = (r.body.spec ?? {}) as { host?: unknown; subsets?: unknown };
    const host = typeof spec.host === "string" ? (spec.host.includes(".") ? spec.host : `${spec.host}.${r.namespace}.svc.${ctx.catalog.domain}`) : undefined;
    return (
      host !== undefined &&
      hostMatches(host.toLowerCase(), d.fqdn) &&
      Array.isArray(spec.subsets) &&
      spec.subsets.some((s) => (s as { name?: unknown })?.name === d.subset)
    );
  });
}

/**
 * Route and mirror destinations (upstream's destination-host and
 * destination-rule analyzers): the host must be a Service or ServiceEntry
 * host visible to the VirtualService, or one validation refused (a route to
 * an unknown host answers 503), its port one the service has (a service with several ports needs the
 * port named), its subset one a DestinationRule for that host defines.
 */
export const virtualServiceDestinationsAnalyzer: Analyzer = {
  name: "virtualservice-destinations",
  upstream: "virtualservice.DestinationHostAnalyzer, virtualservice.DestinationRuleAnalyzer",
  description: "VirtualService destinations whose host, port or subset is not defined",
  codes: [ReferencedResourceNotFound, VirtualServiceDestinationPortSelectorRequired],
  needs: [],
  analyze(ctx) {
    for (const vs of ctx.catalog.byKind.VirtualService) {
      for (const { d, at, mirror } of destinations(vs)) {
        const services = visibleServicesForHost(ctx.model, d.fqdn, vs.namespace, vs.spec.exportTo);
        if (services.length === 0) {
          if (!refusedServiceHost(ctx.model, d.fqdn, ctx.catalog.domain))
            ctx.report(ReferencedResourceNotFound, vs, `Referenced ${mirror ? "mirror host" : "host"} not found: ${JSON.stringify(d.host)}`, `${at}.host`);
        } else {
          const ports = [...new Set(services[0].ports.map((p) => p.port))].sort((a, b) => a - b);
          if (d.port !== undefined && !ports.includes(d.port)) {
            ctx.report(ReferencedResourceNotFound, vs, `Referenced host:port not found: ${JSON.stringify(`${d.host}:${d.port}`)}`, `${at}.port`);
          } else if (d.port === undefined && ports.length > 1) {
            ctx.report(
              VirtualServiceDestinationPortSelectorRequired,
              vs,
              `This VirtualService routes to a service ${JSON.stringify(d.host)} that exposes multiple ports [${ports.join(" ")}]. Specifying a port in the destination is required to disambiguate.`,
              at,
            );
          }
        }
        if (d.subset !== undefined && !subsetDefined(ctx, d)) {
          ctx.report(
            ReferencedResourceNotFound,
            vs,
            `Referenced ${mirror ? "mirror" : "host"}+subset in destinationrule not found: ${JSON.stringify(`${d.host}+${d.subset}`)}`,
            `${at}.subset`,
          );
        }
      }
    }
  },
};
