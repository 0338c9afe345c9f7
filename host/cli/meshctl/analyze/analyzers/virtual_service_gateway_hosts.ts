import { findResource } from "../../../../config/catalog.ts";
import { MESH_GATEWAY } from "../../../../config/resources/networking.ts";
import { hostsIntersect } from "../../../../mesh/hosts.ts";
import { serverHost, virtualServiceHosts } from "../../../../mesh/routing.ts";
import type { Analyzer } from "../analyzer.ts";
import { VirtualServiceHostNotFoundInGateway } from "../messages.ts";

/** Upstream's check: a VirtualService bound to a Gateway whose servers do not cover its host is not routed by that Gateway. */
export const virtualServiceGatewayHostsAnalyzer: Analyzer = {
  name: "virtualservice-gateway-hosts",
  description: "VirtualService hosts that no server of a bound Gateway covers",
  codes: [VirtualServiceHostNotFoundInGateway],
  needs: [],
  analyze(ctx) {
    for (const vs of ctx.catalog.byKind.VirtualService) {
      const hosts = virtualServiceHosts(vs);
      vs.spec.gateways.forEach((g, i) => {
        if (g === MESH_GATEWAY) return;
        const [ns, name] = g.includes("/") ? g.split("/", 2) : [vs.namespace, g];
        const gw = findResource(ctx.catalog, "Gateway", ns, name);
        if (!gw) return;
        const serverHosts = gw.spec.servers.flatMap((s) => s.hosts.map((h) => serverHost(h, gw.namespace)));
        for (const h of hosts) {
          if (serverHosts.some((sh) => (sh.namespace === "*" || sh.namespace === vs.namespace) && hostsIntersect(sh.host, h))) continue;
          ctx.report(VirtualServiceHostNotFoundInGateway, vs, `one or more host [${h}] defined in VirtualService ${vs.namespace}/${vs.name} not found in Gateway ${ns}/${name}.`, `spec.gateways[${i}]`);
        }
      });
    }
  },
};
