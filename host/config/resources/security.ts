import type { Field } from "../decode.ts";
import { attempt, attemptEach } from "../problems.ts";
import { MAX_PORT, MIN_PORT, type WorkloadSelector, isHttpToken, isIpOrCidr, port, stringList, workloadSelector } from "./syntax.ts";

/**
 * The security resources (spec 1; apiVersion `security.mesh.io/v1beta1`, or
 * `security.mesh.io/v1`, which upstream serves with the same schema):
 * PeerAuthentication, RequestAuthentication, AuthorizationPolicy. Fields the
 * spec leaves "not shown" follow upstream v1beta1 (shared/research/security.md).
 * Each decoder takes the document's `spec` field and returns a frozen value.
 */
export const SECURITY_API_VERSION = "security.mesh.io/v1beta1";
export const SECURITY_API_VERSIONS = Object.freeze(["security.mesh.io/v1beta1", "security.mesh.io/v1"]);

// ---- PeerAuthentication

/** UNSET inherits from the parent scope (mesh → namespace → workload → port); at mesh scope it means PERMISSIVE. */
export const MTLS_MODES = ["UNSET", "DISABLE", "PERMISSIVE", "STRICT"] as const;
export type MtlsMode = (typeof MTLS_MODES)[number];

export interface PortMtls {
  readonly port: number;
  readonly mode: MtlsMode;
}

export interface PeerAuthenticationSpec {
  readonly selector?: WorkloadSelector;
  /** UNSET when `mtls` or `mtls.mode` is absent. */
  readonly mtlsMode: MtlsMode;
  /** Per container port overrides, in the order written; empty when absent. */
  readonly portLevelMtls: readonly PortMtls[];
}

function mtlsMode(f: Field): MtlsMode {
  if (!f.present) return "UNSET";
  f.object();
  f.allowOnly(["mode"]);
  return f.get("mode").enumOf(MTLS_MODES, "UNSET");
}

export function decodePeerAuthentication(spec: Field): PeerAuthenticationSpec {
  spec.object();
  spec.allowOnly(["selector", "mtls", "portLevelMtls"]);
  const selector = attempt(spec.get("selector"), workloadSelector);
  const mode = attempt(spec.get("mtls"), mtlsMode);
  const portLevel: PortMtls[] = [];
  const plm = spec.get("portLevelMtls");
  if (plm.present) {
    const entries = attempt(plm, (f) => f.entries()) ?? [];
    // Upstream admission: at least one entry, and only on a workload policy.
    attempt(plm, (f) => {
      if (entries.length === 0) f.fail("at least one port entry (or no portLevelMtls)");
      // (A selector that failed to decode is already reported: undefined here.)
      const hasLabels = spec.get("selector").present && (selector === undefined || Object.keys(selector.matchLabels ?? {}).length > 0);
      if (!hasLabels) {
        f.invalid("expected a selector with matchLabels alongside portLevelMtls (port-level settings apply to workload policies only)");
      }
    });
    for (const [key, value] of entries) {
      attempt(value, (v) => {
        if (!/^\d+$/.test(key) || Number(key) < MIN_PORT || Number(key) > MAX_PORT) {
          v.invalid(`expected a port number from ${MIN_PORT} to ${MAX_PORT} as the key, got ${JSON.stringify(key)}`);
        }
        if (!v.present) v.fail("an object with mode");
        portLevel.push(Object.freeze({ port: Number(key), mode: mtlsMode(v) }));
      });
    }
  }
  return Object.freeze({ selector, mtlsMode: mode, portLevelMtls: Object.freeze(portLevel) });
}

// ---- RequestAuthentication

export interface JwtHeader {
  readonly name: string;
  /** Text before the token, e.g. `Bearer ` (with the space); "" when absent. */
  readonly prefix: string;
}

export interface ClaimToHeader {
  readonly header: string;
  readonly claim: string;
}

export interface JwksKeySet {
  readonly keys: ReadonlyArray<Readonly<Record<string, unknown>>>;
}

export interface JwtRule {
  readonly issuer: string;
  /** Empty: any audience. */
  readonly audiences: readonly string[];
  readonly jwksUri?: string;
  /** Inline key set as written (JSON text); when present it replaces fetching `jwksUri`. */
  readonly jwks?: string;
  /** `jwks` parsed. */
  readonly jwksKeys?: JwksKeySet;
  /** Empty together with fromParams: the defaults (`Authorization: Bearer …`, then query `access_token`). */
  readonly fromHeaders: readonly JwtHeader[];
  readonly fromParams: readonly string[];
  readonly forwardOriginalToken: boolean;
  readonly outputPayloadToHeader?: string;
  readonly outputClaimToHeaders: readonly ClaimToHeader[];
  /** Key-set fetch timeout; upstream default 5 s. */
  readonly timeoutMs?: number;
}

export interface RequestAuthenticationSpec {
  readonly selector?: WorkloadSelector;
  readonly jwtRules: readonly JwtRule[];
}

function headerName(f: Field): string {
  const s = f.nonEmptyString();
  if (!isHttpToken(s)) f.fail("an HTTP header name (letters, digits and !#$%&'*+.^_`|~-)");
  return s;
}

function httpUrl(f: Field): string {
  const s = f.nonEmptyString();
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    return f.fail("an http or https URL such as https://example.com/.well-known/jwks.json");
  }
  if ((url.protocol !== "https:" && url.protocol !== "http:") || url.hostname === "") {
    f.fail("an http or https URL such as https://example.com/.well-known/jwks.json");
  }
  return s;
}

function inlineJwks(f: Field): JwksKeySet {
  const text = f.nonEmptyString();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return f.invalid(`expected a JSON Web Key Set as JSON text, got text that is not JSON (${(e as Error).message})`);
  }
  const keys = (parsed as { keys?: unknown } | null)?.keys;
  if (typeof parsed !== "object" || parsed === null || !Array.isArray(keys)) {
    f.invalid('expected a JSON Web Key Set: a JSON object with a "keys" list');
  }
  keys.forEach((k, i) => {
    if (typeof k !== "object" || k === null || typeof (k as { kty?: unknown }).kty !== "string") {
      f.invalid(`expected a JSON Web Key Set: keys[${i}] is not a key object with a "kty" member`);
    }
  });
  return Object.freeze({ keys: Object.freeze(keys.map((k) => Object.freeze({ ...(k as object) }))) });
}

function decodeJwtRule(r: Field): JwtRule {
  r.object();
  r.allowOnly(
    ["issuer", "audiences", "jwksUri", "jwks", "fromHeaders", "fromParams", "forwardOriginalToken", "outputPayloadToHeader", "outputClaimToHeaders", "timeout"],
    ["fromCookies"],
  );
  const issuer = attempt(r.get("issuer"), (f) => f.nonEmptyString());
  const audiences = attempt(r.get("audiences"), stringList);
  const jwksUri = r.get("jwksUri").present ? attempt(r.get("jwksUri"), httpUrl) : undefined;
  const jwks = r.get("jwks").present ? attempt(r.get("jwks"), (f) => f.string()) : undefined;
  const jwksKeys = jwks !== undefined ? attempt(r.get("jwks"), inlineJwks) : undefined;
  if (jwks !== undefined && jwksUri !== undefined) r.get("jwksUri").warn("ignored: the inline jwks of this rule is used instead");
  const fromHeaders = attemptEach(r.get("fromHeaders"), (h) => {
    h.object();
    h.allowOnly(["name", "prefix"]);
    return Object.freeze({ name: headerName(h.get("name")), prefix: h.get("prefix").optionalString() ?? "" });
  });
  const fromParams = attempt(r.get("fromParams"), stringList);
  const outputClaimToHeaders = attemptEach(r.get("outputClaimToHeaders"), (h) => {
    h.object();
    h.allowOnly(["header", "claim"]);
    return Object.freeze({ header: headerName(h.get("header")), claim: h.get("claim").nonEmptyString() });
  });
  const timeout = r.get("timeout");
  const timeoutMs = timeout.present ? attempt(timeout, (f) => f.durationMs()) : undefined;
  if (timeoutMs !== undefined && timeoutMs <= 0) timeout.fail("a positive duration");
  return Object.freeze({
    issuer,
    audiences,
    jwksUri,
    jwks,
    jwksKeys,
    fromHeaders: Object.freeze(fromHeaders),
    fromParams,
    forwardOriginalToken: attempt(r.get("forwardOriginalToken"), (f) => f.bool(false)),
    outputPayloadToHeader: r.get("outputPayloadToHeader").present ? attempt(r.get("outputPayloadToHeader"), headerName) : undefined,
    outputClaimToHeaders: Object.freeze(outputClaimToHeaders),
    timeoutMs,
  });
}

export function decodeRequestAuthentication(spec: Field): RequestAuthenticationSpec {
  spec.object();
  spec.allowOnly(["selector", "jwtRules"], ["targetRef", "targetRefs"]);
  const selector = attempt(spec.get("selector"), workloadSelector);
  const jwtRules = attemptEach(spec.get("jwtRules"), decodeJwtRule);
  return Object.freeze({ selector, jwtRules: Object.freeze(jwtRules) });
}

// ---- AuthorizationPolicy

/**
 * Upstream's actions: CUSTOM delegates to an external authorizer (meshConfig
 * `extensionProviders`), DENY and ALLOW decide, AUDIT only marks the request
 * as audited (security.md §5.1).
 */
export const AUTHZ_ACTIONS = ["ALLOW", "DENY", "AUDIT", "CUSTOM"] as const;
export type AuthzAction = (typeof AUTHZ_ACTIONS)[number];

export interface AuthzSource {
  readonly principals?: readonly string[];
  readonly notPrincipals?: readonly string[];
  readonly requestPrincipals?: readonly string[];
  readonly notRequestPrincipals?: readonly string[];
  readonly namespaces?: readonly string[];
  readonly notNamespaces?: readonly string[];
  readonly ipBlocks?: readonly string[];
  readonly notIpBlocks?: readonly string[];
  readonly remoteIpBlocks?: readonly string[];
  readonly notRemoteIpBlocks?: readonly string[];
}

export interface AuthzOperation {
  readonly hosts?: readonly string[];
  readonly notHosts?: readonly string[];
  /** Destination container ports. */
  readonly ports?: readonly number[];
  readonly notPorts?: readonly number[];
  readonly methods?: readonly string[];
  readonly notMethods?: readonly string[];
  readonly paths?: readonly string[];
  readonly notPaths?: readonly string[];
}

export interface AuthzCondition {
  readonly key: string;
  readonly values?: readonly string[];
  readonly notValues?: readonly string[];
}

/**
 * Absent fields are undefined (match anything); present fields hold at least
 * one value. Inside a rule from/to/when are ANDed; entries of from and of to
 * are ORed (security.md §5.1).
 */
export interface AuthzRule {
  /** Empty: any source. */
  readonly from: readonly AuthzSource[];
  /** Empty: any operation. */
  readonly to: readonly AuthzOperation[];
  readonly when: readonly AuthzCondition[];
}

export interface AuthorizationPolicySpec {
  readonly selector?: WorkloadSelector;
  readonly action: AuthzAction;
  /** CUSTOM only: the meshConfig extension provider (`provider.name`) that decides the requests the rules match. */
  readonly provider?: string;
  /** Empty: the policy matches nothing (ALLOW without rules denies all; DENY without rules does nothing). */
  readonly rules: readonly AuthzRule[];
}

/** The fields of an AuthorizationPolicy rule's `from.source` (also the CRD schema's, host/cli/meshctl/manifest/schemas.ts). */
export const SOURCE_FIELDS = [
  "principals",
  "notPrincipals",
  "requestPrincipals",
  "notRequestPrincipals",
  "namespaces",
  "notNamespaces",
  "ipBlocks",
  "notIpBlocks",
  "remoteIpBlocks",
  "notRemoteIpBlocks",
] as const;
/** The fields of a rule's `to.operation`. */
export const OPERATION_FIELDS = ["hosts", "notHosts", "ports", "notPorts", "methods", "notMethods", "paths", "notPaths"] as const;

/**
 * Condition keys upstream documents for `when` (authorization-policy
 * conditions). `[…]`-suffixed keys take a header or claim name; claims may
 * nest (`request.auth.claims[a][b]`).
 */
export const WHEN_KEYS = [
  "request.headers[<name>]",
  "source.ip",
  "remote.ip",
  "source.namespace",
  "source.principal",
  "request.auth.principal",
  "request.auth.audiences",
  "request.auth.presenter",
  "request.auth.claims[<claim>]",
  "destination.ip",
  "destination.port",
  "connection.sni",
] as const;
const IP_KEYS = new Set(["source.ip", "remote.ip", "destination.ip"]);

/** Exact, `prefix*`, `*suffix` or `*` (security.md §5.2): one `*`, only at an end. */
function matchValue(f: Field): string {
  const s = f.nonEmptyString();
  const stars = s.split("*").length - 1;
  if (stars > 1 || (stars === 1 && !s.startsWith("*") && !s.endsWith("*"))) {
    f.fail("an exact value, a prefix ending in *, a suffix starting with *, or * (one * at most, only at an end)");
  }
  return s;
}

function matchList(f: Field): readonly string[] {
  return Object.freeze(f.nonEmptyList().map(matchValue));
}

function cidrList(f: Field): readonly string[] {
  return Object.freeze(
    f.nonEmptyList().map((item) => {
      const s = item.nonEmptyString();
      if (!isIpOrCidr(s)) item.fail("an IP address or CIDR block such as 10.0.0.0/8 or 2001:db8::/32");
      return s;
    }),
  );
}

/** Ports are strings in the proto (`"8080"`); numbers are accepted too. */
function portList(f: Field): readonly number[] {
  return Object.freeze(f.nonEmptyList().map((item) => port(item)));
}

function decodeSource(from: Field): AuthzSource {
  from.object();
  from.allowOnly(["source"]);
  const s = from.get("source");
  s.object();
  s.allowOnly(SOURCE_FIELDS, ["serviceAccounts", "notServiceAccounts"]);
  const out: Record<string, readonly string[]> = {};
  for (const name of SOURCE_FIELDS) {
    const f = s.get(name);
    if (!f.present) continue;
    out[name] = attempt(f, /ipblocks$/i.test(name) ? cidrList : matchList);
  }
  if (SOURCE_FIELDS.every((n) => !s.get(n).present)) s.invalid(`expected at least one of ${SOURCE_FIELDS.join(", ")}`);
  return Object.freeze(out) as AuthzSource;
}

function decodeOperation(to: Field): AuthzOperation {
  to.object();
  to.allowOnly(["operation"]);
  const o = to.get("operation");
  o.object();
  o.allowOnly(OPERATION_FIELDS);
  const out: Record<string, readonly (string | number)[]> = {};
  for (const name of OPERATION_FIELDS) {
    const f = o.get(name);
    if (!f.present) continue;
    out[name] = name === "ports" || name === "notPorts" ? attempt(f, portList) : attempt(f, matchList);
  }
  if (OPERATION_FIELDS.every((n) => !o.get(n).present)) o.invalid(`expected at least one of ${OPERATION_FIELDS.join(", ")}`);
  return Object.freeze(out) as AuthzOperation;
}

/** Whether `key` is one of WHEN_KEYS (bracketed keys with a non-empty name). */
export function isWhenKey(key: string): boolean {
  if (/^request\.headers\[[^[\]]+\]$/.test(key)) return true;
  if (/^request\.auth\.claims(\[[^[\]]+\])+$/.test(key)) return true;
  return (WHEN_KEYS as readonly string[]).includes(key) && !key.includes("<");
}

function decodeCondition(w: Field): AuthzCondition {
  w.object();
  w.allowOnly(["key", "values", "notValues"]);
  const keyField = w.get("key");
  const key = keyField.nonEmptyString();
  if (!isWhenKey(key)) keyField.fail(`a condition key: one of ${WHEN_KEYS.join(", ")}`);
  const values = (name: "values" | "notValues") => {
    const f = w.get(name);
    if (!f.present) return undefined;
    return attempt(f, (list) =>
      Object.freeze(
        list.nonEmptyList().map((item) => {
          if (IP_KEYS.has(key)) {
            const s = item.nonEmptyString();
            if (!isIpOrCidr(s)) item.fail(`an IP address or CIDR block (for ${key})`);
            return s;
          }
          if (key === "destination.port") return String(port(item));
          return matchValue(item);
        }),
      ),
    );
  };
  const v = values("values");
  const nv = values("notValues");
  if (!w.get("values").present && !w.get("notValues").present) w.invalid("expected values or notValues (at least one)");
  return Object.freeze({ key, values: v, notValues: nv });
}

function decodeAuthzRule(r: Field): AuthzRule {
  r.object();
  r.allowOnly(["from", "to", "when"]);
  return Object.freeze({
    from: Object.freeze(attemptEach(r.get("from"), decodeSource)),
    to: Object.freeze(attemptEach(r.get("to"), decodeOperation)),
    when: Object.freeze(attemptEach(r.get("when"), decodeCondition)),
  });
}

export function decodeAuthorizationPolicy(spec: Field): AuthorizationPolicySpec {
  spec.object();
  spec.allowOnly(["selector", "action", "provider", "rules"], ["targetRef", "targetRefs"]);
  const selector = attempt(spec.get("selector"), workloadSelector);
  const action = attempt(spec.get("action"), (f) => f.enumOf(AUTHZ_ACTIONS, "ALLOW"));
  // Upstream's validation: a provider with CUSTOM and only with CUSTOM.
  const provider = attempt(spec.get("provider"), (f) => {
    if (action === "CUSTOM" && !f.present) f.fail("a provider ({name: <meshConfig extensionProviders name>}) for action CUSTOM");
    if (action !== "CUSTOM" && f.present) f.invalid("provider is only allowed with action CUSTOM");
    if (!f.present) return undefined;
    f.object();
    f.allowOnly(["name"]);
    return f.get("name").nonEmptyString();
  });
  const rules = attemptEach(spec.get("rules"), decodeAuthzRule);
  return Object.freeze({ selector, action, ...(provider !== undefined ? { provider } : {}), rules: Object.freeze(rules) });
}
