import type { Resource } from "../../config/catalog.ts";
import type { AuthzAction, AuthzCondition, AuthzOperation, AuthzRule, AuthzSource, JwtRule } from "../../config/resources/security.ts";
import { type PolicyScope, policyApplies as meshPolicyApplies, policyScope } from "../../mesh/policies.ts";
import { type MeshView, type Workload, findWorkload, shortName } from "./mesh_view.ts";
import { formatLabels, formatTable } from "./table.ts";

/**
 * `meshctl experimental authz check <pod>`: the AuthorizationPolicy and
 * RequestAuthentication resources that apply to a workload and their rules.
 * Selection (security.md §4.1, §5.1): policies of the workload's namespace
 * and of the root namespace; no selector = every workload of that namespace
 * (root namespace: the whole mesh); a selector matches by labels, and a
 * root-namespace selector matches in every namespace.
 */

export type { PolicyScope };

export interface AppliedAuthorization {
  readonly name: string;
  readonly namespace: string;
  readonly action: AuthzAction;
  /** CUSTOM: the extension provider that decides. */
  readonly provider?: string;
  readonly scope: PolicyScope;
  readonly selector?: Readonly<Record<string, string>>;
  readonly rules: readonly AuthzRule[];
}

export interface AppliedAuthentication {
  readonly name: string;
  readonly namespace: string;
  readonly scope: PolicyScope;
  readonly selector?: Readonly<Record<string, string>>;
  readonly jwtRules: readonly JwtRule[];
}

export interface AuthzReport {
  readonly source: string;
  readonly workload: { readonly pod: string; readonly namespace: string; readonly labels: Readonly<Record<string, string>>; readonly from: string };
  /** In evaluation order: CUSTOM, AUDIT, DENY, then ALLOW; input order within each. */
  readonly authorizationPolicies: readonly AppliedAuthorization[];
  readonly requestAuthentications: readonly AppliedAuthentication[];
  /** What a request meets, in words. */
  readonly summary: readonly string[];
  readonly notes: readonly string[];
}

export class AuthzCheckError extends Error {}

const scopeOf = policyScope;

/** Whether a policy applies to the workload (the mesh model's answer); undefined when that depends on labels nobody knows. */
export function policyApplies(
  r: Resource<"AuthorizationPolicy"> | Resource<"RequestAuthentication">,
  w: Pick<Workload, "namespace" | "labels" | "labelsKnown">,
  root: string,
): boolean | undefined {
  return meshPolicyApplies(r, { namespace: w.namespace, labels: w.labelsKnown ? w.labels : undefined }, root);
}

export function authzCheck(view: MeshView, pod: string, namespace: string, rootNamespace: string): AuthzReport {
  const w = findWorkload(view, pod, namespace);
  if (!w) throw new AuthzCheckError(`pod ${pod}.${namespace} not found in ${view.source}`);
  const notes: string[] = [];
  const undecided: string[] = [];
  const pick = <R extends Resource<"AuthorizationPolicy"> | Resource<"RequestAuthentication">>(list: readonly R[]) =>
    list.filter((r) => {
      const applies = policyApplies(r, w, rootNamespace);
      if (applies === undefined) undecided.push(`${r.kind} ${shortName(r)}`);
      return applies === true;
    });
  const authz = pick(view.byKind.AuthorizationPolicy).map((r) => ({
    name: r.name,
    namespace: r.namespace,
    action: r.spec.action,
    ...(r.spec.provider !== undefined ? { provider: r.spec.provider } : {}),
    scope: scopeOf(r, rootNamespace),
    selector: r.spec.selector?.matchLabels,
    rules: r.spec.rules,
  }));
  const ordered = (["CUSTOM", "AUDIT", "DENY", "ALLOW"] as const).flatMap((action) => authz.filter((p) => p.action === action));
  const authn = pick(view.byKind.RequestAuthentication).map((r) => ({
    name: r.name,
    namespace: r.namespace,
    scope: scopeOf(r, rootNamespace),
    selector: r.spec.selector?.matchLabels,
    jwtRules: r.spec.jwtRules,
  }));
  if (undecided.length > 0) notes.push(`${w.from} reports no workload labels: whether ${undecided.join(", ")} apply cannot be decided`);
  if (view.sidecar?.enforced === false)
    notes.push("the sidecar runs without --caAddress (no security path): it shows these policies but does not enforce them");
  return {
    source: view.source,
    workload: { pod: w.pod, namespace: w.namespace, labels: w.labels, from: w.from },
    authorizationPolicies: ordered,
    requestAuthentications: authn,
    summary: summarize(ordered, authn),
    notes,
  };
}

/** The evaluation order of security.md §4–5 applied to what was found. */
function summarize(authz: readonly AppliedAuthorization[], authn: readonly AppliedAuthentication[]): string[] {
  const out: string[] = [];
  if (authn.length > 0) {
    const issuers = [...new Set(authn.flatMap((a) => a.jwtRules.map((j) => j.issuer)))];
    out.push(
      `JWT: tokens from ${issuers.join(", ")} are validated; an invalid token is rejected (401), a request without a token goes on without a request principal`,
    );
  } else {
    out.push("JWT: no RequestAuthentication applies: no request has a request principal");
  }
  const custom = authz.filter((p) => p.action === "CUSTOM");
  const audit = authz.filter((p) => p.action === "AUDIT");
  const deny = authz.filter((p) => p.action === "DENY");
  const allow = authz.filter((p) => p.action === "ALLOW");
  const providers = [...new Set(custom.map((p) => p.provider))];
  if (custom.length > 0) {
    out.push(
      providers.length === 1
        ? `CUSTOM: a request matching a rule of ${custom.length === 1 ? "the CUSTOM policy" : `${custom.length} CUSTOM policies`} is first sent to the external authorizer ${providers[0]}, which may deny it`
        : `CUSTOM: the CUSTOM policies name several providers (${providers.join(", ")}); only one is allowed per workload, so every request they match is denied (403)`,
    );
  }
  if (audit.length > 0)
    out.push(
      `AUDIT: a request matching a rule of ${audit.length === 1 ? "the AUDIT policy" : `${audit.length} AUDIT policies`} is marked as audited; AUDIT never allows or denies`,
    );
  if (deny.length > 0)
    out.push(`DENY: ${deny.length} polic${deny.length === 1 ? "y is" : "ies are"} checked first; a request matching any rule is denied (403)`);
  if (allow.length > 0)
    out.push(
      `ALLOW: a request not denied must match a rule of ${allow.length === 1 ? "the ALLOW policy" : `one of ${allow.length} ALLOW policies`}, else it is denied (403)${allow.every((p) => p.rules.length === 0) ? "; no ALLOW policy has rules, so every request is denied" : ""}`,
    );
  else out.push("ALLOW: no ALLOW policy applies: a request no DENY rule matches is allowed");
  return out;
}

// ---- output

function scopeColumn(scope: PolicyScope, selector: Readonly<Record<string, string>> | undefined): string {
  return scope === "workload" || scope === "mesh-selector" ? `${scope} ${formatLabels(selector)}` : scope;
}

const list = (values: readonly (string | number)[]) => `[${values.map((v) => JSON.stringify(String(v))).join(", ")}]`;

function fields(o: AuthzSource | AuthzOperation): string {
  return Object.entries(o)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${list(v as (string | number)[])}`)
    .join(" ");
}

function condition(c: AuthzCondition): string {
  return [c.key, c.values ? `values=${list(c.values)}` : "", c.notValues ? `notValues=${list(c.notValues)}` : ""].filter(Boolean).join(" ");
}

/** Every rule in full: `rule[i]` then its from/to/when entries. */
export function formatRules(rules: readonly AuthzRule[]): string[] {
  if (rules.length === 0) return ["  (no rules: an ALLOW policy without rules allows nothing; a DENY policy without rules denies nothing)"];
  const out: string[] = [];
  rules.forEach((r, i) => {
    const empty = r.from.length === 0 && r.to.length === 0 && r.when.length === 0;
    out.push(`  rule[${i}]:${empty ? " (empty: matches every request)" : ""}`);
    r.from.forEach((s, j) => out.push(`    from[${j}].source: ${fields(s)}`));
    r.to.forEach((o, j) => out.push(`    to[${j}].operation: ${fields(o)}`));
    r.when.forEach((c, j) => out.push(`    when[${j}]: ${condition(c)}`));
  });
  return out;
}

function formatJwtRule(j: JwtRule, i: number): string[] {
  const out = [`  jwtRules[${i}]: issuer ${j.issuer}`];
  if (j.jwksUri) out.push(`    jwksUri: ${j.jwksUri}`);
  if (j.jwksKeys) out.push(`    jwks: inline, ${j.jwksKeys.keys.length} key(s)`);
  if (j.audiences.length) out.push(`    audiences: ${list(j.audiences)}`);
  const locations = [
    ...j.fromHeaders.map((h) => `header ${h.name}${h.prefix ? ` prefix ${JSON.stringify(h.prefix)}` : ""}`),
    ...j.fromParams.map((p) => `query ${p}`),
  ];
  out.push(`    token from: ${locations.length ? locations.join(", ") : 'header Authorization prefix "Bearer ", query access_token (defaults)'}`);
  if (j.forwardOriginalToken) out.push("    forwardOriginalToken: true");
  if (j.outputPayloadToHeader) out.push(`    outputPayloadToHeader: ${j.outputPayloadToHeader}`);
  for (const h of j.outputClaimToHeaders) out.push(`    outputClaimToHeaders: ${h.claim} -> ${h.header}`);
  return out;
}

/** Text output; `all` (`-a`) adds every rule in full and the JWT rules. */
export function formatAuthzCheck(r: AuthzReport, all: boolean): string {
  const out: string[] = [`Workload ${r.workload.pod}.${r.workload.namespace} (labels ${formatLabels(r.workload.labels)}; ${r.workload.from})`, ""];
  if (r.authorizationPolicies.length === 0) out.push("No AuthorizationPolicy applies.");
  else {
    const rows = [
      ["ACTION", "AuthorizationPolicy", "SCOPE", "RULES"],
      ...r.authorizationPolicies.map((p) => [
        p.provider ? `${p.action} ${p.provider}` : p.action,
        `${p.name}.${p.namespace}`,
        scopeColumn(p.scope, p.selector),
        String(p.rules.length),
      ]),
    ];
    out.push(formatTable(rows).trimEnd());
  }
  if (all) for (const p of r.authorizationPolicies) out.push("", `${p.action} ${p.name}.${p.namespace}:`, ...formatRules(p.rules));
  out.push("");
  if (r.requestAuthentications.length === 0) out.push("No RequestAuthentication applies.");
  else {
    const rows = [
      ["RequestAuthentication", "SCOPE", "JWT RULES"],
      ...r.requestAuthentications.map((a) => [`${a.name}.${a.namespace}`, scopeColumn(a.scope, a.selector), String(a.jwtRules.length)]),
    ];
    out.push(formatTable(rows).trimEnd());
  }
  if (all) for (const a of r.requestAuthentications) out.push("", `RequestAuthentication ${a.name}.${a.namespace}:`, ...a.jwtRules.flatMap(formatJwtRule));
  out.push("", ...r.summary);
  for (const n of r.notes) out.push(`NOTE: ${n}`);
  return `${out.join("\n")}\n`;
}

export function authzCheckJson(r: AuthzReport): string {
  return `${JSON.stringify(r, null, 2)}\n`;
}
