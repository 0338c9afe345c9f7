import { isIP } from "node:net";
import { address } from "./envoy_clusters.ts";
import { redisProxy, tcpProxy, thriftProxy } from "./envoy_network_filters.ts";
import { HTTP_INSPECTOR, OUTBOUND_DETECTION_TIMEOUT_MS, isUnnamedProtocol, plaintextHttpAlpn, sniffingListenerFields } from "./envoy_sniffing.ts";
import { clusterName, type XdsService } from "./proxyless.ts";

/**
 * Envoy's outbound listeners, laid out as upstream's sidecars get them:
 *
 * - `virtualOutbound` (0.0.0.0:15001, `use_original_dst`) hands each
 *   connection to the listener of its port, else to `PassthroughCluster`.
 * - `0.0.0.0_<port>` (not bound) per service port that gets a listener, by
 *   the kinds of the services on it (`outboundKind`):
 *   - a sniffed service among them: the HTTP inspector, and per service
 *     address an HTTP chain (application protocols `http/1.1`, `h2c`) and a
 *     TCP chain to the service's cluster, then the same pair for any other
 *     address (TCP: the one address-less service's cluster, else through);
 *   - else a named HTTP service among them: one HttpConnectionManager chain,
 *     routes by RDS `<port>` over ADS;
 *   - else TCP services only (Redis, Thrift with their filters on; unnamed
 *     ports with sniffing off): a chain per service address with the
 *     service's network filters, then one for any other address.
 *   Other ports (tcp, tls, mongo, …) get no listener: their traffic goes
 *   through `virtualOutbound`.
 * - DISCO_RESTRICT_POD_UP_TRAFFIC_LOOP (true): every one of them starts with
 *   a chain that sends connections to the pod's own address to
 *   `BlackHoleCluster`. Inbound traffic for a port no inbound chain serves
 *   would otherwise come back out through these listeners to the pod's
 *   address, and loop.
 *
 * Pure.
 */

type Json = Record<string, unknown>;

export const OUTBOUND_PORT = 15001;
export const PASSTHROUGH = "PassthroughCluster";
export const BLACKHOLE = "BlackHoleCluster";
const HCM_TYPE = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";
const HTTP_PROTOCOLS: ReadonlySet<string> = new Set(["http", "http2", "grpc", "grpc-web"]);

/** What the outbound side is served for one service port; undefined: no listener (through virtualOutbound). */
export type OutboundKind = "http" | "sniffed" | "tcp" | "redis" | "thrift";

export interface OutboundServing {
  /** DISCO_HTTP10 (false): the HTTP listeners accept HTTP/1.0. */
  readonly acceptHttp10: boolean;
  /** DISCO_ENABLE_PROTOCOL_SNIFFING_FOR_OUTBOUND (true): unnamed ports are sniffed; false: served as TCP. */
  readonly sniffOutbound: boolean;
  /** DISCO_SIDECAR_USE_REMOTE_ADDRESS (false): the HTTP connection managers set `use_remote_address`. */
  readonly useRemoteAddress: boolean;
  /** DISCO_RESTRICT_POD_UP_TRAFFIC_LOOP (true): connections to the pod's own addresses are dropped. */
  readonly restrictPodTrafficLoop: boolean;
  /** DISCO_ENABLE_KVSTORE_FILTER (false): `redis` ports get redis_proxy. */
  readonly kvstoreFilter: boolean;
  /** DISCO_ENABLE_RPC_FILTER (false): `thrift` ports get thrift_proxy. */
  readonly rpcFilter: boolean;
}

export function outboundKind(protocol: string | undefined, serving: OutboundServing): OutboundKind | undefined {
  if (protocol !== undefined && HTTP_PROTOCOLS.has(protocol)) return "http";
  if (isUnnamedProtocol(protocol)) return serving.sniffOutbound ? "sniffed" : "tcp";
  if (protocol === "redis" && serving.kvstoreFilter) return "redis";
  if (protocol === "thrift" && serving.rpcFilter) return "thrift";
  return undefined;
}

/** Whether the kind is routed by HTTP route configurations (the `<port>` RouteConfiguration names it). */
export const routedAsHttp = (kind: OutboundKind | undefined) => kind === "http" || kind === "sniffed";

/** A service of an outbound port: its kind and the addresses clients call it on. */
export interface PortService {
  readonly service: XdsService;
  readonly kind: OutboundKind;
  readonly addresses: readonly string[];
}

/** Envoy's CIDR range for an address (`10.0.0.1`, `10.0.0.0/24`, `fd00::1`); undefined when it is not one. */
function cidr(a: string): Json | undefined {
  const [ip, len] = a.split("/");
  const family = isIP(ip);
  if (family === 0) return undefined;
  const max = family === 4 ? 32 : 128;
  const prefix = len === undefined ? max : Number(len);
  return Number.isInteger(prefix) && prefix >= 0 && prefix <= max ? { address_prefix: ip, prefix_len: prefix } : undefined;
}

function ranges(addresses: readonly string[]): Json[] {
  return addresses.flatMap((a) => {
    const range = cidr(a);
    return range ? [range] : [];
  });
}

/** The chain that drops connections to the pod's own addresses (none when the feature is off or no address is known). */
function loopChain(name: string, podAddresses: readonly string[], serving: OutboundServing): Json[] {
  const own = serving.restrictPodTrafficLoop ? ranges(podAddresses) : [];
  return own.length === 0 ? [] : [{ name: `${name}-blackhole`, filter_chain_match: { prefix_ranges: own }, filters: [tcpProxy(BLACKHOLE, BLACKHOLE)] }];
}

function outboundHcm(port: number, httpFilters: readonly Json[], ads: Json, serving: OutboundServing): Json {
  return {
    name: "envoy.filters.network.http_connection_manager",
    typed_config: {
      "@type": HCM_TYPE,
      stat_prefix: `outbound_0.0.0.0_${port}`,
      rds: { route_config_name: String(port), config_source: ads },
      http_filters: httpFilters,
      ...(serving.acceptHttp10 ? { http_protocol_options: { accept_http_10: true } } : {}),
      // Upstream's reason: the caller is the local app, so headers it sets (x-envoy-upstream-rq-timeout-ms, …) are trusted.
      ...(serving.useRemoteAddress ? { use_remote_address: true } : {}),
    },
  };
}

function networkFilters(s: PortService): Json[] {
  const cluster = clusterName(s.service.host, s.service.port);
  if (s.kind === "redis") return [redisProxy(cluster)];
  if (s.kind === "thrift") return [thriftProxy(cluster)];
  return [tcpProxy(cluster, cluster)];
}

/** TCP chains: one per service with addresses, then one for any other address. */
function tcpChains(port: number, services: readonly PortService[]): Json[] {
  const routed = services.filter((s) => s.kind !== "http");
  const withAddress = routed.filter((s) => ranges(s.addresses).length > 0);
  const addressless = routed.filter((s) => ranges(s.addresses).length === 0);
  const perAddress = withAddress.map((s) => ({ name: `${clusterName(s.service.host, port)}-tcp`, filter_chain_match: { prefix_ranges: ranges(s.addresses) }, filters: networkFilters(s) }));
  // Upstream binds an address-less service on the wildcard; several of them on one port cannot be told apart.
  const rest = addressless.length === 1 ? networkFilters(addressless[0]) : [tcpProxy(PASSTHROUGH, PASSTHROUGH)];
  return [...perAddress, { name: `0.0.0.0_${port}-tcp`, filters: rest }];
}

/** The HTTP chains of a sniffed port: one per address a TCP chain matches (Envoy matches destination addresses first), then the wildcard. */
function sniffedHttpChains(port: number, services: readonly PortService[], hcm: Json, acceptHttp10: boolean): Json[] {
  const alpn = plaintextHttpAlpn(acceptHttp10);
  const perAddress = services
    .filter((s) => s.kind !== "http" && ranges(s.addresses).length > 0)
    .map((s) => ({ name: `${clusterName(s.service.host, port)}-http`, filter_chain_match: { prefix_ranges: ranges(s.addresses), application_protocols: alpn }, filters: [hcm] }));
  return [...perAddress, { name: `0.0.0.0_${port}-http`, filter_chain_match: { application_protocols: alpn }, filters: [hcm] }];
}

/**
 * The listener of one outbound port, or undefined when none of its services
 * gets one. `httpFilters`: the HTTP filters of its connection managers.
 */
export function outboundPortListener(port: number, services: readonly PortService[], podAddresses: readonly string[], httpFilters: readonly Json[], ads: Json, serving: OutboundServing): Json | undefined {
  if (services.length === 0) return undefined;
  const name = `0.0.0.0_${port}`;
  const common = { name, address: address("0.0.0.0", port), bind_to_port: false, traffic_direction: "OUTBOUND" };
  const loop = loopChain(name, podAddresses, serving);
  const hcm = outboundHcm(port, httpFilters, ads, serving);
  if (services.some((s) => s.kind === "sniffed")) {
    return {
      ...common,
      listener_filters: [HTTP_INSPECTOR],
      ...sniffingListenerFields(OUTBOUND_DETECTION_TIMEOUT_MS),
      filter_chains: [...loop, ...sniffedHttpChains(port, services, hcm, serving.acceptHttp10), ...tcpChains(port, services)],
    };
  }
  // A named HTTP service keeps the port for HTTP (TCP services beside it are counted as conflicts, conflicts.ts).
  if (services.some((s) => s.kind === "http")) return { ...common, filter_chains: [...loop, { filters: [hcm] }] };
  return { ...common, filter_chains: [...loop, ...tcpChains(port, services)] };
}

export function virtualOutbound(podAddresses: readonly string[], serving: OutboundServing): Json {
  return {
    name: "virtualOutbound",
    address: address("0.0.0.0", OUTBOUND_PORT),
    use_original_dst: true,
    traffic_direction: "OUTBOUND",
    filter_chains: [...loopChain("virtualOutbound", podAddresses, serving), { name: "virtualOutbound-catchall-tcp", filters: [tcpProxy(PASSTHROUGH, PASSTHROUGH)] }],
  };
}
