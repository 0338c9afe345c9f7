/**
 * The network filters of TCP filter chains, as upstream's sidecars get them
 * (proto3 JSON of Envoy's v3 API):
 *
 * - `tcp_proxy` to one cluster;
 * - `redis_proxy` (DISCO_ENABLE_KVSTORE_FILTER, upstream's
 *   PILOT_ENABLE_REDIS_FILTER): every key to the service's cluster, 5 s per
 *   operation, latencies in microseconds, instead of `tcp_proxy`;
 * - `thrift_proxy` (DISCO_ENABLE_RPC_FILTER, upstream's
 *   PILOT_ENABLE_THRIFT_FILTER): transport and protocol detected, every method
 *   to the service's cluster through the thrift router, instead of
 *   `tcp_proxy`.
 *
 * Pure.
 */

type Json = Record<string, unknown>;

export function tcpProxy(statPrefix: string, cluster: string): Json {
  return {
    name: "envoy.filters.network.tcp_proxy",
    typed_config: { "@type": "type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy", stat_prefix: statPrefix, cluster },
  };
}

/** Upstream's operation timeout of the Redis proxy. */
const REDIS_OP_TIMEOUT = "5s";

export function redisProxy(cluster: string): Json {
  return {
    name: "envoy.filters.network.redis_proxy",
    typed_config: {
      "@type": "type.googleapis.com/envoy.extensions.filters.network.redis_proxy.v3.RedisProxy",
      stat_prefix: cluster,
      latency_in_micros: true,
      settings: { op_timeout: REDIS_OP_TIMEOUT },
      prefix_routes: { catch_all_route: { cluster } },
    },
  };
}

export function thriftProxy(cluster: string): Json {
  return {
    name: "envoy.filters.network.thrift_proxy",
    typed_config: {
      "@type": "type.googleapis.com/envoy.extensions.filters.network.thrift_proxy.v3.ThriftProxy",
      stat_prefix: cluster,
      transport: "AUTO_TRANSPORT",
      protocol: "AUTO_PROTOCOL",
      // An empty method name matches every method.
      route_config: { name: cluster, routes: [{ match: { method_name: "" }, route: { cluster } }] },
      thrift_filters: [
        {
          name: "envoy.filters.thrift.router",
          typed_config: { "@type": "type.googleapis.com/envoy.extensions.filters.network.thrift_proxy.router.v3.Router" },
        },
      ],
    },
  };
}
