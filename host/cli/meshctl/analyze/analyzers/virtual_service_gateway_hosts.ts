import { MESH_GATEWAY } from "../../../../config/resources/networking.ts";
import { hostsIntersect } from "../../../../mesh/hosts.ts";
import { serverHost, virtualServiceHosts } from "../../../../mesh/routing.ts";
import type { Analyzer } from "../analyzer.ts";
import { VirtualServiceHostNotFoundInGateway } from "../messages.ts";
import { findGateway, gatewaysOf } from "./gateways.ts";

/**
 * Upstream's check: a VirtualService bound to a Gateway none of whose
 * server hosts (visible to the VirtualService's namespace) covers any of its
 * hosts is not routed by that Gateway (nor by one that is not defined). One
 * host in common is enough. Gateways validation refuses count, read from
 * their documents.
 */
export const virtualServiceGatewayHostsAnalyzer: Analyzer = {
  name: "virtualservice-gateway-hosts",
  upstream: "virtualservice.GatewayAnalyzer",
  description: "VirtualServices none of whose hosts a bound Gateway serves",
  codes: [VirtualServiceHostNotFoundInGateway],
  needs: [],
  analyze(ctx) {
    const gateways = gatewaysOf(ctx);
    for (const vs of ctx.catalog.byKind.VirtualService) {
      const hosts = virtualServiceHosts(vs);
      vs.spec.gateways.forEach((g, i) => {
        if (g === MESH_GATEWAY) return;
        const [ns, name] = g.includes("/") ? g.split("/", 2) : [vs.namespace, g];
        // A Gateway that is not defined serves none of the hosts either (upstream reports both).
        const gw = findGateway(gateways, g, vs.namespace);
        const serverHosts = (gw?.servers ?? []).flatMap((s) => s.hosts.map((h) => serverHost(h, ns)));
        const served = hosts.some((h) => serverHosts.some((sh) => (sh.namespace === "*" || sh.namespace === vs.namespace) && hostsIntersect(sh.host, h)));
        if (served) return;
        ctx.report(
          VirtualServiceHostNotFoundInGateway,
          vs,
          `one or more host [${vs.spec.hosts.join(" ")}] defined in VirtualService ${vs.namespace}/${vs.name} not found in Gateway ${ns}/${name}.`,
          `spec.gateways[${i}]`,
        );
      });
    }
  },
};
