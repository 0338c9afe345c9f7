import { BlockList, isIP } from "node:net";
import type { JWTPayload } from "jose";
import type { AuthzCondition, AuthzOperation, AuthzRule, AuthzSource } from "../../config/resources/security.ts";
import type { HeaderPairs } from "../jwt/extractor.ts";

/**
 * Whether one AuthorizationPolicy rule matches a request (Envoy RBAC
 * matchers as the mesh generates them; security.md §5.1–5.2). Inside a rule
 * from, to and when are ANDed; entries of from (and of to) are ORed; fields
 * inside one source/operation are ANDed; values of one field are ORed;
 * `notX` holds when none of its values match; an absent field matches
 * anything, an absent request value matches no pattern (so `notX: ["*"]`
 * holds for it).
 */

/** What authorization reads of a request. The sidecar fills it in. */
export interface AuthzRequest {
  readonly method: string;
  /** Normalized path; anything from `?` on is ignored. */
  readonly path: string;
  /** `:authority` / Host as sent (port included if the client sent one). */
  readonly host: string;
  /** Lower-case names. */
  readonly headers: HeaderPairs;
  /** Address of the peer connection (`source.ip`, `ipBlocks`). */
  readonly sourceIp: string;
  /** Original client address (`remote.ip`, `remoteIpBlocks`); default sourceIp. */
  readonly remoteIp?: string;
  readonly destinationIp?: string;
  /** The destination container port. */
  readonly destinationPort: number;
  readonly sni?: string;
  /** Peer certificate URI SAN without `spiffe://` (`cluster.local/ns/foo/sa/sleep`); undefined on plain text. */
  readonly peerPrincipal?: string;
  /** `<iss>/<sub>` of a validated JWT; undefined without one. */
  readonly requestPrincipal?: string;
  /** The validated JWT payload. */
  readonly authPayload?: JWTPayload;
}

/** Exact `abc`, prefix `abc*`, suffix `*abc`, presence `*` (non-empty). */
export function matchString(pattern: string, value: string | undefined): boolean {
  if (value === undefined) return false;
  if (pattern === "*") return value !== "";
  if (pattern.endsWith("*")) return value.startsWith(pattern.slice(0, -1));
  if (pattern.startsWith("*")) return value.endsWith(pattern.slice(1));
  return value === pattern;
}

function anyMatch(patterns: readonly string[], values: readonly string[]): boolean {
  return values.some((v) => patterns.some((p) => matchString(p, v)));
}

/** `::ffff:10.0.0.1` (a v4 peer on a dual-stack socket) is 10.0.0.1. */
function plainIp(ip: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return m ? m[1] : ip;
}

/**
 * A compiled list of addresses and CIDR blocks. v4 and v6 are kept apart
 * (Node's BlockList would let `::/0` match every v4 address through the
 * v4-mapped range; Envoy's CIDR ranges never cross families).
 */
export function ipMatcher(blocks: readonly string[]): (ip: string | undefined) => boolean {
  const v4 = new BlockList();
  const v6 = new BlockList();
  for (const block of blocks) {
    const [addr, bits] = block.split("/");
    const six = isIP(addr) === 6;
    const list = six ? v6 : v4;
    const family = six ? "ipv6" : "ipv4";
    if (bits === undefined) list.addAddress(addr, family);
    else list.addSubnet(addr, Number(bits), family);
  }
  return (ip) => {
    if (ip === undefined) return false;
    const p = plainIp(ip);
    const family = isIP(p);
    if (family === 4) return v4.check(p, "ipv4");
    if (family === 6) return v6.check(p, "ipv6");
    return false;
  };
}

/** The namespace inside a peer identity `<td>/ns/<ns>/sa/<sa>`. */
export function namespaceOf(principal: string | undefined): string | undefined {
  if (principal === undefined) return undefined;
  const m = /(?:^|\/)ns\/([^/]+)\//.exec(principal);
  return m ? m[1] : undefined;
}

function pathOnly(path: string): string {
  const q = path.search(/[?#]/);
  return q < 0 ? path : path.slice(0, q);
}

function headerValue(headers: HeaderPairs, name: string): string | undefined {
  const values = headers.filter(([n]) => n === name).map(([, v]) => v);
  // Envoy matches repeated headers as one comma-joined value.
  return values.length === 0 ? undefined : values.join(",");
}

/** Claims upstream also splits on spaces when they are strings (spaceDelimitedClaims defaults). */
const SPACE_DELIMITED_CLAIMS = new Set(["scope", "permission"]);

/** `request.auth.claims[a][b]`: the values at that nested claim (lists give every string element). */
export function claimValues(payload: JWTPayload | undefined, path: readonly string[]): string[] {
  let cur: unknown = payload;
  for (const key of path) {
    if (typeof cur !== "object" || cur === null || Array.isArray(cur)) return [];
    cur = (cur as Record<string, unknown>)[key];
  }
  const scalar = (v: unknown) => (typeof v === "string" ? [v] : typeof v === "number" || typeof v === "boolean" ? [String(v)] : []);
  if (Array.isArray(cur)) return cur.flatMap(scalar);
  if (typeof cur === "string" && SPACE_DELIMITED_CLAIMS.has(path[path.length - 1])) return cur.split(" ").filter((s) => s !== "");
  return scalar(cur);
}

type Pred = (r: AuthzRequest) => boolean;

/** `field` and `notField` of one string-valued attribute. */
function stringField(values: readonly string[] | undefined, notValues: readonly string[] | undefined, get: (r: AuthzRequest) => readonly string[]): Pred[] {
  const preds: Pred[] = [];
  if (values) preds.push((r) => anyMatch(values, get(r)));
  if (notValues) preds.push((r) => !anyMatch(notValues, get(r)));
  return preds;
}

function ipField(values: readonly string[] | undefined, notValues: readonly string[] | undefined, get: (r: AuthzRequest) => string | undefined): Pred[] {
  const preds: Pred[] = [];
  if (values) {
    const m = ipMatcher(values);
    preds.push((r) => m(get(r)));
  }
  if (notValues) {
    const m = ipMatcher(notValues);
    preds.push((r) => !m(get(r)));
  }
  return preds;
}

const one = (v: string | undefined): readonly string[] => (v === undefined ? [] : [v]);
const all =
  (preds: Pred[]): Pred =>
  (r) =>
    preds.every((p) => p(r));

export function compileSource(s: AuthzSource): Pred {
  return all([
    ...stringField(s.principals, s.notPrincipals, (r) => one(r.peerPrincipal)),
    ...stringField(s.requestPrincipals, s.notRequestPrincipals, (r) => one(r.requestPrincipal)),
    ...stringField(s.namespaces, s.notNamespaces, (r) => one(namespaceOf(r.peerPrincipal))),
    ...ipField(s.ipBlocks, s.notIpBlocks, (r) => r.sourceIp),
    ...ipField(s.remoteIpBlocks, s.notRemoteIpBlocks, (r) => r.remoteIp ?? r.sourceIp),
  ]);
}

export function compileOperation(o: AuthzOperation): Pred {
  const lower = (list: readonly string[] | undefined) => list?.map((h) => h.toLowerCase());
  const ports = (list: readonly number[] | undefined) => list?.map(String);
  return all([
    // Hosts are case-insensitive (security.md §5.2).
    ...stringField(lower(o.hosts), lower(o.notHosts), (r) => [r.host.toLowerCase()]),
    ...stringField(ports(o.ports), ports(o.notPorts), (r) => [String(r.destinationPort)]),
    ...stringField(o.methods, o.notMethods, (r) => [r.method]),
    ...stringField(o.paths, o.notPaths, (r) => [pathOnly(r.path)]),
  ]);
}

/** The nested claim names of `request.auth.claims[a][b]`. */
function claimPath(key: string): string[] {
  return [...key.slice("request.auth.claims".length).matchAll(/\[([^[\]]+)\]/g)].map((m) => m[1]);
}

export function compileCondition(c: AuthzCondition): Pred {
  const key = c.key;
  const ip = (get: (r: AuthzRequest) => string | undefined) => all(ipField(c.values, c.notValues, get));
  const str = (get: (r: AuthzRequest) => readonly string[]) => all(stringField(c.values, c.notValues, get));
  if (key.startsWith("request.headers[")) {
    const name = key.slice("request.headers[".length, -1).toLowerCase();
    return str((r) => one(headerValue(r.headers, name)));
  }
  if (key.startsWith("request.auth.claims[")) {
    const path = claimPath(key);
    return str((r) => claimValues(r.authPayload, path));
  }
  switch (key) {
    case "source.ip":
      return ip((r) => r.sourceIp);
    case "remote.ip":
      return ip((r) => r.remoteIp ?? r.sourceIp);
    case "destination.ip":
      return ip((r) => r.destinationIp);
    case "source.namespace":
      return str((r) => one(namespaceOf(r.peerPrincipal)));
    case "source.principal":
      return str((r) => one(r.peerPrincipal));
    case "request.auth.principal":
      return str((r) => one(r.requestPrincipal));
    case "request.auth.audiences":
      return str((r) => claimValues(r.authPayload, ["aud"]));
    case "request.auth.presenter":
      return str((r) => claimValues(r.authPayload, ["azp"]));
    case "destination.port":
      return str((r) => [String(r.destinationPort)]);
    case "connection.sni":
      return str((r) => one(r.sni));
    default:
      // The decoder refuses other keys; an unknown one can never hold.
      return () => false;
  }
}

/**
 * A compiled rule. Entries of `from` are ORed, as are entries of `to`; an
 * empty `from`/`to` matches anything; every `when` must hold.
 */
export function compileRule(rule: AuthzRule): Pred {
  const from = rule.from.map(compileSource);
  const to = rule.to.map(compileOperation);
  const when = rule.when.map(compileCondition);
  return (r) => (from.length === 0 || from.some((p) => p(r))) && (to.length === 0 || to.some((p) => p(r))) && when.every((p) => p(r));
}
