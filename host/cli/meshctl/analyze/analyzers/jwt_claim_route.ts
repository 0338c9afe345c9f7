import { findResource } from "../../../../config/catalog.ts";
import { MESH_GATEWAY } from "../../../../config/resources/networking.ts";
import { hasLabels, labelsMatch, selectorSelects } from "../../../../mesh/labels.ts";
import type { Analyzer } from "../analyzer.ts";
import { JwtClaimBasedRoutingWithoutRequestAuthN } from "../messages.ts";

/** `@request.auth.claims.<name>` or `@request.auth.claims[<name>]`: a header match on a JWT claim (upstream's claim routing). */
const CLAIM_KEY = /^@request\.auth\.claims(\.|\[)/;

/**
 * Upstream's JWT claim routing check: a VirtualService bound to a Gateway
 * that matches on a JWT claim needs a RequestAuthentication (in the root
 * namespace or the gateway workload's) selecting each gateway workload, else
 * the claims are never there to match.
 */
export const jwtClaimRouteAnalyzer: Analyzer = {
  name: "virtualservice-jwt-claim-route",
  upstream: "virtualservice.JWTClaimRouteAnalyzer",
  description: "Gateway VirtualServices routing on JWT claims with no RequestAuthentication for the gateway workloads",
  codes: [JwtClaimBasedRoutingWithoutRequestAuthN],
  needs: [],
  analyze(ctx) {
    const root = ctx.model.config.rootNamespace;
    for (const vs of ctx.catalog.byKind.VirtualService) {
      const key = vs.spec.http
        .flatMap((r) => r.match.flatMap((m) => [...Object.keys(m.headers), ...Object.keys(m.withoutHeaders)]))
        .find((k) => CLAIM_KEY.test(k));
      if (!key) continue;
      for (const g of vs.spec.gateways) {
        if (g === MESH_GATEWAY) continue;
        const [ns, name] = g.includes("/") ? g.split("/", 2) : [vs.namespace, g];
        const gw = findResource(ctx.catalog, "Gateway", ns, name);
        if (!gw) continue;
        for (const w of ctx.model.workloads) {
          if (!selectorSelects(gw.spec.selector, w.labels)) continue;
          const covered = ctx.catalog.byKind.RequestAuthentication.some(
            (ra) =>
              (ra.namespace === root || ra.namespace === w.namespace) &&
              (!hasLabels(ra.spec.selector?.matchLabels) || labelsMatch(ra.spec.selector?.matchLabels, w.labels)),
          );
          if (covered) continue;
          ctx.report(
            JwtClaimBasedRoutingWithoutRequestAuthN,
            vs,
            `The virtual service uses the JWT claim based routing (key: ${key}) but found no request authentication for the gateway (${ns}/${name}) pod (${w.name}). The request authentication must first be applied for the gateway pods to validate the JWT token and make the claims available for routing.`,
            "spec.http",
          );
        }
      }
    }
  },
};
