import { portProtocol } from "../../../../mesh/registry.ts";
import type { Analyzer } from "../analyzer.ts";
import { PortNameIsNotUnderNamingConvention } from "../messages.ts";

/** Upstream's protocol naming convention: `<protocol>[-<suffix>]` or appProtocol, so the mesh knows a port speaks HTTP. */
export const portNameAnalyzer: Analyzer = {
  name: "service-port-name",
  description: "Service ports whose name does not follow <protocol>[-<suffix>] and that have no appProtocol",
  codes: [PortNameIsNotUnderNamingConvention],
  needs: [],
  analyze(ctx) {
    for (const svc of ctx.catalog.byKind.Service) {
      svc.spec.ports.forEach((p, i) => {
        if (portProtocol(p) !== undefined) return;
        ctx.report(PortNameIsNotUnderNamingConvention, svc, `Port name ${p.name ?? "(none)"} (port: ${p.port}, targetPort: ${p.targetPort}) doesn't follow the naming convention of Service port: <protocol>[-<suffix>], or set appProtocol`, `spec.ports[${i}]`);
      });
    }
  },
};
