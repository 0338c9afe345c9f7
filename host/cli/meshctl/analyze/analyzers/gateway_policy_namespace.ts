import type { Analyzer } from "../analyzer.ts";
import { GatewayPolicyOutsideRootNamespace } from "../messages.ts";
import { formatLabels } from "../model.ts";
import { misplacedGatewayPolicy, policies } from "./workload_selector.ts";

/**
 * Spec 1: a RequestAuthentication or AuthorizationPolicy is applied in the
 * namespace of the workload it selects; for the ingress gateway that is the
 * root namespace (`mesh-system`). The same selector elsewhere selects nothing,
 * so the gateway is left unprotected. PeerAuthentication is checked the same
 * way. Gateway workloads: those a Gateway selects, and the default ingress
 * gateway (`mesh: ingressgateway`).
 */
export const gatewayPolicyNamespaceAnalyzer: Analyzer = {
  name: "gateway-policy-namespace",
  description: "Policies selecting the ingress gateway outside the root namespace, where they apply to nothing",
  codes: [GatewayPolicyOutsideRootNamespace],
  needs: [],
  analyze(ctx) {
    const root = ctx.model.config.rootNamespace;
    for (const policy of policies(ctx.catalog)) {
      if (!misplacedGatewayPolicy(ctx.model, policy)) continue;
      ctx.report(
        GatewayPolicyOutsideRootNamespace,
        policy,
        `The selector ${formatLabels(policy.spec.selector!.matchLabels)} matches the ingress gateway, whose workloads run in namespace ${root}: a ${policy.kind} for the gateway must be in ${root} (the root namespace); in ${policy.namespace} it applies to nothing`,
        "metadata.namespace",
      );
    }
  },
};
