import { ipMatcher } from "../../../host/security/authz/matcher.ts";
import type { AuthzRequest } from "../../../host/security/authz/matcher.ts";

// Envoy's RBAC semantics (envoy/config/rbac/v3/rbac.proto, as documented)
// over the decoded filter configurations disco-discovery serves, for the
// matchers it emits: lets a test put what Envoy would decide beside what our
// own authorization engine decides for the same request. Not an engine of
// policies: it reads Envoy's configuration only.

type Json = Record<string, any>;

/** What Envoy knows of a request: our AuthzRequest plus jwt_authn's metadata (payload with space-delimited claims split). */
function payloadMetadata(r: AuthzRequest): Json | undefined {
  if (!r.authPayload) return undefined;
  const p: Json = { ...r.authPayload };
  for (const k of ["scope", "permission"]) if (typeof p[k] === "string") p[k] = (p[k] as string).split(" ").filter((s) => s !== "");
  return p;
}

function stringMatch(m: Json, v: string | undefined): boolean {
  if (v === undefined) return false;
  const ic = m.ignore_case === true;
  const val = ic ? v.toLowerCase() : v;
  const t = (s: string) => (ic ? s.toLowerCase() : s);
  if (m.exact !== undefined) return val === t(m.exact);
  if (m.prefix !== undefined) return val.startsWith(t(m.prefix));
  if (m.suffix !== undefined) return val.endsWith(t(m.suffix));
  if (m.safe_regex !== undefined) return new RegExp(`^(?:${m.safe_regex.regex})$`, "s").test(v);
  if (m.contains !== undefined) return val.includes(t(m.contains));
  throw new Error(`unknown StringMatcher ${JSON.stringify(m)}`);
}

function headerValue(r: AuthzRequest, name: string): string | undefined {
  if (name === ":authority") return r.host;
  if (name === ":method") return r.method;
  if (name === ":path") return r.path;
  const values = r.headers.filter(([n]) => n === name.toLowerCase()).map(([, v]) => v);
  return values.length === 0 ? undefined : values.join(",");
}

function headerMatch(h: Json, r: AuthzRequest): boolean {
  const v = headerValue(r, h.name);
  let ok: boolean;
  if (h.present_match !== undefined) ok = v !== undefined;
  else if (h.string_match !== undefined) ok = stringMatch(h.string_match, v);
  else throw new Error(`unknown HeaderMatcher ${JSON.stringify(h)}`);
  return h.invert_match ? !ok : ok;
}

function valueMatch(m: Json, v: unknown): boolean {
  if (v === undefined) return false;
  if (m.present_match) return v !== null && typeof v !== "object";
  if (m.string_match) return typeof v === "string" && stringMatch(m.string_match, v);
  if (m.list_match) return Array.isArray(v) && v.some((x) => valueMatch(m.list_match.one_of, x));
  throw new Error(`unknown ValueMatcher ${JSON.stringify(m)}`);
}

function metadataMatch(m: Json, r: AuthzRequest): boolean {
  if (m.filter !== "envoy.filters.http.jwt_authn") return false;
  let cur: unknown = { payload: payloadMetadata(r) };
  for (const { key } of m.path) {
    if (typeof cur !== "object" || cur === null || Array.isArray(cur)) return false;
    cur = (cur as Json)[key];
  }
  return valueMatch(m.value, cur);
}

const cidr = (c: Json) => ipMatcher([`${c.address_prefix}/${c.prefix_len?.value ?? c.prefix_len ?? 0}`]);
const pathOnly = (p: string) => p.split(/[?#]/)[0];

function permission(p: Json, r: AuthzRequest): boolean {
  if (p.any) return true;
  if (p.and_rules) return p.and_rules.rules.every((x: Json) => permission(x, r));
  if (p.or_rules) return p.or_rules.rules.some((x: Json) => permission(x, r));
  if (p.not_rule) return !permission(p.not_rule, r);
  if (p.header) return headerMatch(p.header, r);
  if (p.url_path) return stringMatch(p.url_path.path, pathOnly(r.path));
  if (p.destination_port !== undefined) return r.destinationPort === p.destination_port;
  if (p.destination_ip) return cidr(p.destination_ip)(r.destinationIp);
  if (p.requested_server_name) return stringMatch(p.requested_server_name, r.sni);
  if (p.metadata) return metadataMatch(p.metadata, r);
  throw new Error(`unknown Permission ${JSON.stringify(p)}`);
}

function principal(p: Json, r: AuthzRequest): boolean {
  if (p.any) return true;
  if (p.and_ids) return p.and_ids.ids.every((x: Json) => principal(x, r));
  if (p.or_ids) return p.or_ids.ids.some((x: Json) => principal(x, r));
  if (p.not_id) return !principal(p.not_id, r);
  if (p.authenticated) return r.peerPrincipal !== undefined && stringMatch(p.authenticated.principal_name, `spiffe://${r.peerPrincipal}`);
  if (p.direct_remote_ip) return cidr(p.direct_remote_ip)(r.sourceIp);
  if (p.remote_ip) return cidr(p.remote_ip)(r.remoteIp ?? r.sourceIp);
  if (p.header) return headerMatch(p.header, r);
  if (p.metadata) return metadataMatch(p.metadata, r);
  throw new Error(`unknown Principal ${JSON.stringify(p)}`);
}

/** The name of the first RBAC policy of `rules` that matches, else undefined. */
export function matchingPolicy(rules: Json, r: AuthzRequest): string | undefined {
  return Object.entries(rules.policies ?? {}).find(
    ([, pol]: [string, any]) => pol.permissions.some((x: Json) => permission(x, r)) && pol.principals.some((x: Json) => principal(x, r)),
  )?.[0];
}

/** Whether Envoy's chain of RBAC filters (in order) lets the request through. */
export function rbacAllows(filters: readonly Json[], r: AuthzRequest): boolean {
  for (const f of filters) {
    const rules = f.typed_config.rules;
    // A filter with shadow rules only (CUSTOM's) and a LOG one (AUDIT's) never deny.
    if (!rules || rules.action === "LOG") continue;
    const hit = matchingPolicy(rules, r) !== undefined;
    if ((rules.action ?? "ALLOW") === "DENY" ? hit : !hit) return false;
  }
  return true;
}
