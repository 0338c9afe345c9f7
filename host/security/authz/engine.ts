import type { Resource } from "../../config/catalog.ts";
import type { AuthzAction } from "../../config/resources/security.ts";
import { selectingPolicies } from "../../mesh/policies.ts";
import { DEFAULT_ROOT_NAMESPACE, type Workload, policyName } from "../workload.ts";
import { type AuthzRequest, compileRule } from "./matcher.ts";
import { DEFAULT_PATH_NORMALIZATION, type PathNormalization, normalizePath } from "./path.ts";

/**
 * The authorization engine of one workload (Envoy RBAC engine; security.md
 * §5.1): DENY policies first, then ALLOW; a workload without ALLOW policy is
 * allowed; with ALLOW policies a request is allowed only when one matches.
 * Every decision names the policy and rule that decided.
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
  /** The path could not be normalized (encoded NUL): 400 before any policy. */
  | "invalid_path";

export interface Decision {
  readonly allowed: boolean;
  /** `ns/name` of the policy that decided; null when no policy matched. */
  readonly policy: string | null;
  /** Index in that policy's `spec.rules`; null when no rule matched. */
  readonly ruleIndex: number | null;
  /** Action of the deciding policy; null when none. */
  readonly action: AuthzAction | null;
  readonly reason: DecisionReason;
  /** Local reply for a denial: 403 `RBAC: access denied` (400 for an invalid path). */
  readonly status?: number;
  readonly body?: string;
}

interface CompiledPolicy {
  readonly name: string;
  readonly action: AuthzAction;
  readonly rules: ReadonlyArray<(r: AuthzRequest) => boolean>;
}

export interface AuthorizationOptions {
  /** Mesh `pathNormalization`; default BASE. */
  readonly pathNormalization?: PathNormalization;
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
  private constructor(
    private readonly deny: readonly CompiledPolicy[],
    private readonly allow: readonly CompiledPolicy[],
    private readonly pathNormalization: PathNormalization,
  ) {}

  static create(policies: readonly Resource<"AuthorizationPolicy">[], options: AuthorizationOptions = {}): AuthorizationEngine {
    const compiled = policies.map((p): CompiledPolicy => Object.freeze({
      name: policyName(p),
      action: p.spec.action,
      rules: Object.freeze(p.spec.rules.map(compileRule)),
    }));
    return new AuthorizationEngine(
      Object.freeze(compiled.filter((p) => p.action === "DENY")),
      Object.freeze(compiled.filter((p) => p.action === "ALLOW")),
      options.pathNormalization ?? DEFAULT_PATH_NORMALIZATION,
    );
  }

  /** Number of DENY and ALLOW policies (for logs). */
  get size(): { deny: number; allow: number } {
    return { deny: this.deny.length, allow: this.allow.length };
  }

  /** Decides a request. Its `path` is normalized with the engine's mode first; the query is ignored. */
  evaluate(request: AuthzRequest): Decision {
    const normalized = normalizePath(request.path, this.pathNormalization);
    if (!normalized.ok) {
      return freeze({ allowed: false, policy: null, ruleIndex: null, action: null, reason: "invalid_path", status: 400, body: "Bad Request" });
    }
    const r: AuthzRequest = { ...request, path: normalized.matchPath };
    for (const p of this.deny) {
      const i = p.rules.findIndex((rule) => rule(r));
      if (i >= 0) {
        return freeze({ allowed: false, policy: p.name, ruleIndex: i, action: "DENY", reason: "denied_by_policy", status: RBAC_DENIED_STATUS, body: RBAC_DENIED_BODY });
      }
    }
    if (this.allow.length === 0) return freeze({ allowed: true, policy: null, ruleIndex: null, action: null, reason: "no_allow_policy" });
    for (const p of this.allow) {
      const i = p.rules.findIndex((rule) => rule(r));
      if (i >= 0) return freeze({ allowed: true, policy: p.name, ruleIndex: i, action: "ALLOW", reason: "allowed_by_policy" });
    }
    return freeze({ allowed: false, policy: null, ruleIndex: null, action: null, reason: "no_allow_policy_matched", status: RBAC_DENIED_STATUS, body: RBAC_DENIED_BODY });
  }
}
