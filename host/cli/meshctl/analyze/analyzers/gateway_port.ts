import { formatLabels, selectorSelects } from "../../../../mesh/labels.ts";
import type { Analyzer } from "../analyzer.ts";
import { GatewayPortNotDefinedOnService } from "../messages.ts";
import { gatewaysOf } from "./gateways.ts";

/**
 * Upstream's ingress gateway port check: a server port must be a port or a
 * numeric target port of a TCP port of the Services in front of the gateway
 * workloads the Gateway selects. Runs on whatever the input has: with no
 * Service for those workloads every server port is reported (a Gateway whose
 * selector matches no workload at all is gateway-selector's finding).
 */
export const gatewayPortAnalyzer: Analyzer = {
  name: "gateway-port",
  upstream: "gateway.IngressGatewayPortAnalyzer",
  description: "Gateway server ports that no Service of the selected gateway workloads exposes",
  codes: [GatewayPortNotDefinedOnService],
  needs: [],
  analyze(ctx) {
    for (const gw of gatewaysOf(ctx)) {
      const workloads = ctx.model.workloads.filter((w) => selectorSelects(gw.selector, w.labels));
      if (workloads.length === 0) continue;
      const ports = new Set<number>();
      for (const s of ctx.model.services) {
        if (s.source === "ServiceEntry" || !workloads.some((w) => w.namespace === s.namespace && selectorSelects(s.selector, w.labels))) continue;
        const resourcePorts = s.resource?.kind === "Service" ? s.resource.spec.ports : undefined;
        s.ports.forEach((p, i) => {
          if (resourcePorts && resourcePorts[i].protocol !== "TCP") return;
          ports.add(p.port);
          if (typeof p.targetPort === "number") ports.add(p.targetPort);
        });
      }
      gw.servers.forEach((server, i) => {
        if (ports.has(server.port.number)) return;
        gw.report(
          GatewayPortNotDefinedOnService,
          `The gateway is listening on a target port (port ${server.port.number}) that is not defined in the Service associated with its workload instances (Pod selector ${formatLabels(gw.selector)}). Expose it on that Service, or listen on one of its ports`,
          `spec.servers[${i}].port.number`,
        );
      });
    }
  },
};
