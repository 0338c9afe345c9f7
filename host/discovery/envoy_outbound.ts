import { isIP } from "node:net";
import { envoyType, packAny, packJson } from "../wire/envoy_protos.ts";
import { address } from "./envoy_clusters.ts";
import { redisProxy, tcpProxy, thriftProxy } from "./envoy_network_filters.ts";
import { HTTP_INSPECTOR, OUTBOUND_DETECTION_TIMEOUT_MS, isUnnamedProtocol, plaintextHttpAlpn, sniffingListenerFields } from "./envoy_sniffing.ts";
import { clusterName } from "../mesh/cluster_names.ts";
import type { XdsService } from "./proxyless.ts";

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
 *   `BlackHoleCluster` (`podLoopGuard`). Inbound traffic for a port no
 *   inbound chain serves would otherwise come back out through these
 *   listeners to the pod's address, and loop.
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
function cidr(a: string): Range | undefined {
  const [ip, len] = a.split("/");
  const family = isIP(ip);
  if (family === 0) return undefined;
  const max = family === 4 ? 32 : 128;
  const prefix = len === undefined ? max : Number(len);
  return Number.isInteger(prefix) && prefix >= 0 && prefix <= max ? { address_prefix: ip, prefix_len: prefix } : undefined;
}

function ranges(addresses: readonly string[]): Range[] {
  return addresses.flatMap((a) => {
    const range = cidr(a);
    return range ? [range] : [];
  });
}

const LISTENER = "envoy.config.listener.v3.Listener";

/**
 * The encoded first filter chain of listener `name` for a pod: connections
 * to its own addresses go to BlackHoleCluster. Undefined when the guard is
 * off or no address is known. Encoded as a Listener holding only that chain
 * (field 3), so it can be spliced between an encoded listener's name and
 * address (fields 1, 2) and the rest (`spliceFirstChain`): every pod differs
 * by this chain only, and the rest is encoded once per version of the mesh.
 */
export function podLoopGuard(name: string, podAddresses: readonly string[], serving: OutboundServing): Uint8Array | undefined {
  const own = serving.restrictPodTrafficLoop ? ranges(podAddresses) : [];
  if (own.length === 0) return undefined;
  const blackhole = packAny("envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy", { stat_prefix: BLACKHOLE, cluster: BLACKHOLE });
  const type = envoyType(LISTENER);
  // protobufjs's object form (wrappers as {value}, an Any as type_url and bytes): a few encodes per pod, no JSON walk.
  const chain = {
    name: `${name}-blackhole`,
    filter_chain_match: { prefix_ranges: own.map((r) => ({ address_prefix: r.address_prefix, prefix_len: { value: r.prefix_len } })) },
    filters: [{ name: "envoy.filters.network.tcp_proxy", typed_config: blackhole }],
  };
  return type.encode(type.fromObject({ filter_chains: [chain] })).finish();
}

/** An encoded listener split after its name and address, so a first filter chain can go between. */
export interface SplitListener {
  readonly name: string;
  readonly head: Uint8Array;
  readonly tail: Uint8Array;
}

export function splitListener(json: Json): SplitListener {
  const { name, address: at, ...rest } = json;
  return { name: name as string, head: packJson(LISTENER, { name, address: at }).value, tail: packJson(LISTENER, rest).value };
}

/**
 * The listener with `first` (an encoded Listener holding one filter chain) as
 * its first filter chain: protobuf keeps a repeated field's elements in the
 * order they come, and fields 1, 2 | 3 | 3, 4… stay in canonical order.
 */
export function spliceFirstChain(listener: SplitListener, first: Uint8Array | undefined): { type_url: string; value: Uint8Array } {
  const parts = [listener.head, ...(first ? [first] : []), listener.tail];
  // Its own buffer, exactly as long: kept per pod, a slice of Node's shared 8 KiB pool would keep the whole pool block alive.
  const value = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    value.set(p, at);
    at += p.length;
  }
  return { type_url: `type.googleapis.com/${LISTENER}`, value };
}

type Range = { address_prefix: string; prefix_len: number };

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
  const perAddress = withAddress.map((s) => ({
    name: `${clusterName(s.service.host, port)}-tcp`,
    filter_chain_match: { prefix_ranges: ranges(s.addresses) },
    filters: networkFilters(s),
  }));
  // Upstream binds an address-less service on the wildcard; several of them on one port cannot be told apart.
  const rest = addressless.length === 1 ? networkFilters(addressless[0]) : [tcpProxy(PASSTHROUGH, PASSTHROUGH)];
  return [...perAddress, { name: `0.0.0.0_${port}-tcp`, filters: rest }];
}

/** The HTTP chains of a sniffed port: one per address a TCP chain matches (Envoy matches destination addresses first), then the wildcard. */
function sniffedHttpChains(port: number, services: readonly PortService[], hcm: Json, acceptHttp10: boolean): Json[] {
  const alpn = plaintextHttpAlpn(acceptHttp10);
  const perAddress = services
    .filter((s) => s.kind !== "http" && ranges(s.addresses).length > 0)
    .map((s) => ({
      name: `${clusterName(s.service.host, port)}-http`,
      filter_chain_match: { prefix_ranges: ranges(s.addresses), application_protocols: alpn },
      filters: [hcm],
    }));
  return [...perAddress, { name: `0.0.0.0_${port}-http`, filter_chain_match: { application_protocols: alpn }, filters: [hcm] }];
}

/**
 * The listener of one outbound port, or undefined when none of its services
 * gets one. `httpFilters`: the HTTP filters of its connection managers.
 */
export function outboundPortListener(
  port: number,
  services: readonly PortService[],
  httpFilters: readonly Json[],
  ads: Json,
  serving: OutboundServing,
): Json | undefined {
  if (services.length === 0) return undefined;
  const name = `0.0.0.0_${port}`;
  const common = { name, address: address("0.0.0.0", port), bind_to_port: false, traffic_direction: "OUTBOUND" };
  const hcm = outboundHcm(port, httpFilters, ads, serving);
  if (services.some((s) => s.kind === "sniffed")) {
    return {
      ...common,
      listener_filters: [HTTP_INSPECTOR],
      ...sniffingListenerFields(OUTBOUND_DETECTION_TIMEOUT_MS),
      filter_chains: [...sniffedHttpChains(port, services, hcm, serving.acceptHttp10), ...tcpChains(port, services)],
    };
  }
  // A named HTTP service keeps the port for HTTP (TCP services beside it are counted as conflicts, conflicts.ts).
  if (services.some((s) => s.kind === "http")) return { ...common, filter_chains: [{ filters: [hcm] }] };
  return { ...common, filter_chains: [...tcpChains(port, services)] };
}

export function virtualOutbound(): Json {
  return {
    name: "virtualOutbound",
    address: address("0.0.0.0", OUTBOUND_PORT),
    use_original_dst: true,
    traffic_direction: "OUTBOUND",
    filter_chains: [{ name: "virtualOutbound-catchall-tcp", filters: [tcpProxy(PASSTHROUGH, PASSTHROUGH)] }],
  };
}
