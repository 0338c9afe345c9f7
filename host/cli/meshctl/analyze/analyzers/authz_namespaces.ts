import type { Analyzer } from "../analyzer.ts";
import { AuthorizationPolicyNamespaceNotFound } from "../messages.ts";

/** Upstream's authorization analyzer: a `source.namespaces` value (without wildcards) naming a namespace that does not exist matches nothing. */
export const authzNamespacesAnalyzer: Analyzer = {
  name: "authorizationpolicy-namespaces",
  description: "AuthorizationPolicy source namespaces that match no namespace",
  codes: [AuthorizationPolicyNamespaceNotFound],
  needs: ["Namespace"],
  analyze(ctx) {
    for (const ap of ctx.catalog.byKind.AuthorizationPolicy) {
      ap.spec.rules.forEach((rule, r) =>
        rule.from.forEach((source, f) => {
          for (const [field, values] of [["namespaces", source.namespaces], ["notNamespaces", source.notNamespaces]] as const) {
            (values ?? []).forEach((ns, i) => {
              if (ns.includes("*") || ctx.model.namespaces.has(ns)) return;
              ctx.report(AuthorizationPolicyNamespaceNotFound, ap, `The Namespace ${ns} is not found (${field} of rules[${r}].from[${f}])`, `spec.rules[${r}].from[${f}].source.${field}[${i}]`);
            });
          }
        }),
      );
    }
  },
};
