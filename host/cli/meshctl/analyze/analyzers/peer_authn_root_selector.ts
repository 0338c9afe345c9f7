import type { Analyzer } from "../analyzer.ts";
import { PeerAuthenticationSelectorInRootNamespace } from "../messages.ts";

/**
 * Upstream composes workload PeerAuthentications only from non-root
 * namespaces (security.md §1.1): one with a selector in the root namespace is
 * ignored. (RequestAuthentication and AuthorizationPolicy differ: there a
 * root-namespace selector applies in every namespace.)
 */
export const peerAuthnRootSelectorAnalyzer: Analyzer = {
  name: "peerauthentication-root-selector",
  description: "PeerAuthentications with a selector in the root namespace (ignored)",
  codes: [PeerAuthenticationSelectorInRootNamespace],
  needs: [],
  analyze(ctx) {
    const root = ctx.model.config.rootNamespace;
    for (const pa of ctx.catalog.byKind.PeerAuthentication) {
      if (pa.namespace !== root || !pa.spec.selector || Object.keys(pa.spec.selector.matchLabels).length === 0) continue;
      ctx.report(
        PeerAuthenticationSelectorInRootNamespace,
        pa,
        `This PeerAuthentication has a selector but lives in the root namespace ${root}, where only mesh-wide policies (without selector) apply: it is ignored; move it to the namespace of the workloads it selects`,
        "spec.selector",
      );
    }
  },
};
