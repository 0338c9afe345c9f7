import { selectorSelects } from "../../../../mesh/labels.ts";
import type { Analyzer } from "../analyzer.ts";
import { GatewayPortNotOnWorkload } from "../messages.ts";

/** Upstream's gateway port check: a server port must be a port (or target port) of the Service in front of the gateway workloads (a Service port is translated to the container port). */
export const gatewayPortAnalyzer: Analyzer = {
  name: "gateway-port",
  description: "Gateway server ports that no Service of the selected gateway workloads exposes",
  codes: [GatewayPortNotOnWorkload],
  needs: ["Service"],
  analyze(ctx) {
    for (const gw of ctx.catalog.byKind.Gateway) {
      const workloads = ctx.model.gatewayWorkloads.filter((w) => selectorSelects(gw.spec.selector, w.labels));
      const services = ctx.model.services.filter((s) => workloads.some((w) => w.namespace === s.namespace && selectorSelects(s.selector, w.labels)));
      if (services.length === 0) continue;
      // Upstream also accepts a target (container) port number, as its bookinfo gateway on 8080 relies on.
      const ports = new Set(services.flatMap((s) => s.ports.flatMap((p) => [p.port, ...(typeof p.targetPort === "number" ? [p.targetPort] : [])])));
      gw.spec.servers.forEach((server, i) => {
        if (ports.has(server.port.number)) return;
        ctx.report(GatewayPortNotOnWorkload, gw, `The gateway refers to a port that is not exposed on the workload (pod selector ${JSON.stringify(Object.entries(gw.spec.selector).map(([k, v]) => `${k}=${v}`).join(","))}; port ${server.port.number}); Service ports: ${[...ports].sort((a, b) => a - b).join(", ")}`, `spec.servers[${i}].port.number`);
      });
    }
  },
};
