import type { Resource } from "../../../../config/catalog.ts";
import type { Analyzer } from "../analyzer.ts";
import { NoMatchingWorkloadsFound } from "../messages.ts";
import { labelsMatch } from "../../../../mesh/labels.ts";
import { type MeshModel, formatLabels, selectedWorkloads } from "../model.ts";

type Policy = Resource<"AuthorizationPolicy"> | Resource<"RequestAuthentication"> | Resource<"PeerAuthentication">;

export function policies(catalog: {
  byKind: { AuthorizationPolicy: readonly Policy[]; RequestAuthentication: readonly Policy[]; PeerAuthentication: readonly Policy[] };
}): Policy[] {
  return [...catalog.byKind.AuthorizationPolicy, ...catalog.byKind.RequestAuthentication, ...catalog.byKind.PeerAuthentication];
}

/**
 * A policy outside the root namespace whose selector picks nothing in its own
 * namespace but does pick the ingress gateway's workloads in the root
 * namespace: meant for the gateway, misplaced (reported by
 * gateway-policy-namespace, not here).
 */
export function misplacedGatewayPolicy(model: MeshModel, policy: Policy): boolean {
  const labels = policy.spec.selector?.matchLabels;
  if (!labels || Object.keys(labels).length === 0 || policy.namespace === model.config.rootNamespace) return false;
  if (selectedWorkloads(model, policy.kind, policy.namespace, labels).length > 0) return false;
  return model.gatewayWorkloads.some((w) => w.namespace === model.config.rootNamespace && labelsMatch(labels, w.labels));
}

/** Upstream IST0127: AuthorizationPolicy, RequestAuthentication and PeerAuthentication selectors that match no workload; a namespace-wide AuthorizationPolicy where the namespace has none. */
export const workloadSelectorAnalyzer: Analyzer = {
  name: "policy-workload-selector",
  upstream: "auth.AuthorizationPoliciesAnalyzer",
  description: "AuthorizationPolicy, RequestAuthentication and PeerAuthentication selectors that match no Pod or Deployment",
  codes: [NoMatchingWorkloadsFound],
  needs: ["Workload"],
  analyze(ctx) {
    const root = ctx.model.config.rootNamespace;
    for (const policy of policies(ctx.catalog)) {
      const labels = policy.spec.selector?.matchLabels;
      if (!labels || Object.keys(labels).length === 0) {
        // Upstream: a namespace-wide AuthorizationPolicy in a namespace without any workload applies to nothing.
        if (policy.kind === "AuthorizationPolicy" && policy.namespace !== root && !ctx.model.workloads.some((w) => w.namespace === policy.namespace)) {
          ctx.report(NoMatchingWorkloadsFound, policy, "No matching workloads for this resource with the following labels: ", "metadata.namespace");
        }
        continue;
      }
      // A PeerAuthentication selector in the root namespace is ignored altogether (its own analyzer).
      if (policy.kind === "PeerAuthentication" && policy.namespace === ctx.model.config.rootNamespace) continue;
      if (misplacedGatewayPolicy(ctx.model, policy)) continue;
      if (selectedWorkloads(ctx.model, policy.kind, policy.namespace, labels).length > 0) continue;
      ctx.report(
        NoMatchingWorkloadsFound,
        policy,
        `No matching workloads for this resource with the following labels: ${formatLabels(labels)}`,
        "spec.selector.matchLabels",
      );
    }
  },
};
