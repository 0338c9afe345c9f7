import type { Resource } from "../config/catalog.ts";
import type { GatewayServer, HttpMatchRequest, HttpRoute, HttpRouteDestination, StringMatch } from "../config/resources/networking.ts";
import { MESH_GATEWAY } from "../config/resources/networking.ts";
import { hostMatches, hostSpecificity, hostsIntersect } from "./hosts.ts";
import { type Labels, labelsMatch, selectorSelects } from "./labels.ts";

/**
 * Which Gateway server and VirtualService route a request takes, as
 * upstream's: VirtualServices bound to the request's gateway (`mesh` for
 * sidecars; `name` or `ns/name` for Gateways) whose hosts cover the host;
 * the first http route whose match (any of its entries; no entries: any
 * request) fits; a weighted choice among its destinations. Randomness is
 * injected so callers decide (tests seed it, the sidecar uses Math.random).
 */

type VirtualService = Resource<"VirtualService">;
type Gateway = Resource<"Gateway">;

/** What a route decision looks at. Header names lower case; `path` with its query string. */
export interface RequestFacts {
  readonly method: string;
  readonly path: string;
  /** The Host/authority as sent. */
  readonly authority: string;
  /** The FQDN (or external host) the authority names. */
  readonly host: string;
  readonly port: number;
  readonly scheme?: string;
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly sourceLabels: Labels;
  readonly sourceNamespace: string;
  /** `mesh` for a sidecar, `ns/name` of the Gateway for a gateway. */
  readonly gateway: string;
}

export interface RouteChoice {
  /** `ns/name` of the VirtualService. */
  readonly virtualService: string;
  readonly routeIndex: number;
  readonly route: HttpRoute;
  /** The chosen destination (undefined for redirect and directResponse routes). */
  readonly destination?: HttpRouteDestination;
  readonly destinationIndex?: number;
}

/** `ns/name` a gateway reference names, from a resource in `namespace`. */
export function gatewayKey(ref: string, namespace: string): string {
  if (ref === MESH_GATEWAY) return MESH_GATEWAY;
  return ref.includes("/") ? ref : `${namespace}/${ref}`;
}

/** The gateways a VirtualService is bound to (none given: `mesh`). */
export function boundGateways(vs: VirtualService): string[] {
  return vs.spec.gateways.length === 0 ? [MESH_GATEWAY] : vs.spec.gateways.map((g) => gatewayKey(g, vs.namespace));
}

/** Whether a VirtualService's `exportTo` makes it visible in a namespace. */
function visible(vs: VirtualService, namespace: string): boolean {
  const to = vs.spec.exportTo;
  return to.length === 0 || to.includes("*") || to.includes(namespace) || (to.includes(".") && vs.namespace === namespace);
}

/** A VirtualService's hosts resolved in its namespace and the mesh's DNS domain (`reviews` → FQDN; done as the resource is decoded). */
export function virtualServiceHosts(vs: VirtualService): readonly string[] {
  return vs.spec.fqdns;
}

/**
 * The VirtualServices for a host on a gateway, most specific host first
 * (exact beats wildcard; among equals, input order). For `mesh`, only those
 * visible in the client namespace.
 */
export function virtualServicesFor(services: readonly VirtualService[], host: string, gateway: string, clientNamespace: string): VirtualService[] {
  const scored: Array<[number, number, VirtualService]> = [];
  services.forEach((vs, i) => {
    if (!boundGateways(vs).includes(gateway)) return;
    if (gateway === MESH_GATEWAY && !visible(vs, clientNamespace)) return;
    const score = Math.max(...virtualServiceHosts(vs).map((h) => hostSpecificity(h, host)));
    if (score >= 0) scored.push([score, i, vs]);
  });
  return scored.sort((a, b) => b[0] - a[0] || a[1] - b[1]).map(([, , vs]) => vs);
}

/**
 * Whether `value` fits the match. `ignoreCase` (ignoreUriCase) folds exact and
 * prefix only: as Envoy's `case_sensitive`, it is ignored for a regex. The
 * regex was compiled at load on the linear-time engine.
 */
export function stringMatches(m: StringMatch, value: string | undefined, ignoreCase = false): boolean {
  if (value === undefined) return false;
  const v = ignoreCase ? value.toLowerCase() : value;
  if ("exact" in m) return v === (ignoreCase ? m.exact.toLowerCase() : m.exact);
  if ("prefix" in m) return v.startsWith(ignoreCase ? m.prefix.toLowerCase() : m.prefix);
  return m.matcher.matches(value);
}

function header(facts: RequestFacts, name: string): string | undefined {
  return facts.headers.find(([k]) => k === name)?.[1];
}

function query(path: string): URLSearchParams {
  const q = path.indexOf("?");
  return new URLSearchParams(q < 0 ? "" : path.slice(q + 1));
}

/** Whether one `match` entry fits the request (every condition it gives). */
export function requestMatches(m: HttpMatchRequest, facts: RequestFacts, vsNamespace: string): boolean {
  const pathOnly = facts.path.split("?")[0];
  if (m.uri && !stringMatches(m.uri, pathOnly, m.ignoreUriCase)) return false;
  if (m.method && !stringMatches(m.method, facts.method)) return false;
  if (m.scheme && !stringMatches(m.scheme, facts.scheme ?? "http")) return false;
  if (m.authority && !stringMatches(m.authority, facts.authority)) return false;
  for (const [name, sm] of Object.entries(m.headers)) if (!stringMatches(sm, header(facts, name))) return false;
  for (const [name, sm] of Object.entries(m.withoutHeaders)) if (stringMatches(sm, header(facts, name))) return false;
  if (Object.keys(m.queryParams).length > 0) {
    const params = query(facts.path);
    for (const [name, sm] of Object.entries(m.queryParams)) if (!stringMatches(sm, params.get(name) ?? undefined)) return false;
  }
  if (m.port !== undefined && m.port !== facts.port) return false;
  if (!labelsMatch(m.sourceLabels, facts.sourceLabels)) return false;
  if (m.sourceNamespace !== undefined && m.sourceNamespace !== facts.sourceNamespace) return false;
  if (m.gateways.length > 0 && !m.gateways.map((g) => gatewayKey(g, vsNamespace)).includes(facts.gateway)) return false;
  return true;
}

/** The first route of a VirtualService that matches (routes without `match` match everything). */
export function matchingRoute(vs: VirtualService, facts: RequestFacts): { index: number; route: HttpRoute } | undefined {
  for (const [index, route] of vs.spec.http.entries()) {
    if (route.match.length === 0 || route.match.some((m) => requestMatches(m, facts, vs.namespace))) return { index, route };
  }
  return undefined;
}

/**
 * A weighted choice: `random` in [0, 1). Weights absent on a single
 * destination mean 100; destinations with weight 0 are never chosen.
 */
export function chooseDestination(route: HttpRoute, random: () => number): number | undefined {
  if (route.route.length === 0) return undefined;
  if (route.route.length === 1) return 0;
  const weights = route.route.map((d) => d.weight ?? 0);
  const total = weights.reduce((a, b) => a + b, 0);
  if (total === 0) return 0;
  let point = random() * total;
  for (const [i, w] of weights.entries()) {
    if (point < w) return i;
    point -= w;
  }
  let last = 0;
  for (const [i, w] of weights.entries()) if (w > 0) last = i;
  return last;
}

/**
 * The route a request takes: the first VirtualService for its host on its
 * gateway that has a matching route. Undefined: no VirtualService applies
 * (a sidecar then sends to the host itself; a gateway answers 404).
 * `hasVirtualService` tells the two cases apart when a VirtualService covers
 * the host but none of its routes matches (upstream: 404).
 */
export function routeRequest(
  services: readonly VirtualService[],
  facts: RequestFacts,
  random: () => number,
): { choice?: RouteChoice; hasVirtualService: boolean } {
  const candidates = virtualServicesFor(services, facts.host, facts.gateway, facts.sourceNamespace);
  // Upstream merges the VirtualServices of one host; the most specific host's routes come first.
  for (const vs of candidates) {
    const hit = matchingRoute(vs, facts);
    if (!hit) continue;
    const destinationIndex = chooseDestination(hit.route, random);
    return {
      hasVirtualService: true,
      choice: Object.freeze({
        virtualService: `${vs.namespace}/${vs.name}`,
        routeIndex: hit.index,
        route: hit.route,
        destination: destinationIndex === undefined ? undefined : hit.route.route[destinationIndex],
        destinationIndex,
      }),
    };
  }
  return { hasVirtualService: candidates.length > 0 };
}

/** Whether a fault fires: `percentage` of requests (0–100), by the injected randomness. */
export function fires(percentage: number, random: () => number): boolean {
  return percentage >= 100 || random() * 100 < percentage;
}

// ---- gateways

/** A Gateway server host `[ns/]host` split; `.` = the Gateway's own namespace. */
export function serverHost(entry: string, gatewayNamespace: string): { namespace: string; host: string } {
  const slash = entry.indexOf("/");
  if (slash < 0) return { namespace: "*", host: entry };
  const ns = entry.slice(0, slash);
  return { namespace: ns === "." ? gatewayNamespace : ns, host: entry.slice(slash + 1) };
}

export interface GatewayServerMatch {
  readonly gateway: Gateway;
  readonly server: GatewayServer;
}

/**
 * The Gateway servers a gateway workload serves on one of its container
 * ports for a host: Gateways (any namespace) whose selector picks the
 * workload, with a server whose port — a port of the gateway's Service,
 * translated to the container port (`toContainerPort`) — is this one and
 * whose hosts cover the host.
 */
export function gatewayServersFor(
  gateways: readonly Gateway[],
  workloadLabels: Labels,
  containerPort: number,
  host: string,
  toContainerPort: (servicePort: number) => number | undefined,
): GatewayServerMatch[] {
  return gatewayServersOnPort(gateways, workloadLabels, containerPort, toContainerPort).filter(({ gateway, server }) =>
    server.hosts.some((h) => hostMatches(serverHost(h, gateway.namespace).host, host)),
  );
}

/** Every server of the Gateways selecting the workload whose port is this container port (whatever the host). */
export function gatewayServersOnPort(
  gateways: readonly Gateway[],
  workloadLabels: Labels,
  containerPort: number,
  toContainerPort: (servicePort: number) => number | undefined,
): GatewayServerMatch[] {
  const out: GatewayServerMatch[] = [];
  for (const g of gateways) {
    if (!selectorSelects(g.spec.selector, workloadLabels)) continue;
    for (const server of g.spec.servers) if ((toContainerPort(server.port.number) ?? server.port.number) === containerPort) out.push({ gateway: g, server });
  }
  return out;
}

/** Whether a VirtualService may attach to a Gateway server: its namespace is allowed by the server host's `ns/` and a host intersects. */
export function serverAdmits(server: GatewayServer, gatewayNamespace: string, vs: VirtualService): boolean {
  return server.hosts.some((entry) => {
    const { namespace, host } = serverHost(entry, gatewayNamespace);
    if (namespace !== "*" && namespace !== vs.namespace) return false;
    return virtualServiceHosts(vs).some((h) => hostsIntersect(h, host));
  });
}

/**
 * The Gateways a gateway workload is configured by: those whose selector
 * picks its labels, of any namespace, or of its own only when
 * `ownNamespaceOnly` (upstream's PILOT_SCOPE_GATEWAY_TO_NAMESPACE), as
 * `ns/name` keys VirtualServices bind to.
 */
export function gatewaysSelecting(
  gateways: readonly Gateway[],
  workload: { readonly namespace: string; readonly labels: Labels },
  ownNamespaceOnly: boolean,
): string[] {
  return gateways
    .filter((g) => (!ownNamespaceOnly || g.namespace === workload.namespace) && selectorSelects(g.spec.selector, workload.labels))
    .map((g) => `${g.namespace}/${g.name}`);
}

/** The hosts (FQDNs) the routes and mirrors of VirtualServices bound to any of these gateways send to. */
export function gatewayDestinationHosts(services: readonly VirtualService[], gatewayKeys: readonly string[]): Set<string> {
  const keys = new Set(gatewayKeys);
  const hosts = new Set<string>();
  for (const vs of services) {
    if (!boundGateways(vs).some((g) => keys.has(g))) continue;
    for (const route of vs.spec.http) {
      for (const d of route.route) hosts.add(d.destination.fqdn);
      if (route.mirror) hosts.add(route.mirror.fqdn);
    }
  }
  return hosts;
}
