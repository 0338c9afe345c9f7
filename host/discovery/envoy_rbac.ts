import type { Resource } from "../config/catalog.ts";
import type { AuthzAction, AuthzCondition, AuthzOperation, AuthzRule, AuthzSource } from "../config/resources/security.ts";
import { JWT_FILTER, JWT_PAYLOAD_KEY } from "./envoy_jwt.ts";

/**
 * AuthorizationPolicy as Envoy's own RBAC filters, the way upstream's
 * control plane writes them (pilot/pkg/security/authz/builder): one RBAC
 * policy per rule, named `ns[<ns>]-policy[<name>]-rule[<i>]`; the entries
 * of `to` become the permissions (ORed), the entries of `from` the
 * principals (ORed), `when` conditions are ANDed into each of them; values
 * of one field are ORed, `notX` is `not(or(...))`. Each action gets a
 * filter of its own, in upstream's order: AUDIT (RBAC action LOG: sets
 * `envoy.common` `access_log_hint`, never denies), DENY, ALLOW; CUSTOM
 * policies go before them all (envoy_ext_authz.ts). A workload without
 * ALLOW policy gets no ALLOW filter (allowed), one whose ALLOW policies have
 * no rule gets an ALLOW filter with no policy (denied).
 *
 * The matchers follow what host/security/authz/matcher.ts decides for the
 * Node sidecar, so the two enforce the same thing (the test compares their
 * decisions):
 * - peer principals: the URI SAN, `spiffe://` + the value (exact / prefix /
 *   suffix / `*` = present); namespaces: a regex on the SAN `.../ns/<ns>/...`;
 * - request principals `<iss>/<sub>` and claims: jwt_authn's payload
 *   (`payload_in_metadata`), `iss` and `sub` matched apart at every `/` the
 *   pattern could be split at;
 * - hosts case-insensitive; paths on the normalized path without query;
 *   a header as Envoy sees it (repeated values joined by `,`).
 *
 * For a TCP filter chain (network RBAC) a rule that needs HTTP (methods,
 * paths, hosts, request principals, headers, JWT claims) follows upstream's
 * rule: an ALLOW rule is left out (it can never allow), a DENY rule drops
 * those conditions (it matches more). Pure.
 */

type Json = Record<string, unknown>;

export const HTTP_RBAC = "envoy.filters.http.rbac";
export const NETWORK_RBAC = "envoy.filters.network.rbac";
const HTTP_RBAC_TYPE = "type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC";
const NETWORK_RBAC_TYPE = "type.googleapis.com/envoy.extensions.filters.network.rbac.v3.RBAC";

const ANY_NON_EMPTY = { safe_regex: { regex: ".+" } };
const ANYTHING = { safe_regex: { regex: ".*" } };

/** RE2 text matching `s` literally. */
export function re2Literal(s: string): string {
  return s.replace(/[\\^$.|?*+()[\]{}]/g, "\\$&");
}

/** An Envoy StringMatcher for a policy value: exact, `prefix*`, `*suffix`, `*` (non-empty). */
function stringMatcher(pattern: string, ignoreCase = false): Json {
  const ic = ignoreCase ? { ignore_case: true } : {};
  if (pattern === "*") return ANY_NON_EMPTY;
  if (pattern.endsWith("*")) return { prefix: pattern.slice(0, -1), ...ic };
  if (pattern.startsWith("*")) return { suffix: pattern.slice(1), ...ic };
  return { exact: pattern, ...ic };
}

/** A literal part of a pattern: exact, prefix or suffix of possibly empty text (Envoy wants prefix and suffix non-empty). */
function part(kind: "exact" | "prefix" | "suffix", text: string): Json {
  return kind !== "exact" && text === "" ? ANYTHING : { [kind]: text };
}

// ---- Principal and Permission trees

const orIds = (ids: Json[]): Json => (ids.length === 1 ? ids[0] : { or_ids: { ids } });
const andIds = (ids: Json[]): Json => (ids.length === 0 ? { any: true } : ids.length === 1 ? ids[0] : { and_ids: { ids } });
const orRules = (rules: Json[]): Json => (rules.length === 1 ? rules[0] : { or_rules: { rules } });
const andRules = (rules: Json[]): Json => (rules.length === 0 ? { any: true } : rules.length === 1 ? rules[0] : { and_rules: { rules } });
const NEVER_ID: Json = { not_id: { any: true } };

function cidr(block: string): Json {
  const [address, bits] = block.split("/");
  return { address_prefix: address, prefix_len: bits === undefined ? (address.includes(":") ? 128 : 32) : Number(bits) };
}

/** The peer's URI SAN: `spiffe://` + the policy's principal. */
function peerPrincipal(pattern: string): Json {
  let name: Json;
  if (pattern === "*") name = ANY_NON_EMPTY;
  else if (pattern.endsWith("*")) name = { prefix: `spiffe://${pattern.slice(0, -1)}` };
  else if (pattern.startsWith("*")) name = { safe_regex: { regex: `spiffe://.*${re2Literal(pattern.slice(1))}` } };
  else name = { exact: `spiffe://${pattern}` };
  return { authenticated: { principal_name: name } };
}

/** The namespace segment of the peer's SAN (`<td>/ns/<ns>/sa/<sa>`). */
function peerNamespace(pattern: string): Json {
  let ns: string;
  if (pattern === "*") ns = "[^/]+";
  else if (pattern.endsWith("*")) ns = `${re2Literal(pattern.slice(0, -1))}[^/]*`;
  else if (pattern.startsWith("*")) ns = `[^/]*${re2Literal(pattern.slice(1))}`;
  else ns = re2Literal(pattern);
  return { authenticated: { principal_name: { safe_regex: { regex: `.*/ns/${ns}/.*` } } } };
}

/** A value of the validated JWT's payload (jwt_authn's dynamic metadata). */
function payloadMatcher(path: readonly string[], value: Json): Json {
  return { filter: JWT_FILTER, path: [JWT_PAYLOAD_KEY, ...path].map((key) => ({ key })), value };
}

const payloadId = (path: readonly string[], value: Json): Json => ({ metadata: payloadMatcher(path, value) });

/** A claim holding a matching string, or a list with a matching string in it. */
function claimIds(path: readonly string[], pattern: string): Json[] {
  const m = stringMatcher(pattern);
  return [payloadId(path, { string_match: m }), payloadId(path, { list_match: { one_of: { string_match: m } } })];
}

/**
 * `<iss>/<sub>` against a pattern: an issuer may hold `/` itself, so the
 * pattern is tried split at each of its `/` (issuer before, subject after).
 */
function requestPrincipal(pattern: string): Json {
  const iss = (m: Json) => payloadId(["iss"], { string_match: m });
  const sub = (m: Json) => payloadId(["sub"], { string_match: m });
  if (pattern === "*") return payloadId(["iss"], { present_match: true });
  const kind = pattern.endsWith("*") ? "prefix" : pattern.startsWith("*") ? "suffix" : "exact";
  const text = kind === "prefix" ? pattern.slice(0, -1) : kind === "suffix" ? pattern.slice(1) : pattern;
  const slashes = [...text].flatMap((c, i) => (c === "/" ? [i] : []));
  const ids: Json[] = [];
  // A prefix may end inside the issuer, a suffix start inside the subject.
  if (kind === "prefix") ids.push(iss(part("prefix", text)));
  if (kind === "suffix") ids.push(sub(part("suffix", text)));
  for (const i of slashes) {
    const [issuer, subject] = [text.slice(0, i), text.slice(i + 1)];
    ids.push({ and_ids: { ids: [iss(part(kind === "suffix" ? "suffix" : "exact", issuer)), sub(part(kind === "prefix" ? "prefix" : "exact", subject))] } });
  }
  return ids.length === 0 ? NEVER_ID : orIds(ids);
}

const header = (name: string, pattern: string, ignoreCase = false): Json => ({ header: { name, string_match: stringMatcher(pattern, ignoreCase) } });

/** `values` ORed, `notValues` as not(or): one entry each, to be ANDed. */
function field<T>(
  values: readonly T[] | undefined,
  notValues: readonly T[] | undefined,
  one: (v: T) => Json,
  or: (xs: Json[]) => Json,
  not: (x: Json) => Json,
): Json[] {
  const out: Json[] = [];
  if (values) out.push(or(values.map(one)));
  if (notValues) out.push(not(or(notValues.map(one))));
  return out;
}

const idField = <T>(values: readonly T[] | undefined, notValues: readonly T[] | undefined, one: (v: T) => Json) =>
  field(values, notValues, one, orIds, (x) => ({ not_id: x }));
const ruleField = <T>(values: readonly T[] | undefined, notValues: readonly T[] | undefined, one: (v: T) => Json) =>
  field(values, notValues, one, orRules, (x) => ({ not_rule: x }));

/** Keys of `when` read from the request itself (HTTP only), by prefix. */
const HTTP_WHEN = ["request.headers[", "request.auth."];
const isHttpCondition = (c: AuthzCondition) => HTTP_WHEN.some((p) => c.key.startsWith(p));
/** Keys of `when` that are about the connection's destination: permission side. */
const PERMISSION_WHEN: ReadonlySet<string> = new Set(["destination.ip", "destination.port", "connection.sni"]);

function claimPath(key: string): string[] {
  if (key === "request.auth.audiences") return ["aud"];
  if (key === "request.auth.presenter") return ["azp"];
  return [...key.slice("request.auth.claims".length).matchAll(/\[([^[\]]+)\]/g)].map((m) => m[1]);
}

function conditionId(c: AuthzCondition): Json[] {
  const k = c.key;
  if (k.startsWith("request.headers[")) {
    const name = k.slice("request.headers[".length, -1).toLowerCase();
    return idField(c.values, c.notValues, (v) => header(name, v));
  }
  if (k === "request.auth.audiences" || k === "request.auth.presenter" || k.startsWith("request.auth.claims[")) {
    const path = claimPath(k);
    return idField(c.values, c.notValues, (v) => orIds(claimIds(path, v)));
  }
  switch (k) {
    case "source.ip":
      return idField(c.values, c.notValues, (v) => ({ direct_remote_ip: cidr(v) }));
    case "remote.ip":
      return idField(c.values, c.notValues, (v) => ({ remote_ip: cidr(v) }));
    case "source.namespace":
      return idField(c.values, c.notValues, peerNamespace);
    case "source.principal":
      return idField(c.values, c.notValues, peerPrincipal);
    case "request.auth.principal":
      return idField(c.values, c.notValues, requestPrincipal);
    default:
      throw new Error(`condition key ${k} is not a principal`);
  }
}

function conditionRule(c: AuthzCondition): Json[] {
  switch (c.key) {
    case "destination.ip":
      return ruleField(c.values, c.notValues, (v) => ({ destination_ip: cidr(v) }));
    case "destination.port":
      return ruleField(c.values, c.notValues, (v) => ({ destination_port: Number(v) }));
    case "connection.sni":
      return ruleField(c.values, c.notValues, (v) => ({ requested_server_name: stringMatcher(v) }));
    default:
      throw new Error(`condition key ${c.key} is not a permission`);
  }
}

function sourceIds(s: AuthzSource): Json[] {
  return [
    ...idField(s.principals, s.notPrincipals, peerPrincipal),
    ...idField(s.requestPrincipals, s.notRequestPrincipals, requestPrincipal),
    ...idField(s.namespaces, s.notNamespaces, peerNamespace),
    ...idField(s.ipBlocks, s.notIpBlocks, (v) => ({ direct_remote_ip: cidr(v) })),
    ...idField(s.remoteIpBlocks, s.notRemoteIpBlocks, (v) => ({ remote_ip: cidr(v) })),
  ];
}

function operationRules(o: AuthzOperation): Json[] {
  return [
    ...ruleField(o.hosts, o.notHosts, (v) => header(":authority", v, true)),
    ...ruleField(o.ports, o.notPorts, (v) => ({ destination_port: v })),
    ...ruleField(o.methods, o.notMethods, (v) => header(":method", v)),
    ...ruleField(o.paths, o.notPaths, (v) => ({ url_path: { path: stringMatcher(v) } })),
  ];
}

// ---- HTTP-only fields on TCP chains

const HTTP_SOURCE_FIELDS = ["requestPrincipals", "notRequestPrincipals"] as const;
const HTTP_OPERATION_FIELDS = ["hosts", "notHosts", "methods", "notMethods", "paths", "notPaths"] as const;

/** Whether a rule reads anything only an HTTP request has. */
export function needsHttp(rule: AuthzRule): boolean {
  return (
    rule.from.some((s) => HTTP_SOURCE_FIELDS.some((f) => s[f] !== undefined)) ||
    rule.to.some((o) => HTTP_OPERATION_FIELDS.some((f) => o[f] !== undefined)) ||
    rule.when.some(isHttpCondition)
  );
}

/** The rule without its HTTP-only conditions (a DENY rule on a TCP chain: it matches more). */
function withoutHttp(rule: AuthzRule): AuthzRule {
  const drop = <T extends object>(x: T, fields: readonly string[]) => Object.fromEntries(Object.entries(x).filter(([k]) => !fields.includes(k))) as T;
  return {
    from: rule.from.map((s) => drop(s, HTTP_SOURCE_FIELDS)),
    to: rule.to.map((o) => drop(o, HTTP_OPERATION_FIELDS)),
    when: rule.when.filter((c) => !isHttpCondition(c)),
  };
}

// ---- Policies

/** One RBAC policy for one rule: any permission (to) and any principal (from), each with the rule's when conditions. */
export function rulePolicy(rule: AuthzRule): Json {
  const whenIds = rule.when.filter((c) => !PERMISSION_WHEN.has(c.key)).flatMap(conditionId);
  const whenRules = rule.when.filter((c) => PERMISSION_WHEN.has(c.key)).flatMap(conditionRule);
  const permissions = rule.to.length === 0 ? [andRules(whenRules)] : rule.to.map((o) => andRules([...operationRules(o), ...whenRules]));
  const principals = rule.from.length === 0 ? [andIds(whenIds)] : rule.from.map((s) => andIds([...sourceIds(s), ...whenIds]));
  return { permissions, principals };
}

export const rbacPolicyName = (p: { namespace: string; name: string }, i: number) => `ns[${p.namespace}]-policy[${p.name}]-rule[${i}]`;

/** Envoy's RBAC action for a policy action (CUSTOM's shadow rules deny what the authorizer must see). */
const RBAC_ACTION: Readonly<Record<AuthzAction, string>> = { ALLOW: "ALLOW", DENY: "DENY", AUDIT: "LOG", CUSTOM: "DENY" };

/**
 * The RBAC rules (`envoy.config.rbac.v3.RBAC`) of the policies with one
 * action; undefined when that action has nothing to enforce. `namePrefix`
 * goes before each policy name (CUSTOM's shadow rules).
 */
export function rbacRules(policies: readonly Resource<"AuthorizationPolicy">[], action: AuthzAction, tcp: boolean, namePrefix = ""): Json | undefined {
  const mine = policies.filter((p) => p.spec.action === action);
  // Without DENY (AUDIT, CUSTOM) rules there is nothing to deny (mark, ask); without ALLOW policies everything is allowed.
  if (mine.length === 0 || (action !== "ALLOW" && mine.every((p) => p.spec.rules.length === 0))) return undefined;
  const rbacPolicies: Record<string, Json> = {};
  for (const p of mine) {
    p.spec.rules.forEach((rule, i) => {
      if (tcp && needsHttp(rule)) {
        if (action === "ALLOW") return;
        rule = withoutHttp(rule);
      }
      rbacPolicies[namePrefix + rbacPolicyName(p, i)] = rulePolicy(rule);
    });
  }
  return { action: RBAC_ACTION[action], policies: rbacPolicies };
}

/**
 * The HTTP RBAC filters of an inbound HttpConnectionManager, AUDIT, DENY,
 * ALLOW: zero to three filters (to go after jwt_authn and the CUSTOM
 * filters, before the module).
 */
export function httpRbacFilters(policies: readonly Resource<"AuthorizationPolicy">[]): Json[] {
  return (["AUDIT", "DENY", "ALLOW"] as const).flatMap((action) => {
    const rules = rbacRules(policies, action, false);
    return rules ? [{ name: HTTP_RBAC, typed_config: { "@type": HTTP_RBAC_TYPE, rules } }] : [];
  });
}

/** The network RBAC filters of a TCP filter chain (after the CUSTOM ones, before tcp_proxy): AUDIT, DENY, ALLOW. */
export function networkRbacFilters(policies: readonly Resource<"AuthorizationPolicy">[], statPrefix: string): Json[] {
  return (["AUDIT", "DENY", "ALLOW"] as const).flatMap((action) => {
    const rules = rbacRules(policies, action, true);
    return rules ? [{ name: NETWORK_RBAC, typed_config: { "@type": NETWORK_RBAC_TYPE, stat_prefix: statPrefix, rules } }] : [];
  });
}

export { HTTP_RBAC_TYPE, NETWORK_RBAC_TYPE };
