import { hostsIntersect } from "../../../../mesh/hosts.ts";
import { serverHost } from "../../../../mesh/routing.ts";
import type { Analyzer } from "../analyzer.ts";
import { ConflictingGateways } from "../messages.ts";

const sameSelector = (a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => b[k] === v);

/** Upstream's conflicting-gateway check: two Gateways for the same workloads, port and host. */
export const conflictingGatewaysAnalyzer: Analyzer = {
  name: "conflicting-gateways",
  description: "Gateways with the same selector, port and an overlapping host",
  codes: [ConflictingGateways],
  needs: [],
  analyze(ctx) {
    const gws = ctx.catalog.byKind.Gateway;
    for (const [i, a] of gws.entries()) {
      for (const b of gws.slice(i + 1)) {
        if (!sameSelector(a.spec.selector, b.spec.selector)) continue;
        for (const sa of a.spec.servers) for (const sb of b.spec.servers) {
          if (sa.port.number !== sb.port.number) continue;
          const overlap = sa.hosts.some((ha) => sb.hosts.some((hb) => hostsIntersect(serverHost(ha, a.namespace).host, serverHost(hb, b.namespace).host)));
          if (!overlap) continue;
          const text = `Conflict with gateways ${a.namespace}/${a.name}, ${b.namespace}/${b.name} (workload selector ${Object.entries(a.spec.selector).map(([k, v]) => `${k}=${v}`).join(",")}, port ${sa.port.number}, hosts ${[...sa.hosts, ...sb.hosts].join(",")})`;
          ctx.report(ConflictingGateways, b, text, "spec.servers");
        }
      }
    }
  },
};
