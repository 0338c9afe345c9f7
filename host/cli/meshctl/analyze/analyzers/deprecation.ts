import type { Analyzer } from "../analyzer.ts";
import { Deprecated } from "../messages.ts";

/** VirtualService HTTP route fields upstream deprecated, with what replaces them. */
const REPLACED: ReadonlyArray<{ path: (route: Record<string, unknown>) => unknown; field: string; old: string; replacement: string }> = [
  { path: (r) => ((r.fault as Record<string, unknown> | undefined)?.delay as Record<string, unknown> | undefined)?.percent, field: "fault.delay.percent", old: "HTTPRoute.fault.delay.percent", replacement: "HTTPRoute.fault.delay.percentage" },
  { path: (r) => r.mirrorPercent, field: "mirrorPercent", old: "HTTPRoute.mirrorPercent", replacement: "HTTPRoute.mirrorPercentage" },
  { path: (r) => r.mirror_percent, field: "mirror_percent", old: "HTTPRoute.mirror_percent", replacement: "HTTPRoute.mirrorPercentage" },
];

/**
 * Upstream's deprecation analyzer (hand-made, as upstream's): deprecated
 * fields still accepted, each with its replacement.
 */
export const deprecationAnalyzer: Analyzer = {
  name: "deprecation",
  upstream: "deprecation.DeprecationAnalyzer",
  description: "Deprecated fields, with what replaces them",
  codes: [Deprecated],
  needs: [],
  analyze(ctx) {
    for (const vs of ctx.catalog.byKind.VirtualService) {
      const http = ((ctx.model.bodyOf(vs.origin)?.spec ?? {}) as { http?: unknown }).http;
      if (!Array.isArray(http)) continue;
      http.forEach((route, i) => {
        if (!route || typeof route !== "object") return;
        for (const r of REPLACED) {
          if (r.path(route as Record<string, unknown>) === undefined) continue;
          ctx.report(Deprecated, vs, `Deprecated: ${r.old} is deprecated; use ${r.replacement}`, `spec.http[${i}].${r.field}`);
        }
      });
    }
  },
};
