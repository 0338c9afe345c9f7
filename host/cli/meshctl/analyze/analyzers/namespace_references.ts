import type { AnyResource } from "../../../../config/catalog.ts";
import type { Analyzer } from "../analyzer.ts";
import { ReferencedResourceNotFound } from "../messages.ts";

/**
 * Upstream's namespace patterns in AuthorizationPolicy sources: `*` any,
 * `*suffix`, `prefix*`, else the exact name (an empty one matches nothing).
 */
export function namespaceMatches(pattern: string, namespace: string): boolean {
  if (pattern === "*") return true;
  if (pattern.startsWith("*")) return namespace.endsWith(pattern.slice(1));
  if (pattern.endsWith("*")) return namespace.startsWith(pattern.slice(0, -1));
  return pattern === namespace;
}

/**
 * Namespaces named in AuthorizationPolicy sources (`namespaces`,
 * `notNamespaces`, exact values), binding references and services, and
 * `exportTo` that no Namespace document declares and no document lives in.
 * Runs only when the input has Namespace documents (upstream checks against
 * the cluster's namespaces).
 */
export const namespaceReferencesAnalyzer: Analyzer = {
  name: "namespace-references",
  upstream: "auth.AuthorizationPoliciesAnalyzer",
  description: "References to namespaces that no Namespace document declares and no document lives in",
  codes: [ReferencedResourceNotFound],
  needs: ["Namespace"],
  analyze(ctx) {
    const known = [...ctx.model.namespaces];
    const check = (r: AnyResource, ns: string | undefined, fieldPath: string) => {
      if (ns === undefined || known.some((k) => namespaceMatches(ns, k))) return;
      ctx.report(ReferencedResourceNotFound, r, `Referenced namespace not found: ${JSON.stringify(ns)}`, fieldPath);
    };
    for (const ap of ctx.catalog.byKind.AuthorizationPolicy) {
      ap.spec.rules.forEach((rule, i) =>
        rule.from.forEach((from, j) => {
          for (const field of ["namespaces", "notNamespaces"] as const) {
            from[field]?.forEach((ns, k) => check(ap, ns, `spec.rules[${i}].from[${j}].source.${field}[${k}]`));
          }
        }),
      );
    }
    // A policy validation refuses (an empty namespace is refused) is still checked, from its document, as upstream's analyzer does.
    for (const doc of ctx.model.refused) {
      if (doc.kind !== "AuthorizationPolicy") continue;
      const rules = ((doc.body.spec ?? {}) as { rules?: unknown }).rules;
      if (!Array.isArray(rules)) continue;
      rules.forEach((rule, i) => {
        const froms = (rule as { from?: unknown } | null)?.from;
        if (!Array.isArray(froms)) return;
        froms.forEach((from, j) => {
          const source = ((from as { source?: unknown } | null)?.source ?? {}) as Record<string, unknown>;
          for (const field of ["namespaces", "notNamespaces"] as const) {
            const list = source[field];
            if (!Array.isArray(list)) continue;
            list.forEach((ns, k) => {
              if (typeof ns !== "string" || known.some((n) => namespaceMatches(ns, n))) return;
              ctx.reportRefused(
                ReferencedResourceNotFound,
                doc,
                `Referenced namespace not found: ${JSON.stringify(ns)}`,
                `spec.rules[${i}].from[${j}].source.${field}[${k}]`,
              );
            });
          }
        });
      });
    }
    for (const b of [...ctx.catalog.byKind.HTTPAPISpecBinding, ...ctx.catalog.byKind.QuotaSpecBinding]) {
      const [field, refs] = b.kind === "HTTPAPISpecBinding" ? ["apiSpecs", b.spec.apiSpecs] : ["quotaSpecs", b.spec.quotaSpecs];
      refs.forEach((ref, i) => check(b, ref.namespace, `spec.${field}[${i}].namespace`));
      b.spec.services.forEach((s, i) => check(b, s.namespace, `spec.services[${i}].namespace`));
    }
    for (const r of [...ctx.catalog.byKind.DestinationRule, ...ctx.catalog.byKind.VirtualService]) {
      r.spec.exportTo.forEach((ns, i) => {
        if (ns !== ".") check(r, ns, `spec.exportTo[${i}]`);
      });
    }
  },
};
