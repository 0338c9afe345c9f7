import { type Resource, findResource } from "../../../../config/catalog.ts";
import type { HttpApiSpecPattern, MeshService, QuotaRule, StringMatch } from "../../../../config/resources/hub_client.ts";
import type { AnalysisContext, Analyzer } from "../analyzer.ts";
import { type MessageType, OverlappingApiSpecBindings, OverlappingQuotaSpecBindings } from "../messages.ts";
import { DEFAULT_DOMAIN } from "../../../../mesh/hosts.ts";

/** The filter's default MeshService `domain` (assembly/config/client_config.ts DEFAULT_MESH_DOMAIN_SUFFIX): fixed in the module, whatever the mesh's DNS domain. */
const FILTER_SERVICE_DOMAIN = `svc.${DEFAULT_DOMAIN}`;

/**
 * Spec 1: the match conditions of all specs bound to a service must not
 * overlap (HTTPAPISpecBinding, QuotaSpecBinding). Every spec bound to a
 * service applies once, whichever binding names it (as the filter compiles
 * them), so overlap is checked between distinct specs of the same service.
 *
 * Decided exactly for what can be decided without a regex solver:
 * - HTTPAPISpec patterns: methods compatible (equal, or either absent or `*`)
 *   and URI templates whose segment languages intersect (`*` and `{x}` one
 *   segment, `**` and `{x=**}` any number, verbs equal); a template against a
 *   regex when the regex matches a sample path of the template (a witness);
 *   two regexes when their text is identical.
 * - QuotaSpec rules: a rule without match matches every request; two
 *   AttributeMatches overlap when every attribute both constrain is
 *   compatible (exact/exact equal, exact/prefix, prefix/prefix, exact/regex
 *   by running the regex, identical regexes).
 */
export const specBindingOverlapAnalyzer: Analyzer = {
  name: "spec-binding-overlap",
  description: "HTTPAPISpecs or QuotaSpecs bound to the same service whose match conditions overlap (the spec forbids it)",
  codes: [OverlappingApiSpecBindings, OverlappingQuotaSpecBindings],
  needs: [],
  analyze(ctx) {
    checkOverlaps(ctx, "HTTPAPISpecBinding", OverlappingApiSpecBindings, (a, b) =>
      apiSpecOverlap(ctx, a as Resource<"HTTPAPISpec">, b as Resource<"HTTPAPISpec">),
    );
    checkOverlaps(ctx, "QuotaSpecBinding", OverlappingQuotaSpecBindings, (a, b) =>
      quotaSpecOverlap(ctx, a as Resource<"QuotaSpec">, b as Resource<"QuotaSpec">),
    );
  },
};

type Spec = Resource<"HTTPAPISpec"> | Resource<"QuotaSpec">;
type Binding = Resource<"HTTPAPISpecBinding"> | Resource<"QuotaSpecBinding">;

interface Bound {
  spec: Spec;
  binding: Binding;
  refIndex: number;
}

/** `service` FQDN of a MeshService, else `<name>.<namespace>.<domain>` (namespace: the binding's), as the filter computes it. */
export function meshServiceFqdn(s: MeshService, defaultNamespace: string): string {
  if (s.service) return s.service;
  return `${s.name}.${s.namespace || defaultNamespace}.${s.domain ?? FILTER_SERVICE_DOMAIN}`;
}

function checkOverlaps(
  ctx: AnalysisContext,
  bindingKind: "HTTPAPISpecBinding" | "QuotaSpecBinding",
  type: MessageType,
  overlap: (a: Spec, b: Spec) => string | undefined,
): void {
  const specKind = bindingKind === "HTTPAPISpecBinding" ? "HTTPAPISpec" : "QuotaSpec";
  const byService = new Map<string, Bound[]>();
  for (const binding of ctx.catalog.byKind[bindingKind] as readonly Binding[]) {
    const refs = binding.kind === "HTTPAPISpecBinding" ? binding.spec.apiSpecs : binding.spec.quotaSpecs;
    refs.forEach((ref, refIndex) => {
      const spec = findResource(ctx.catalog, specKind, ref.namespace ?? binding.namespace, ref.name) as Spec | undefined;
      if (!spec) return; // binding-references reports it
      for (const s of binding.spec.services) {
        const fqdn = meshServiceFqdn(s, binding.namespace);
        const list = byService.get(fqdn) ?? [];
        if (!list.some((b) => b.spec === spec)) list.push({ spec, binding, refIndex });
        byService.set(fqdn, list);
      }
    });
  }
  const reported = new Set<string>();
  for (const [service, bound] of [...byService].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    for (let i = 0; i < bound.length; i++) {
      for (let j = i + 1; j < bound.length; j++) {
        const [first, second] = [bound[i], bound[j]];
        const why = overlap(first.spec, second.spec);
        if (why === undefined) continue;
        const key = `${first.spec.id}|${second.spec.id}|${second.binding.id}`;
        if (reported.has(key)) continue;
        reported.add(key);
        const by = first.binding === second.binding ? "this binding" : `${first.binding.id}`;
        ctx.report(
          type,
          second.binding,
          `${second.spec.id} and ${first.spec.id} (bound by ${by}) are both bound to service ${service} and overlap: ${why}`,
          `spec.${bindingKind === "HTTPAPISpecBinding" ? "apiSpecs" : "quotaSpecs"}[${second.refIndex}]`,
        );
      }
    }
  }
}

// ---- HTTPAPISpec

function apiSpecOverlap(ctx: AnalysisContext, a: Resource<"HTTPAPISpec">, b: Resource<"HTTPAPISpec">): string | undefined {
  for (const pa of a.spec.patterns) {
    for (const pb of b.spec.patterns) {
      if (!methodsOverlap(pa.httpMethod, pb.httpMethod)) continue;
      if (patternsOverlap(ctx, pa, pb)) return `pattern ${describePattern(pb)} and pattern ${describePattern(pa)} match the same requests`;
    }
  }
  return undefined;
}

function describePattern(p: HttpApiSpecPattern): string {
  return `${p.httpMethod ?? "*"} ${p.uriTemplate ?? `regex ${JSON.stringify(p.regex)}`}`;
}

function methodsOverlap(a: string | undefined, b: string | undefined): boolean {
  return a === undefined || b === undefined || a === "*" || b === "*" || a === b;
}

function patternsOverlap(ctx: AnalysisContext, a: HttpApiSpecPattern, b: HttpApiSpecPattern): boolean {
  if (a.uriTemplate !== undefined && b.uriTemplate !== undefined) return templatesOverlap(a.uriTemplate, b.uriTemplate);
  if (a.regex !== undefined && b.regex !== undefined) return a.regex === b.regex;
  const [template, regex] = a.uriTemplate !== undefined ? [a.uriTemplate, b.regex!] : [b.uriTemplate!, a.regex!];
  const matches = ctx.regex(regex);
  return matches?.(samplePath(template)) === true;
}

type Segment = { kind: "literal"; text: string } | { kind: "one" } | { kind: "any" };

/** Segments of an HTTP-rule template (`/a/{b}/{c=d/**}:verb`), variables inlined; undefined when it does not parse. */
export function templateSegments(template: string): { segments: Segment[]; verb: string } | undefined {
  if (!template.startsWith("/")) return undefined;
  let body = template.slice(1);
  let verb = "";
  const colon = body.lastIndexOf(":");
  if (colon >= 0 && !body.slice(colon).includes("/") && !body.slice(colon).includes("}")) {
    verb = body.slice(colon + 1);
    body = body.slice(0, colon);
  }
  const segments: Segment[] = [];
  // `{name=a/*}` may contain slashes: expand variables first.
  const expanded = body.replace(/\{[^}=]*(?:=([^}]*))?\}/g, (_m, inner: string | undefined) => inner ?? "*");
  for (const part of expanded.split("/")) {
    if (part === "**") segments.push({ kind: "any" });
    else if (part === "*") segments.push({ kind: "one" });
    else segments.push({ kind: "literal", text: part });
  }
  return { segments, verb };
}

/** Whether some path matches both templates (segment languages intersect). */
export function templatesOverlap(a: string, b: string): boolean {
  const [ta, tb] = [templateSegments(a), templateSegments(b)];
  if (!ta || !tb) return a === b;
  if (ta.verb !== tb.verb) return false;
  const memo = new Map<string, boolean>();
  const go = (i: number, j: number): boolean => {
    const key = `${i},${j}`;
    const cached = memo.get(key);
    if (cached !== undefined) return cached;
    let result: boolean;
    const [x, y] = [ta.segments[i], tb.segments[j]];
    if (!x && !y) result = true;
    else if (x?.kind === "any") result = go(i + 1, j) || (y !== undefined && go(i, j + 1));
    else if (y?.kind === "any") result = go(i, j + 1) || (x !== undefined && go(i + 1, j));
    else if (!x || !y) result = false;
    else result = (x.kind === "one" || y.kind === "one" || x.text === y.text) && go(i + 1, j + 1);
    memo.set(key, result);
    return result;
  };
  return go(0, 0);
}

/** A path the template matches: `{x}` and `*` become `x`, `**` one segment `x`. */
function samplePath(template: string): string {
  const t = templateSegments(template);
  if (!t) return template;
  const path = `/${t.segments.map((s) => (s.kind === "literal" ? s.text : "x")).join("/")}`;
  return t.verb ? `${path}:${t.verb}` : path;
}

// ---- QuotaSpec

function quotaSpecOverlap(ctx: AnalysisContext, a: Resource<"QuotaSpec">, b: Resource<"QuotaSpec">): string | undefined {
  for (const [i, ra] of a.spec.rules.entries()) {
    for (const [j, rb] of b.spec.rules.entries()) {
      if (rulesOverlap(ctx, ra, rb)) return `rule ${j} of ${b.id} and rule ${i} of ${a.id} match the same requests`;
    }
  }
  return undefined;
}

function rulesOverlap(ctx: AnalysisContext, a: QuotaRule, b: QuotaRule): boolean {
  // An empty match list matches every request; otherwise any one AttributeMatch suffices.
  const ma = a.match.length === 0 ? [{ clause: {} }] : a.match;
  const mb = b.match.length === 0 ? [{ clause: {} }] : b.match;
  return ma.some((x) =>
    mb.some((y) => Object.entries(x.clause).every(([attr, sx]) => y.clause[attr] === undefined || stringMatchesOverlap(ctx, sx, y.clause[attr]))),
  );
}

function stringMatchesOverlap(ctx: AnalysisContext, a: StringMatch, b: StringMatch): boolean {
  if (a.exact !== undefined && b.exact !== undefined) return a.exact === b.exact;
  if (a.exact !== undefined && b.prefix !== undefined) return a.exact.startsWith(b.prefix);
  if (a.prefix !== undefined && b.exact !== undefined) return b.exact.startsWith(a.prefix);
  if (a.prefix !== undefined && b.prefix !== undefined) return a.prefix.startsWith(b.prefix) || b.prefix.startsWith(a.prefix);
  if (a.regex !== undefined && b.regex !== undefined) return a.regex === b.regex;
  const [regex, other] = a.regex !== undefined ? [a.regex, b] : [b.regex!, a];
  const matches = ctx.regex(regex);
  if (matches === undefined) return false;
  // exact: run it; prefix: the prefix itself is a witness when matched (a regex/prefix overlap otherwise stays undecided).
  return matches(other.exact ?? other.prefix ?? "");
}
