import type { Field } from "../decode.ts";
import { attempt, attemptEach, noErrorsYet } from "../problems.ts";
import { resolveResourceHost } from "../../mesh/hosts.ts";
import { dns1123Label, isDns1123Label, isDns1123Subdomain, labelMap, port, wildcardHost } from "./syntax.ts";
import { type RegexMatcher, compileRegex } from "../../regex/engine.ts";
import { exportTo, positiveDuration } from "./networking_fields.ts";

// The VirtualService resource of the networking API group (re-exported by networking.ts).

export interface RouteDestination {
  /** As written. */
  readonly host: string;
  /** `host` with a short name resolved in the VirtualService's namespace. */
  readonly fqdn: string;
  readonly subset?: string;
  readonly port?: number;
}

export interface HttpRouteDestination {
  readonly destination: RouteDestination;
  /** Percentage; undefined when not given (a single destination takes all traffic). */
  readonly weight?: number;
  readonly headers: { readonly request: HeaderOperations; readonly response: HeaderOperations };
}

/** Upstream's StringMatch: one of exact, prefix, regex (full match on the linear engine, compiled at load). */
export type StringMatch = { readonly exact: string } | { readonly prefix: string } | RegexStringMatch;

export interface RegexStringMatch {
  readonly regex: string;
  /** The compiled pattern; not enumerable, so dumps and comparisons see only `regex`. */
  readonly matcher: RegexMatcher;
}

export interface HttpMatchRequest {
  readonly name?: string;
  readonly uri?: StringMatch;
  readonly scheme?: StringMatch;
  readonly method?: StringMatch;
  readonly authority?: StringMatch;
  /** Header name (lower case) → match. */
  readonly headers: Readonly<Record<string, StringMatch>>;
  readonly withoutHeaders: Readonly<Record<string, StringMatch>>;
  readonly queryParams: Readonly<Record<string, StringMatch>>;
  readonly port?: number;
  readonly sourceLabels: Readonly<Record<string, string>>;
  readonly sourceNamespace?: string;
  readonly gateways: readonly string[];
  readonly ignoreUriCase: boolean;
}

export interface HttpRewrite {
  readonly uri?: string;
  readonly authority?: string;
}

export interface HttpRedirect {
  readonly uri?: string;
  readonly authority?: string;
  readonly scheme?: string;
  readonly port?: number;
  readonly redirectCode: number;
}

export interface HeaderOperations {
  readonly set: Readonly<Record<string, string>>;
  readonly add: Readonly<Record<string, string>>;
  readonly remove: readonly string[];
}

export interface HttpFault {
  readonly delay?: { readonly fixedDelayMs: number; readonly percentage: number };
  readonly abort?: { readonly httpStatus: number; readonly percentage: number };
}

export interface HttpRetry {
  readonly attempts: number;
  readonly perTryTimeoutMs?: number;
  readonly retryOn: readonly string[];
}

export interface HttpRoute {
  readonly name?: string;
  /** Empty: matches every request. */
  readonly match: readonly HttpMatchRequest[];
  readonly route: readonly HttpRouteDestination[];
  readonly redirect?: HttpRedirect;
  readonly directResponse?: { readonly status: number; readonly body?: string };
  readonly rewrite?: HttpRewrite;
  readonly timeoutMs?: number;
  readonly retries?: HttpRetry;
  readonly fault?: HttpFault;
  readonly mirror?: RouteDestination;
  /** Percentage of requests mirrored (default 100 with a mirror). */
  readonly mirrorPercentage: number;
  readonly headers: { readonly request: HeaderOperations; readonly response: HeaderOperations };
}

const HTTP_ROUTE_FIELDS = [
  "name",
  "match",
  "route",
  "redirect",
  "directResponse",
  "delegate",
  "rewrite",
  "timeout",
  "retries",
  "fault",
  "mirror",
  "mirrors",
  "mirrorPercentage",
  "mirrorPercent",
  "mirror_percent",
  "corsPolicy",
  "headers",
];
const MATCH_FIELDS = [
  "name",
  "uri",
  "scheme",
  "method",
  "authority",
  "headers",
  "port",
  "sourceLabels",
  "gateways",
  "queryParams",
  "ignoreUriCase",
  "withoutHeaders",
  "sourceNamespace",
  "statPrefix",
];

/** A configured regex compiled on the linear-time engine; refused naming the field when the engine refuses it. */
function linearRegex(f: Field): RegexMatcher {
  const value = f.string();
  const matcher = compileRegex(value);
  if ("error" in matcher) return f.invalid(`regex ${JSON.stringify(value)} is not supported: ${matcher.error}`);
  return matcher;
}

function stringMatch(f: Field): StringMatch {
  f.object();
  const kind = f.oneOf(["exact", "prefix", "regex"] as const)!;
  const value = f.get(kind).string();
  if (kind === "regex") {
    const matcher = linearRegex(f.get("regex"));
    return Object.freeze(Object.defineProperty({ regex: value }, "matcher", { value: matcher, enumerable: false }) as RegexStringMatch);
  }
  return Object.freeze({ [kind]: value } as StringMatch);
}

function matchMap(f: Field, lower: boolean): Readonly<Record<string, StringMatch>> {
  const out: Record<string, StringMatch> = {};
  for (const [k, v] of f.entries()) out[lower ? k.toLowerCase() : k] = stringMatch(v);
  return Object.freeze(out);
}

function decodeMatch(m: Field): HttpMatchRequest {
  m.object();
  m.allowOnly(MATCH_FIELDS);
  const opt = (name: string) => (m.get(name).present ? attempt(m.get(name), stringMatch) : undefined);
  return Object.freeze({
    name: m.get("name").optionalString(),
    uri: opt("uri"),
    scheme: opt("scheme"),
    method: opt("method"),
    authority: opt("authority"),
    headers: attempt(m.get("headers"), (f) => matchMap(f, true)) ?? Object.freeze({}),
    withoutHeaders: attempt(m.get("withoutHeaders"), (f) => matchMap(f, true)) ?? Object.freeze({}),
    queryParams: attempt(m.get("queryParams"), (f) => matchMap(f, false)) ?? Object.freeze({}),
    port: m.get("port").present ? attempt(m.get("port"), port) : undefined,
    sourceLabels: attempt(m.get("sourceLabels"), labelMap) ?? Object.freeze({}),
    sourceNamespace: m.get("sourceNamespace").optionalString(),
    gateways: attempt(m.get("gateways"), (f) => Object.freeze(f.list().map(gatewayRef))) ?? Object.freeze([]),
    ignoreUriCase: m.get("ignoreUriCase").bool(false),
  });
}

function percentage(f: Field, fallback: number): number {
  if (!f.present) return fallback;
  f.object();
  f.allowOnly(["value"]);
  const v = f.get("value").value;
  if (typeof v !== "number" || v < 0 || v > 100) return f.get("value").fail("a number from 0 to 100");
  return v;
}

function headerOps(f: Field): HeaderOperations {
  if (!f.present) return EMPTY_OPS;
  f.object();
  f.allowOnly(["set", "add", "remove"]);
  return Object.freeze({
    set: Object.freeze(f.get("set").stringMap()),
    add: Object.freeze(f.get("add").stringMap()),
    remove: Object.freeze(
      f
        .get("remove")
        .list()
        .map((x) => x.nonEmptyString().toLowerCase()),
    ),
  });
}
const EMPTY_OPS: HeaderOperations = Object.freeze({ set: Object.freeze({}), add: Object.freeze({}), remove: Object.freeze([]) });

function decodeFault(f: Field): HttpFault {
  f.object();
  f.allowOnly(["delay", "abort"]);
  const d = f.get("delay");
  const a = f.get("abort");
  let delay: HttpFault["delay"];
  if (d.present) {
    d.object();
    d.allowOnly(["fixedDelay", "exponentialDelay", "percentage", "percent"]);
    const fixed = positiveDuration(d.get("fixedDelay")) ?? d.get("fixedDelay").fail('a duration such as "5s"');
    delay = Object.freeze({
      fixedDelayMs: fixed,
      percentage: d.get("percent").present ? d.get("percent").integer(0, 100) : percentage(d.get("percentage"), 100),
    });
  }
  let abort: HttpFault["abort"];
  if (a.present) {
    a.object();
    a.allowOnly(["httpStatus", "grpcStatus", "http2Error", "percentage"]);
    abort = Object.freeze({ httpStatus: a.get("httpStatus").integer(200, 599), percentage: percentage(a.get("percentage"), 100) });
  }
  if (!delay && !abort) f.invalid("expected delay or abort");
  return Object.freeze({ delay, abort });
}

function decodeHttpRoute(h: Field, namespace: string, domain: string): HttpRoute {
  h.object();
  h.allowOnly(HTTP_ROUTE_FIELDS);
  for (const name of ["delegate", "corsPolicy", "mirrors"])
    if (h.get(name).present) h.get(name).warn(`not enforced by this mesh's data path (accepted for compatibility)`);
  // Not enforced either, but every configured regex compiles on the linear engine or is refused.
  const cors = h.get("corsPolicy");
  if (cors.present) {
    attempt(cors, (c) => {
      for (const origin of c.get("allowOrigins").list()) if (origin.get("regex").present) linearRegex(origin.get("regex"));
    });
  }
  const match = attemptEach(h.get("match"), decodeMatch);
  if (h.get("route").present && h.get("route").list().length === 0) h.get("route").fail("a non-empty list");
  const route = attemptEach(h.get("route"), (r): HttpRouteDestination => {
    r.object();
    r.allowOnly(["destination", "weight", "headers"]);
    const destination = attempt(r.get("destination"), (d) => {
      if (!d.present) d.fail("an object with host");
      return decodeDestination(d, namespace, domain);
    });
    const weight = r.get("weight").present ? attempt(r.get("weight"), (f) => f.integer(0, 100)) : undefined;
    return Object.freeze({
      destination,
      weight,
      headers: Object.freeze({ request: headerOps(r.get("headers").get("request")), response: headerOps(r.get("headers").get("response")) }),
    });
  });
  const weights = route.map((r) => r.weight);
  if (noErrorsYet(h) && route.length > 1 && weights.every((w) => w !== undefined) && weights.reduce((a, b) => a! + b!, 0) !== 100) {
    h.get("route").invalid("expected the weights of the destinations to add up to 100");
  }
  const redirectField = h.get("redirect");
  const redirect = redirectField.present
    ? attempt(redirectField, (f): HttpRedirect => {
        f.object();
        f.allowOnly(["uri", "authority", "port", "derivePort", "scheme", "redirectCode"]);
        return Object.freeze({
          uri: f.get("uri").optionalString(),
          authority: f.get("authority").optionalString(),
          scheme: f.get("scheme").optionalString(),
          port: f.get("port").present ? port(f.get("port")) : undefined,
          redirectCode: f.get("redirectCode").integer(300, 399, 301),
        });
      })
    : undefined;
  const direct = h.get("directResponse");
  const directResponse = direct.present
    ? attempt(direct, (f) => {
        f.object();
        f.allowOnly(["status", "body"]);
        const body = f.get("body");
        body.allowOnly(["string", "bytes"]);
        const text = body.present
          ? (body.get("string").optionalString() ?? (body.get("bytes").present ? Buffer.from(body.get("bytes").string(), "base64").toString() : undefined))
          : undefined;
        return Object.freeze({ status: f.get("status").integer(200, 599), body: text });
      })
    : undefined;
  const actions = [route.length > 0 && "route", redirect && "redirect", directResponse && "directResponse"].filter(Boolean);
  if (noErrorsYet(h) && actions.length > 1) h.invalid(`expected one of route, redirect or directResponse, got ${actions.join(" and ")}`);
  if (noErrorsYet(h) && actions.length === 0 && !h.get("delegate").present) h.invalid("expected a route, redirect or directResponse");
  const rw = h.get("rewrite");
  const rewrite = rw.present
    ? attempt(rw, (f) => {
        f.object();
        f.allowOnly(["uri", "authority", "uriRegexRewrite"]);
        const regexRewrite = f.get("uriRegexRewrite");
        if (regexRewrite.present) {
          // Not applied here, but a pattern the linear engine refuses is refused at load, as every configured regex.
          regexRewrite.allowOnly(["match", "rewrite"]);
          linearRegex(regexRewrite.get("match"));
          regexRewrite.warn("not enforced by this mesh's data path (accepted for compatibility)");
        }
        return Object.freeze({ uri: f.get("uri").optionalString(), authority: f.get("authority").optionalString() });
      })
    : undefined;
  const rt = h.get("retries");
  const retries = rt.present
    ? attempt(rt, (f): HttpRetry => {
        f.object();
        f.allowOnly(["attempts", "perTryTimeout", "retryOn", "retryRemoteLocalities"], ["retryIgnorePreviousHosts", "backoff"]);
        const retryOn = f.get("retryOn").optionalString();
        return Object.freeze({
          attempts: f.get("attempts").integer(0, 2 ** 31 - 1, 2),
          perTryTimeoutMs: positiveDuration(f.get("perTryTimeout")),
          retryOn: Object.freeze(
            retryOn
              ? retryOn
                  .split(",")
                  .map((x) => x.trim())
                  .filter(Boolean)
              : ["connect-failure", "refused-stream", "unavailable", "cancelled", "retriable-status-codes"],
          ),
        });
      })
    : undefined;
  const mirrorField = h.get("mirror");
  const mirror = mirrorField.present ? attempt(mirrorField, (d) => decodeDestination(d, namespace, domain)) : undefined;
  const mirrorPercentage = h.get("mirrorPercent").present ? h.get("mirrorPercent").integer(0, 100) : percentage(h.get("mirrorPercentage"), 100);
  const hd = h.get("headers");
  hd.allowOnly(["request", "response"]);
  return Object.freeze({
    name: h.get("name").optionalString(),
    match: Object.freeze(match),
    route: Object.freeze(route),
    redirect,
    directResponse,
    rewrite,
    timeoutMs: attempt(h.get("timeout"), positiveDuration),
    retries,
    fault: h.get("fault").present ? attempt(h.get("fault"), decodeFault) : undefined,
    mirror,
    mirrorPercentage,
    headers: Object.freeze({ request: attempt(hd.get("request"), headerOps) ?? EMPTY_OPS, response: attempt(hd.get("response"), headerOps) ?? EMPTY_OPS }),
  });
}

export interface VirtualServiceSpec {
  /** As written. */
  readonly hosts: readonly string[];
  /** `hosts` with short names resolved in the VirtualService's namespace and the mesh's DNS domain, lower case. */
  readonly fqdns: readonly string[];
  /** `mesh` (all sidecars), `name` (in the VirtualService's namespace) or `namespace/name`; empty means `mesh`. */
  readonly gateways: readonly string[];
  readonly http: readonly HttpRoute[];
  readonly exportTo: readonly string[];
}

/** The implicit gateway of all sidecars. */
export const MESH_GATEWAY = "mesh";

function gatewayRef(f: Field): string {
  const s = f.nonEmptyString();
  if (s === MESH_GATEWAY) return s;
  const slash = s.indexOf("/");
  const ns = slash < 0 ? undefined : s.slice(0, slash);
  const name = slash < 0 ? s : s.slice(slash + 1);
  if ((ns !== undefined && !isDns1123Label(ns)) || !isDns1123Subdomain(name)) f.fail('"mesh", a Gateway name, or namespace/name');
  return s;
}

function decodeDestination(d: Field, namespace: string, domain: string): RouteDestination {
  d.object();
  d.allowOnly(["host", "subset", "port", "labels"]);
  // Spec 1 (MeshService): labels MUST be empty when used as a VirtualService destination; versions are chosen by subset.
  const labels = d.get("labels");
  if (labels.present && labels.entries().length > 0)
    labels.invalid(
      "expected no labels on a VirtualService destination (spec: MeshService labels must be empty here); select a version with subset and a DestinationRule subset",
    );
  const host = wildcardHost(d.get("host"), false);
  const p = d.get("port");
  let portNumber: number | undefined;
  if (p.present) {
    p.object();
    p.allowOnly(["number"]);
    portNumber = port(p.get("number"));
  }
  return Object.freeze({
    host,
    fqdn: resolveResourceHost(host, namespace, domain),
    subset: d.get("subset").present ? dns1123Label(d.get("subset")) : undefined,
    port: portNumber,
  });
}

export function decodeVirtualService(spec: Field, namespace: string, domain: string): VirtualServiceSpec {
  spec.object();
  spec.allowOnly(["hosts", "gateways", "http", "exportTo", "tcp", "tls"]);
  for (const unsupported of ["tcp", "tls"]) {
    if (spec.get(unsupported).present) spec.get(unsupported).warn(`ignored: only http routes are modelled by this mesh`);
  }
  // Without hosts a VirtualService is a delegate: only another VirtualService's `delegate` routes use it (upstream's rule: no gateways then).
  const hosts = attempt(spec.get("hosts"), (f) => Object.freeze(f.list().map((h) => wildcardHost(h))));
  const gateways = attempt(spec.get("gateways"), (f) => Object.freeze(f.list().map(gatewayRef)));
  if (noErrorsYet(spec) && hosts.length === 0 && gateways.length > 0)
    spec.get("gateways").invalid("expected no gateways on a delegate VirtualService (one without hosts)");
  // Upstream: the lone `*` host needs a gateway; it cannot apply to every sidecar.
  if (noErrorsYet(spec) && hosts.includes("*") && (gateways.length === 0 || gateways.includes(MESH_GATEWAY))) {
    spec.get("hosts").invalid('expected no "*" host on a VirtualService bound to the mesh gateway (give gateways, without "mesh")');
  }
  const http = attemptEach(spec.get("http"), (h) => decodeHttpRoute(h, namespace, domain));
  const fqdns = Object.freeze((hosts ?? []).map((h) => resolveResourceHost(h, namespace, domain)));
  return Object.freeze({ hosts, fqdns, gateways, http: Object.freeze(http), exportTo: attempt(spec.get("exportTo"), exportTo) });
}
