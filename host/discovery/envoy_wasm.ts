/**
 * The filter as Envoy loads it: `envoy.filters.http.wasm` with the module and
 * the hub client configuration as its plugin configuration, and the
 * `hub_server` cluster the configuration's hub calls go to. One copy for the
 * deployable artifacts (build/deploy_artifacts.ts: static bootstrap,
 * EnvoyFilter) and the control plane (listeners and ECDS served to Envoy).
 * Proto3 JSON form (`@type`, durations as "1s"), encoded with
 * host/wire/proto_json.ts where it is served.
 */

import { clusterName } from "../mesh/cluster_names.ts";
import { DEFAULT_DOMAIN, serviceFqdn } from "../mesh/hosts.ts";
import { DEFAULT_ROOT_NAMESPACE } from "../config/mesh_config.ts";

/** The plugin's name, root id and VM id everywhere (Istio: `pluginName` = root id); also the ECDS resource name. */
export const PLUGIN_NAME = "mesh.hub_client";
/** Where the bootstrap, the EnvoyFilter and the served listeners expect the module on the proxy's file system. */
export const MODULE_PATH = "/etc/mesh/filter.wasm";
/** The hub as a mesh of DNS domain `domain` names it (spec 2: hubs listens on gRPC port 9091). */
export function hubHost(domain: string): string {
  return serviceFqdn("hubs", DEFAULT_ROOT_NAMESPACE, domain);
}
/** The hub's host in the default domain: the static artifacts (bootstrap, EnvoyFilter) are written for it. */
export const HUB_HOST = hubHost(DEFAULT_DOMAIN);
export const HUB_PORT = 9091;
/**
 * Under a WasmPlugin the hub is reached through the cluster the mesh already
 * has for its service (upstream's `outbound|PORT||HOST` naming), since a
 * WasmPlugin cannot add clusters.
 */
export const HUB_OUTBOUND_CLUSTER = clusterName(HUB_HOST, HUB_PORT);
export const HUB_CLUSTER = "hub_server";
export const WASM_TYPE = "type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm";

/**
 * Where Envoy gets the module: a file on the proxy, or fetched over HTTP(S)
 * through `cluster` and checked against `sha256` (hex) before it is loaded.
 */
export type ModuleSource = { readonly local: string } | { readonly remote: { readonly uri: string; readonly sha256: string; readonly cluster: string } };

export const LOCAL_MODULE: ModuleSource = Object.freeze({ local: MODULE_PATH });
/** The cluster Envoy fetches a remote module through (served beside it). */
export const MODULE_CLUSTER = "mesh_wasm_module";

/**
 * Where the module is, as a user writes it: an `http(s)://` URL (fetched by
 * Envoy and checked against `sha256()`, the hex digest of the module's bytes),
 * else a path on the proxy (`file://` accepted).
 */
export function moduleSource(location: string, sha256: () => string): ModuleSource {
  if (/^https?:\/\//i.test(location)) return { remote: { uri: location, sha256: sha256(), cluster: MODULE_CLUSTER } };
  return { local: location.replace(/^file:\/\//i, "") };
}

function code(source: ModuleSource) {
  if ("local" in source) return { local: { filename: source.local } };
  const { uri, sha256, cluster } = source.remote;
  return { remote: { http_uri: { uri, cluster, timeout: "10s" }, sha256, retry_policy: { num_retries: 5 } } };
}

/** Envoy's PluginConfig for the module. */
export function envoyPluginConfig(configJson: string, source: ModuleSource = LOCAL_MODULE) {
  return {
    name: PLUGIN_NAME,
    root_id: PLUGIN_NAME,
    vm_config: {
      vm_id: PLUGIN_NAME,
      runtime: "envoy.wasm.runtime.v8",
      code: code(source),
    },
    // Istio passes a WasmPlugin's pluginConfig the same way: JSON text in a StringValue.
    configuration: { "@type": "type.googleapis.com/google.protobuf.StringValue", value: configJson },
    // A trapped module answers 503 (wasm_fail_stream); the hub fail policy is the module's own.
    fail_open: false,
  };
}

/** The `envoy.extensions.filters.http.wasm.v3.Wasm` typed config (an HTTP filter's, or an ECDS resource's). */
export function wasmFilterConfig(configJson: string, source: ModuleSource = LOCAL_MODULE) {
  return { "@type": WASM_TYPE, config: envoyPluginConfig(configJson, source) };
}

/** The filter inline in an HttpConnectionManager's http_filters. */
export function httpWasmFilter(configJson: string, source: ModuleSource = LOCAL_MODULE) {
  return { name: "envoy.filters.http.wasm", typed_config: wasmFilterConfig(configJson, source) };
}

/** A cluster's typed_extension_protocol_options for HTTP/2 upstreams (gRPC). */
export function http2ProtocolOptions() {
  return {
    "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
      "@type": "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
      explicit_http_config: { http2_protocol_options: {} },
    },
  };
}

/** The `hub_server` cluster: gRPC (HTTP/2) to the hub service, resolved by DNS. */
export function hubCluster(name = HUB_CLUSTER, host = HUB_HOST, port = HUB_PORT) {
  return {
    name,
    type: "STRICT_DNS",
    connect_timeout: "1s",
    lb_policy: "ROUND_ROBIN",
    typed_extension_protocol_options: http2ProtocolOptions(),
    load_assignment: {
      cluster_name: name,
      endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: host, port_value: port } } } }] }],
    },
  };
}
