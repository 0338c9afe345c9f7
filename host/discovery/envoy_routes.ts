import type { Resource } from "../config/catalog.ts";
import type { HeaderOperations, HttpMatchRequest, HttpRoute, RouteDestination, StringMatch } from "../config/resources/networking.ts";
import { MESH_GATEWAY } from "../config/resources/networking.ts";
import { type Labels, labelsMatch } from "../mesh/labels.ts";
import { gatewayKey, virtualServicesFor } from "../mesh/routing.ts";
import { clusterName } from "../mesh/cluster_names.ts";

/**
 * VirtualService http routes as Envoy routes (proto3 JSON of
 * envoy.config.route.v3.Route), for the sidecar (`mesh` gateway) of a client
 * in `clientNamespace` with `clientLabels`: the same VirtualServices, in the
 * same order, that the mesh model's `routeRequest` picks from, one Envoy
 * route per `match` entry as upstream generates them. Matches that cannot
 * apply to this client (another port, source labels or namespace, a gateway
 * other than `mesh`) are left out here rather than tested per request.
 */

type VirtualService = Resource<"VirtualService">;

export interface RouteContext {
  readonly virtualServices: readonly VirtualService[];
  readonly clientNamespace: string;
  /** Undefined when the proxy's labels are unknown: source-label matches are then left out. */
  readonly clientLabels?: Labels;
  /** The port the client called (the outbound listener's). */
  readonly port: number;
  /** The ports of a service host, to pick a destination port when the route gives none. */
  readonly portsOf: (host: string) => readonly number[];
}

type Json = Record<string, unknown>;

/** A duration in proto3 JSON ("1.5s"). */
export function seconds(ms: number): string {
  return `${ms / 1000}s`;
}

function stringMatch(m: StringMatch, ignoreCase = false): Json {
  const caseFold = ignoreCase ? { ignore_case: true } : {};
  if ("exact" in m) return { exact: m.exact, ...caseFold };
  if ("prefix" in m) return { prefix: m.prefix, ...caseFold };
  return { safe_regex: { regex: m.regex } };
}

function headerMatcher(name: string, m: StringMatch, invert = false): Json {
  return { name, string_match: stringMatch(m), ...(invert ? { invert_match: true } : {}) };
}

function routeMatch(m: HttpMatchRequest | undefined): Json {
  const out: Json = {};
  const uri = m?.uri;
  if (!uri) out.prefix = "/";
  else if ("exact" in uri) out.path = uri.exact;
  else if ("prefix" in uri) out.prefix = uri.prefix;
  else out.safe_regex = { regex: uri.regex };
  if (m?.ignoreUriCase) out.case_sensitive = false;
  if (!m) return out;
  const headers: Json[] = [];
  if (m.method) headers.push(headerMatcher(":method", m.method));
  if (m.authority) headers.push(headerMatcher(":authority", m.authority));
  if (m.scheme) headers.push(headerMatcher(":scheme", m.scheme));
  for (const [name, sm] of Object.entries(m.headers)) headers.push(headerMatcher(name, sm));
  for (const [name, sm] of Object.entries(m.withoutHeaders)) headers.push(headerMatcher(name, sm, true));
  if (headers.length > 0) out.headers = headers;
  const params = Object.entries(m.queryParams).map(([name, sm]) => ({ name, string_match: stringMatch(sm) }));
  if (params.length > 0) out.query_parameters = params;
  return out;
}

/** Whether a match entry can apply to this client at all (the conditions Envoy cannot see). */
function applies(m: HttpMatchRequest, vs: VirtualService, ctx: RouteContext): boolean {
  if (m.port !== undefined && m.port !== ctx.port) return false;
  if (m.sourceNamespace !== undefined && m.sourceNamespace !== ctx.clientNamespace) return false;
  if (Object.keys(m.sourceLabels).length > 0 && (ctx.clientLabels === undefined || !labelsMatch(m.sourceLabels, ctx.clientLabels))) return false;
  if (m.gateways.length > 0 && !m.gateways.map((g) => gatewayKey(g, vs.namespace)).includes(MESH_GATEWAY)) return false;
  return true;
}

function destinationCluster(d: RouteDestination, ctx: RouteContext): string {
  const ports = ctx.portsOf(d.fqdn);
  const port = d.port ?? (ports.length === 1 ? ports[0] : ctx.port);
  return clusterName(d.fqdn, port, d.subset ?? "");
}

function appends(ops: HeaderOperations): Json[] {
  return [
    ...Object.entries(ops.set).map(([key, value]) => ({ header: { key, value }, append_action: "OVERWRITE_IF_EXISTS_OR_ADD" })),
    ...Object.entries(ops.add).map(([key, value]) => ({ header: { key, value }, append_action: "APPEND_IF_EXISTS_OR_ADD" })),
  ];
}

/** Header operations as the fields of a Route or a WeightedCluster (only those that do something). */
function headerFields(headers: { readonly request: HeaderOperations; readonly response: HeaderOperations }): Json {
  const out: Json = {};
  const requestAdd = appends(headers.request);
  const responseAdd = appends(headers.response);
  if (requestAdd.length > 0) out.request_headers_to_add = requestAdd;
  if (headers.request.remove.length > 0) out.request_headers_to_remove = [...headers.request.remove];
  if (responseAdd.length > 0) out.response_headers_to_add = responseAdd;
  if (headers.response.remove.length > 0) out.response_headers_to_remove = [...headers.response.remove];
  return out;
}

/** Two sets of header operations, the second's after the first's. */
function mergeHeaders(a: HttpRoute["headers"], b: HttpRoute["headers"]): HttpRoute["headers"] {
  const merge = (x: HeaderOperations, y: HeaderOperations): HeaderOperations => ({
    set: { ...x.set, ...y.set },
    add: { ...x.add, ...y.add },
    remove: [...x.remove, ...y.remove],
  });
  return { request: merge(a.request, b.request), response: merge(a.response, b.response) };
}

const REDIRECT_CODES: Readonly<Record<number, string>> = {
  301: "MOVED_PERMANENTLY",
  302: "FOUND",
  303: "SEE_OTHER",
  307: "TEMPORARY_REDIRECT",
  308: "PERMANENT_REDIRECT",
};

function action(route: HttpRoute, ctx: RouteContext): Json {
  if (route.redirect) {
    const r = route.redirect;
    return {
      redirect: {
        ...(r.uri !== undefined ? { path_redirect: r.uri } : {}),
        ...(r.authority !== undefined ? { host_redirect: r.authority } : {}),
        ...(r.scheme !== undefined ? { scheme_redirect: r.scheme } : {}),
        ...(r.port !== undefined ? { port_redirect: r.port } : {}),
        response_code: REDIRECT_CODES[r.redirectCode] ?? "MOVED_PERMANENTLY",
      },
    };
  }
  if (route.directResponse) {
    const d = route.directResponse;
    return { direct_response: { status: d.status, ...(d.body !== undefined ? { body: { inline_string: d.body } } : {}) } };
  }
  const target: Json =
    route.route.length === 1
      ? { cluster: destinationCluster(route.route[0].destination, ctx) }
      : {
          weighted_clusters: {
            clusters: route.route
              .filter((d) => (d.weight ?? 0) > 0)
              .map((d) => ({ name: destinationCluster(d.destination, ctx), weight: d.weight, ...headerFields(d.headers) })),
          },
        };
  // Upstream disables Envoy's 15 s default: no timeout unless the route gives one.
  target.timeout = seconds(route.timeoutMs ?? 0);
  if (route.rewrite?.uri !== undefined) target.prefix_rewrite = route.rewrite.uri;
  if (route.rewrite?.authority !== undefined) target.host_rewrite_literal = route.rewrite.authority;
  if (route.retries && route.retries.attempts > 0) {
    target.retry_policy = {
      retry_on:
        route.retries.retryOn.length > 0 ? route.retries.retryOn.join(",") : "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes",
      num_retries: route.retries.attempts,
      ...(route.retries.perTryTimeoutMs !== undefined ? { per_try_timeout: seconds(route.retries.perTryTimeoutMs) } : {}),
    };
  }
  if (route.mirror) {
    target.request_mirror_policies = [
      { cluster: destinationCluster(route.mirror, ctx), runtime_fraction: { default_value: { numerator: route.mirrorPercentage, denominator: "HUNDRED" } } },
    ];
  }
  return { route: target };
}

/** Envoy routes for one host and port; undefined when no VirtualService applies (the caller routes to the host). */
export function virtualServiceRoutes(host: string, ctx: RouteContext): Json[] | undefined {
  const services = virtualServicesFor(ctx.virtualServices, host, MESH_GATEWAY, ctx.clientNamespace);
  if (services.length === 0) return undefined;
  const routes: Json[] = [];
  for (const vs of services) {
    for (const [index, route] of vs.spec.http.entries()) {
      const entries = route.match.length === 0 ? [undefined] : route.match.filter((m) => applies(m, vs, ctx));
      const act = action(route, ctx);
      // A single destination's header operations apply to the whole route.
      const headers = route.route.length === 1 ? mergeHeaders(route.headers, route.route[0].headers) : route.headers;
      for (const m of entries)
        routes.push({ name: route.name ?? `${vs.namespace}/${vs.name}#${index}`, match: routeMatch(m), ...act, ...headerFields(headers) });
    }
  }
  return routes;
}
