import type { Analyzer } from "../analyzer.ts";
import { type MessageType, VirtualServiceIneffectiveMatch, VirtualServiceUnreachableRule } from "../messages.ts";

type Rule = { readonly name?: unknown; readonly match?: unknown };

/** A match as compared for duplicates: its fields without its name, in a stable order. */
function matchKey(match: unknown): string {
  if (!match || typeof match !== "object") return JSON.stringify(match);
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v && typeof v === "object"
        ? Object.fromEntries(
            Object.entries(v)
              .filter(([k]) => k !== "name")
              .sort(([a], [b]) => (a < b ? -1 : 1))
              .map(([k, x]) => [k, sorted(x)]),
          )
        : v;
  return JSON.stringify(sorted(match));
}

const ruleName = (r: Rule, i: number) => (typeof r.name === "string" && r.name ? r.name : `#${i}`);
const matchName = (m: unknown, i: number) => {
  const n = (m as { name?: unknown } | null)?.name;
  return typeof n === "string" && n ? n : `#${i}`;
};

/** A uri prefix match and the rest of it, to find a later prefix an earlier shorter one already takes. */
function prefixOf(match: unknown): { prefix: string; rest: string } | undefined {
  const m = match as { uri?: { prefix?: unknown } } | null;
  if (!m || typeof m.uri?.prefix !== "string") return undefined;
  const { uri: _uri, ...rest } = m as Record<string, unknown>;
  return { prefix: m.uri.prefix, rest: matchKey(rest) };
}

/**
 * Upstream's rule order checks (its validation's warnings): a rule after one
 * without matches is never used, as is one all of whose matches an earlier
 * rule already has; a match an earlier rule already has (or, for HTTP, whose
 * uri prefix an earlier match with otherwise the same conditions covers) is
 * not used. HTTP, TCP and TLS routes alike (read from the document: this mesh
 * routes only HTTP).
 */
type Report = (type: MessageType, text: string, fieldPath: string) => void;

function checkRules(report: Report, kind: "http" | "tcp" | "tls", rules: readonly Rule[]): void {
  const seen = new Map<string, number>();
  const prefixes: Array<{ prefix: string; rest: string; rule: number }> = [];
  let catchAll = -1;
  rules.forEach((rule, i) => {
    const at = `spec.${kind}[${i}]`;
    const matches = Array.isArray(rule.match) ? rule.match : [];
    if (matches.length === 0) {
      if (catchAll >= 0)
        report(VirtualServiceUnreachableRule, `VirtualService rule ${ruleName(rule, i)} not used (only the last rule can have no matches).`, at);
      catchAll = i;
      return;
    }
    let duplicates = 0;
    matches.forEach((m, j) => {
      if (catchAll >= 0) {
        report(VirtualServiceUnreachableRule, `VirtualService rule ${ruleName(rule, i)} not used (route without matches defined before).`, at);
        return;
      }
      const key = matchKey(m);
      const earlier = seen.get(key);
      if (earlier !== undefined) {
        report(
          VirtualServiceIneffectiveMatch,
          `VirtualService rule ${ruleName(rule, i)} match ${matchName(m, j)} is not used (duplicate/overlapping match in rule ${ruleName(rules[earlier], earlier)}).`,
          `${at}.match[${j}]`,
        );
        duplicates++;
        return;
      }
      seen.set(key, i);
      const p = kind === "http" ? prefixOf(m) : undefined;
      if (!p) return;
      const cover = prefixes.find((x) => x.rest === p.rest && x.prefix !== p.prefix && p.prefix.startsWith(x.prefix));
      if (cover)
        report(
          VirtualServiceIneffectiveMatch,
          `VirtualService rule ${ruleName(rule, i)} match ${matchName(m, j)} of prefix ${p.prefix} is not used (duplicate/overlapping match in rule ${ruleName(rules[cover.rule], cover.rule)} of prefix ${cover.prefix}).`,
          `${at}.match[${j}]`,
        );
      prefixes.push({ ...p, rule: i });
    });
    if (catchAll < 0 && duplicates === matches.length)
      report(VirtualServiceUnreachableRule, `VirtualService rule ${ruleName(rule, i)} not used (all matches used by prior rules).`, at);
  });
}

export const virtualServiceRulesAnalyzer: Analyzer = {
  name: "virtualservice-rules",
  upstream: "schema.ValidationAnalyzer (VirtualService)",
  description: "VirtualService rules and matches earlier rules always take first",
  codes: [VirtualServiceUnreachableRule, VirtualServiceIneffectiveMatch],
  needs: [],
  analyze(ctx) {
    // VirtualServices validation refuses are read too (upstream's analyzers see them).
    const documents: Array<{ body: Readonly<Record<string, unknown>> | undefined; report: Report }> = [
      ...ctx.catalog.byKind.VirtualService.map((vs) => ({
        body: ctx.model.bodyOf(vs.origin),
        report: ((type, text, at) => ctx.report(type, vs, text, at)) as Report,
      })),
      ...ctx.model.refused
        .filter((d) => d.kind === "VirtualService")
        .map((d) => ({ body: d.body, report: ((type, text, at) => ctx.reportRefused(type, d, text, at)) as Report })),
    ];
    for (const { body, report } of documents) {
      const spec = (body?.spec ?? {}) as Record<string, unknown>;
      for (const kind of ["http", "tcp", "tls"] as const) {
        const rules = spec[kind];
        if (Array.isArray(rules)) checkRules(report, kind, rules.filter((r) => r && typeof r === "object") as Rule[]);
      }
    }
  },
};
