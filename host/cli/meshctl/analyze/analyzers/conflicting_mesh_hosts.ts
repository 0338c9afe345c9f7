import type { Resource } from "../../../../config/catalog.ts";
import { MESH_GATEWAY } from "../../../../config/resources/networking.ts";
import { hostsIntersect } from "../../../../mesh/hosts.ts";
import type { Analyzer } from "../analyzer.ts";
import { ConflictingMeshGatewayVirtualServiceHosts } from "../messages.ts";

type VirtualService = Resource<"VirtualService">;

/** The namespaces a VirtualService is visible in: `*`, or its `exportTo` (`.` = its own). */
function scopes(vs: VirtualService): string[] {
  const e = vs.spec.exportTo;
  if (e.length === 0 || e.includes("*")) return ["*"];
  return [...new Set(e.map((ns) => (ns === "." ? vs.namespace : ns)))];
}

/**
 * Upstream's check: several VirtualServices bound to the mesh gateway that
 * name the same host and are visible in the same namespace (`exportTo`):
 * sidecars there use only one. Two VirtualServices each exported only to
 * their own namespaces do not conflict.
 */
export const conflictingMeshHostsAnalyzer: Analyzer = {
  name: "conflicting-mesh-virtualservice-hosts",
  upstream: "virtualservice.ConflictingMeshGatewayHostsAnalyzer",
  description: "The same host in several VirtualServices bound to the mesh gateway and visible in the same namespace",
  codes: [ConflictingMeshGatewayVirtualServiceHosts],
  needs: [],
  analyze(ctx) {
    const byScopedHost = new Map<string, { scope: string; host: string; list: VirtualService[] }>();
    for (const vs of ctx.catalog.byKind.VirtualService) {
      if (vs.spec.gateways.length > 0 && !vs.spec.gateways.includes(MESH_GATEWAY)) continue;
      for (const scope of scopes(vs)) {
        for (const host of new Set(vs.spec.fqdns)) {
          const key = `${scope}/${host}`;
          const entry = byScopedHost.get(key) ?? { scope, host, list: [] };
          entry.list.push(vs);
          byScopedHost.set(key, entry);
        }
      }
    }
    const reported = new Set<VirtualService>();
    for (const [key, { scope, host, list }] of byScopedHost) {
      const everywhere = scope === "*" ? [] : [...byScopedHost.values()].filter((o) => o.scope === "*" && hostsIntersect(host, o.host)).flatMap((o) => o.list);
      const all = [...new Set([...list, ...everywhere])];
      if (all.length < 2) continue;
      const names = all
        .map((v) => `${v.namespace}/${v.name}`)
        .sort()
        .join(",");
      for (const vs of all) {
        if (reported.has(vs)) continue;
        reported.add(vs);
        ctx.report(
          ConflictingMeshGatewayVirtualServiceHosts,
          vs,
          `The VirtualServices ${names} associated with mesh gateway define the same host ${key} which can lead to undefined behavior. This can be fixed by merging the conflicting VirtualServices into a single resource.`,
          "metadata.name",
        );
      }
    }
  },
};
