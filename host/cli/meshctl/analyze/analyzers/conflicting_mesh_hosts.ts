import { MESH_GATEWAY } from "../../../../config/resources/networking.ts";
import { boundGateways, virtualServiceHosts } from "../../../../mesh/routing.ts";
import type { Analyzer } from "../analyzer.ts";
import { ConflictingMeshGatewayVirtualServiceHosts } from "../messages.ts";

/** Upstream's check: several mesh-bound VirtualServices for one host (only one of them is used by sidecars). */
export const conflictingMeshHostsAnalyzer: Analyzer = {
  name: "conflicting-mesh-virtualservice-hosts",
  description: "The same host in several VirtualServices bound to the mesh gateway",
  codes: [ConflictingMeshGatewayVirtualServiceHosts],
  needs: [],
  analyze(ctx) {
    const byHost = new Map<string, Array<(typeof ctx.catalog.byKind.VirtualService)[number]>>();
    for (const vs of ctx.catalog.byKind.VirtualService) {
      if (!boundGateways(vs).includes(MESH_GATEWAY)) continue;
      for (const h of new Set(virtualServiceHosts(vs))) byHost.set(h, [...(byHost.get(h) ?? []), vs]);
    }
    for (const [host, list] of byHost) {
      if (list.length < 2) continue;
      const names = list.map((v) => `${v.namespace}/${v.name}`).join(",");
      for (const vs of list) ctx.report(ConflictingMeshGatewayVirtualServiceHosts, vs, `The VirtualServices ${names} associated with mesh gateway define the same host ${host} which can lead to undefined behavior. This can be fixed by merging the conflicting VirtualServices into a single resource.`, "spec.hosts");
    }
  },
};
