import { unknownProviderProblems } from "../../../../config/extension_providers.ts";
import type { Analyzer } from "../analyzer.ts";
import { ReferencedResourceNotFound } from "../messages.ts";

/**
 * A CUSTOM AuthorizationPolicy names its external authorizer by
 * `provider.name`, an entry of meshConfig `extensionProviders`: with
 * `--meshConfigFile` the providers are known, and a name that is none of its
 * authorizers is reported (the sidecar and disco-discovery would refuse the
 * configuration). Without a mesh config nothing is known, nothing reported.
 */
export const authzProviderAnalyzer: Analyzer = {
  name: "authorizationpolicy-provider",
  description: "CUSTOM AuthorizationPolicies naming an external authorizer the mesh config (--meshConfigFile) does not declare",
  codes: [ReferencedResourceNotFound],
  needs: [],
  analyze(ctx) {
    const providers = ctx.model.config.extensionProviders;
    if (!providers) return;
    for (const problem of unknownProviderProblems(ctx.catalog, providers)) {
      const policy = ctx.catalog.byKind.AuthorizationPolicy.find((p) => p.id === problem.resource)!;
      ctx.report(ReferencedResourceNotFound, policy, problem.message, problem.fieldPath);
    }
  },
};
