import type { Resource } from "../../config/catalog.ts";
import type { AuthzAction } from "../../config/resources/security.ts";
import { selectingPolicies } from "../../mesh/policies.ts";
import { DEFAULT_ROOT_NAMESPACE, type Workload, policyName } from "../workload.ts";
import { type AuthzRequest, compileRule } from "./matcher.ts";

/**
 * The authorization engine of one workload (Envoy RBAC engine; security.md
 * §5.1): CUSTOM policies first (`custom`: which external authorizer must
 * be asked, the caller does the I/O), then AUDIT (marks, never decides),
 * DENY, ALLOW; a workload without ALLOW policy is allowed; with ALLOW
 * policies a request is allowed only when one matches. Every decision names
 * the policy and rule that decided.
 */

/** Upstream's plain-text body for an RBAC denial (spec rules 12–13). */
export const RBAC_DENIED_BODY = "RBAC: access denied";
export const RBAC_DENIED_STATUS = 403;

/** Stable reasons, for logs and `/stats`. */
export type DecisionReason =
  /** A DENY policy's rule matched. */
  | "denied_by_policy"
  /** An ALLOW policy's rule matched. */
  | "allowed_by_policy"
  /** No ALLOW policy applies and no DENY matched. */
  | "no_allow_policy"
  /** ALLOW policies apply but none matched. */
  | "no_allow_policy_matched"
  /** A CUSTOM policy matched and its external authorizer denied (or failed, closed). */
  | "denied_by_ext_authz";

/** A rule of a policy that matched: `ns/name` and the index in `spec.rules`. */
export interface RuleMatch {
  readonly policy: string;
  readonly ruleIndex: number;
}

/** What the CUSTOM policies say of a request: nothing, ask this provider, or deny (invalid CUSTOM setup, upstream's deny-all). */
export type CustomCheck =
  | { readonly kind: "none" }
  | { readonly kind: "ask"; readonly provider: string; readonly match: RuleMatch }
  | { readonly kind: "invalid"; readonly why: string };

export interface Decision {
  readonly allowed: boolean;
  /** `ns/name` of the policy that decided; null when no policy matched. */
  readonly policy: string | null;
  /** Index in that policy's `spec.rules`; null when no rule matched. */
  readonly ruleIndex: number | null;
  /** Action of the deciding policy; null when none. */
  readonly action: AuthzAction | null;
  readonly reason: DecisionReason;
  /** Local reply for a denial: 403 `RBAC: access denied`. */
  readonly status?: number;
  readonly body?: string;
  /** The first AUDIT rule that matched (upstream's RBAC LOG: `envoy.common` `access_log_hint`); never changes `allowed`. */
  readonly audited?: RuleMatch;
}

interface CompiledPolicy {
  readonly name: string;
  readonly action: AuthzAction;
  readonly provider?: string;
  readonly rules: ReadonlyArray<(r: AuthzRequest) => boolean>;
}

/** The first rule of the first policy that matches. */
function firstMatch(policies: readonly CompiledPolicy[], r: AuthzRequest): (RuleMatch & { provider?: string }) | undefined {
  for (const p of policies) {
    const i = p.rules.findIndex((rule) => rule(r));
    if (i >= 0) return { policy: p.name, ruleIndex: i, ...(p.provider !== undefined ? { provider: p.provider } : {}) };
  }
  return undefined;
}

/** The AuthorizationPolicies that apply to a workload: its namespace and the root namespace, by selector. */
export function authorizationPoliciesFor(
  policies: readonly Resource<"AuthorizationPolicy">[],
  workload: Pick<Workload, "namespace" | "labels">,
  rootNamespace = DEFAULT_ROOT_NAMESPACE,
): Resource<"AuthorizationPolicy">[] {
  return selectingPolicies(policies, workload, rootNamespace);
}

function freeze(d: Decision): Decision {
  return Object.freeze(d);
}

/**
 * @example
 * const engine = AuthorizationEngine.create(authorizationPoliciesFor(catalog.byKind.AuthorizationPolicy, workload));
 * const d = engine.evaluate({ method: "GET", path: "/headers", host: "httpbin.foo:8000", headers, sourceIp, destinationPort: 80 });
 * if (!d.allowed) reply(d.status!, d.body!); // 403 RBAC: access denied
 */
export class AuthorizationEngine {
  private constructor(private readonly byAction: Readonly<Record<AuthzAction, readonly CompiledPolicy[]>>) {}

  static create(policies: readonly Resource<"AuthorizationPolicy">[]): AuthorizationEngine {
    const compiled = policies.map(
      (p): CompiledPolicy =>
        Object.freeze({
          name: policyName(p),
          action: p.spec.action,
          ...(p.spec.provider !== undefined ? { provider: p.spec.provider } : {}),
          rules: Object.freeze(p.spec.rules.map(compileRule)),
        }),
    );
    const of = (action: AuthzAction) => Object.freeze(compiled.filter((p) => p.action === action));
    return new AuthorizationEngine(Object.freeze({ CUSTOM: of("CUSTOM"), AUDIT: of("AUDIT"), DENY: of("DENY"), ALLOW: of("ALLOW") }));
  }

  /** Number of policies per action (for logs and /config_dump). */
  get size(): { custom: number; audit: number; deny: number; allow: number } {
    const b = this.byAction;
    return { custom: b.CUSTOM.length, audit: b.AUDIT.length, deny: b.DENY.length, allow: b.ALLOW.length };
  }

  /** The external authorizers the CUSTOM policies name (one at most is valid, as upstream). */
  get customProviders(): readonly string[] {
    return [...new Set(this.byAction.CUSTOM.map((p) => p.provider!))];
  }

  /**
   * The CUSTOM stage, before `evaluate`: whether an external authorizer
   * must decide this request. Upstream allows one provider per workload;
   * CUSTOM policies naming several make every request they match denied
   * (upstream's deny-all for an unusable CUSTOM configuration).
   */
  custom(r: AuthzRequest): CustomCheck {
    const m = firstMatch(this.byAction.CUSTOM, r);
    if (!m) return { kind: "none" };
    const providers = this.customProviders;
    if (providers.length > 1)
      return { kind: "invalid", why: `only one extension provider may be used per workload, CUSTOM policies name ${providers.join(", ")}` };
    return { kind: "ask", provider: m.provider!, match: { policy: m.policy, ruleIndex: m.ruleIndex } };
  }

  /**
   * Decides a request. Its `path` must already be normalized (the sidecar
   * does it once, at the listener edge: `normalizeRequestTarget`, so the
   * policies see the path the app receives); the query is ignored.
   */
  evaluate(r: AuthzRequest): Decision {
    const a = firstMatch(this.byAction.AUDIT, r);
    const audited = a ? { audited: Object.freeze({ policy: a.policy, ruleIndex: a.ruleIndex }) } : {};
    const deny = firstMatch(this.byAction.DENY, r);
    if (deny) {
      return freeze({
        allowed: false,
        policy: deny.policy,
        ruleIndex: deny.ruleIndex,
        action: "DENY",
        reason: "denied_by_policy",
        status: RBAC_DENIED_STATUS,
        body: RBAC_DENIED_BODY,
        ...audited,
      });
    }
    if (this.byAction.ALLOW.length === 0) return freeze({ allowed: true, policy: null, ruleIndex: null, action: null, reason: "no_allow_policy", ...audited });
    const allow = firstMatch(this.byAction.ALLOW, r);
    if (allow) return freeze({ allowed: true, policy: allow.policy, ruleIndex: allow.ruleIndex, action: "ALLOW", reason: "allowed_by_policy", ...audited });
    return freeze({
      allowed: false,
      policy: null,
      ruleIndex: null,
      action: null,
      reason: "no_allow_policy_matched",
      status: RBAC_DENIED_STATUS,
      body: RBAC_DENIED_BODY,
      ...audited,
    });
  }
}
