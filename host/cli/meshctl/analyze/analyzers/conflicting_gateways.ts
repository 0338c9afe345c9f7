import { formatLabels, labelsMatch } from "../../../../mesh/labels.ts";
import type { Analyzer } from "../analyzer.ts";
import { ConflictingGateways } from "../messages.ts";
import type { MeshModel } from "../model.ts";
import { type AnalyzedGateway as Gateway, gatewaysOf } from "./gateways.ts";

/**
 * Whether two Gateways may run on the same workloads: the same selector, or
 * one selector within the other (`mesh=ingressgateway` and
 * `mesh=ingressgateway,app=x`) with a workload both select (upstream's rule).
 */
function shareWorkloads(model: MeshModel, a: Gateway, b: Gateway): boolean {
  const sa = formatLabels(a.selector);
  const sb = formatLabels(b.selector);
  if (sa === sb) return true;
  const within = labelsMatch(a.selector, b.selector) || labelsMatch(b.selector, a.selector);
  return within && model.workloads.some((w) => labelsMatch(a.selector, w.labels) && labelsMatch(b.selector, w.labels));
}

/**
 * Upstream's conflicting-gateway check: two Gateways for the same workloads
 * with a server on the same port naming the same host (and bind): the
 * gateway takes one of them. Reported on each Gateway of the pair, Gateways
 * validation refuses included (as upstream's).
 */
export const conflictingGatewaysAnalyzer: Analyzer = {
  name: "conflicting-gateways",
  upstream: "gateway.ConflictingGatewayAnalyzer",
  description: "Gateways on the same workloads with a server on the same port for the same host",
  codes: [ConflictingGateways],
  needs: [],
  analyze(ctx) {
    const gws = gatewaysOf(ctx);
    for (const gw of gws) {
      const others = gws.filter((o) => o !== gw && Object.keys(o.selector).length > 0 && shareWorkloads(ctx.model, gw, o));
      gw.servers.forEach((server, i) => {
        const conflicting = others.filter((o) =>
          o.servers.some(
            (s) => s.port.number === server.port.number && (s.bind ?? "") === (server.bind ?? "") && s.hosts.some((h) => server.hosts.includes(h)),
          ),
        );
        if (conflicting.length === 0) return;
        const names = conflicting
          .map((o) => `${o.namespace}/${o.name}`)
          .sort()
          .join(",");
        gw.report(
          ConflictingGateways,
          `Conflict with gateways ${names} (workload selector ${formatLabels(gw.selector)}, port ${server.port.number}, hosts ${server.hosts.join(",")}).`,
          `spec.servers[${i}]`,
        );
      });
    }
  },
};
