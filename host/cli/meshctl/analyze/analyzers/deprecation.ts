import type { Analyzer } from "../analyzer.ts";
import { Deprecated } from "../messages.ts";

/** VirtualService HTTP route fields upstream deprecated, with what replaces them. */
const REPLACED: ReadonlyArray<{ path: (route: Record<string, unknown>) => unknown; field: string; old: string; replacement: string }> = [
  {
    path: (r) => ((r.fault as Record<string, unknown> | undefined)?.delay as Record<string, unknown> | undefined)?.percent,
    field: "fault.delay.percent",
    old: "HTTPRoute.fault.delay.percent",
    replacement: "HTTPRoute.fault.delay.percentage",
  },
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
    // VirtualServices validation refuses are read too (upstream's analyzers see them).
    const documents = [
      ...ctx.catalog.byKind.VirtualService.map((vs) => ({
        body: ctx.model.bodyOf(vs.origin),
        report: (text: string, at: string) => ctx.report(Deprecated, vs, text, at),
      })),
      ...ctx.model.refused
        .filter((d) => d.kind === "VirtualService")
        .map((d) => ({ body: d.body, report: (text: string, at: string) => ctx.reportRefused(Deprecated, d, text, at) })),
    ];
    for (const { body, report } of documents) {
      const http = ((body?.spec ?? {}) as { http?: unknown }).http;
      if (!Array.isArray(http)) continue;
      http.forEach((route, i) => {
        if (!route || typeof route !== "object") return;
        for (const r of REPLACED) {
          if (r.path(route as Record<string, unknown>) === undefined) continue;
          report(`Deprecated: ${r.old} is deprecated; use ${r.replacement}`, `spec.http[${i}].${r.field}`);
        }
      });
    }
  },
};
