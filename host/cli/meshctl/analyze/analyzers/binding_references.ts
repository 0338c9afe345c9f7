import { findResource } from "../../../../config/catalog.ts";
import type { Analyzer } from "../analyzer.ts";
import { ReferencedResourceNotFound } from "../messages.ts";

/** HTTPAPISpecBinding → HTTPAPISpec and QuotaSpecBinding → QuotaSpec references (namespace defaults to the binding's); the filter refuses a dangling one. */
export const bindingReferencesAnalyzer: Analyzer = {
  name: "binding-references",
  description: "HTTPAPISpecBindings and QuotaSpecBindings referring to a spec that is not defined",
  codes: [ReferencedResourceNotFound],
  needs: [],
  analyze(ctx) {
    for (const b of ctx.catalog.byKind.HTTPAPISpecBinding) {
      b.spec.apiSpecs.forEach((ref, i) => {
        const ns = ref.namespace ?? b.namespace;
        if (!findResource(ctx.catalog, "HTTPAPISpec", ns, ref.name))
          ctx.report(ReferencedResourceNotFound, b, `Referenced HTTPAPISpec not found: ${JSON.stringify(`${ns}/${ref.name}`)}`, `spec.apiSpecs[${i}]`);
      });
    }
    for (const b of ctx.catalog.byKind.QuotaSpecBinding) {
      b.spec.quotaSpecs.forEach((ref, i) => {
        const ns = ref.namespace ?? b.namespace;
        if (!findResource(ctx.catalog, "QuotaSpec", ns, ref.name))
          ctx.report(ReferencedResourceNotFound, b, `Referenced QuotaSpec not found: ${JSON.stringify(`${ns}/${ref.name}`)}`, `spec.quotaSpecs[${i}]`);
      });
    }
  },
};
