import { portProtocol } from "../../../../mesh/registry.ts";
import type { Analyzer } from "../analyzer.ts";
import { ExternalNameServiceTypeInvalidPortName, PortNameIsNotUnderNamingConvention } from "../messages.ts";
import { SYSTEM_NAMESPACES } from "../model.ts";

/**
 * Upstream's protocol naming convention: `<protocol>[-<suffix>]` or
 * appProtocol, so the mesh knows what a port speaks. On an ExternalName
 * Service an unknown protocol (or a port named `tcp`) is a Warning of its
 * own: the proxy may not forward its traffic. The control plane's own
 * Services (label `mesh`, or `release: mesh`) and those of the orchestrator's
 * system namespaces are not checked.
 */
export const portNameAnalyzer: Analyzer = {
  name: "service-port-name",
  upstream: "service.PortNameAnalyzer",
  description: "Service ports whose name does not follow <protocol>[-<suffix>] and that have no appProtocol",
  codes: [PortNameIsNotUnderNamingConvention, ExternalNameServiceTypeInvalidPortName],
  needs: [],
  analyze(ctx) {
    for (const svc of ctx.catalog.byKind.Service) {
      if (svc.labels.mesh !== undefined || svc.labels.release === "mesh" || SYSTEM_NAMESPACES.has(svc.namespace)) continue;
      const external = svc.spec.type === "ExternalName";
      svc.spec.ports.forEach((p, i) => {
        if (portProtocol(p) !== undefined && !(external && p.name === "tcp")) return;
        if (external) {
          ctx.report(
            ExternalNameServiceTypeInvalidPortName,
            svc,
            `Port name ${p.name ?? "(none)"} of an ExternalName service does not say its protocol: the proxy may not forward tcp-named ports and unmatched TCP traffic correctly (name it <protocol>[-<suffix>], e.g. http, https, tls)`,
            `spec.ports[${i}]`,
          );
        } else {
          ctx.report(
            PortNameIsNotUnderNamingConvention,
            svc,
            `Port name ${p.name ?? "(none)"} (port: ${p.port}, targetPort: ${p.targetPort}) doesn't follow the naming convention of Service port: <protocol>[-<suffix>], or set appProtocol`,
            `spec.ports[${i}]`,
          );
        }
      });
    }
  },
};
