// What a platform engineer deploys the filter with, generated from the built
// module and the embedded default configuration (host/demo/petstore.yaml plus
// the TCP client below). docs/deploy.md explains each file.
//
//   build/deploy/envoy-bootstrap.yaml  Envoy v3 bootstrap: the module in envoy.filters.http.wasm
//                                      (and envoy.filters.network.wasm), the hub_server cluster
//   build/deploy/wasm-plugin.yaml      WasmPlugins (extensions.mesh.io/v1alpha1, HTTP and NETWORK) pulling the OCI image
//   build/deploy/envoy-filter.yaml     the EnvoyFilter (networking.mesh.io/v1alpha3) alternative
//   build/deploy/plugin-config.json    the plugin configuration all three carry
//   build/deploy/oci/                  OCI image layout of the module (Wasm image, "oci" variant)
//   build/deploy/DIGESTS               sha256 of the module and the image's manifest digest
//
// Run by build/build.mjs after the module is built: node --import tsx build/deploy_artifacts.ts
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { filterChecks } from "../host/config/catalog.ts";
import { parseDocuments } from "../host/config/documents.ts";
import { decodeHubClientDocuments, pluginConfig } from "../host/config/hub_client_bundle.ts";
import { HUB_OUTBOUND_CLUSTER, MODULE_PATH, PLUGIN_NAME, envoyPluginConfig, httpWasmFilter, hubCluster } from "../host/discovery/envoy_wasm.ts";
import { FilterModule } from "../host/wasm/filter_module.ts";

export { PLUGIN_NAME, MODULE_PATH };

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
export const DEPLOY_DIR = join(ROOT, "build", "deploy");
export const OCI_DIR = join(DEPLOY_DIR, "oci");

/** The image reference the WasmPlugin pulls; push build/deploy/oci there (docs/deploy.md). */
export const IMAGE_REPOSITORY = "localhost:5000/mesh/filter";

// Wasm image specification, "oci" variant (the one Istio and Envoy tooling pull):
// a config blob of its own media type and exactly one layer, the raw module.
export const MEDIA_TYPES = {
  manifest: "application/vnd.oci.image.manifest.v1+json",
  index: "application/vnd.oci.image.index.v1+json",
  config: "application/vnd.module.wasm.config.v1+json",
  layer: "application/vnd.module.wasm.content.layer.v1+wasm",
} as const;

/** The TCP mode of the bootstrap's TCP listener rides in the same plugin configuration. */
const TCP_CLIENT_CONFIG = `apiVersion: config.mesh.io/v1alpha2
kind: TcpClientConfig
metadata: {name: tcp, namespace: demo}
spec:
  hubAttributes: {attributes: {destination.service.host: {stringValue: petstore.demo.svc.cluster.local}}}
  reportInterval: 10s
  connectionQuotaSpec:
    rules: [{quotas: [{quota: connections, charge: 1}]}]
`;

const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");

/** The embedded default configuration, as the filter's plugin configuration (validated by the module). */
export function defaultPluginConfig(module: FilterModule): string {
  const demo = join(ROOT, "host", "demo", "petstore.yaml");
  const docs = [...parseDocuments(readFileSync(demo, "utf8"), demo), ...parseDocuments(TCP_CLIENT_CONFIG, "tcp-client.yaml")];
  const bundle = decodeHubClientDocuments(docs, filterChecks(module));
  const json = JSON.stringify(pluginConfig(bundle));
  const compiled = module.configure(json);
  if ("error" in compiled) throw new Error(`the module refuses the default plugin configuration: ${compiled.error}`);
  module.release(compiled.handle);
  return json;
}

function staticCluster(name: string, port: number) {
  return {
    name,
    type: "STATIC",
    connect_timeout: "1s",
    load_assignment: {
      cluster_name: name,
      endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: "127.0.0.1", port_value: port } } } }] }],
    },
  };
}

const ROUTER = { name: "envoy.filters.http.router", typed_config: { "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router" } };

/** A sidecar in front of one app: HTTP on 15006 → app 8080, TCP on 15007 → app 9000, admin on 15000. */
export function envoyBootstrap(configJson: string) {
  return {
    node: { id: "sidecar~127.0.0.1~petstore-v1.demo~demo.svc.cluster.local", cluster: "petstore.demo" },
    admin: { address: { socket_address: { address: "127.0.0.1", port_value: 15000 } } },
    static_resources: {
      listeners: [
        {
          name: "inbound_http",
          address: { socket_address: { address: "0.0.0.0", port_value: 15006 } },
          filter_chains: [
            {
              filters: [
                {
                  name: "envoy.filters.network.http_connection_manager",
                  typed_config: {
                    "@type": "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
                    stat_prefix: "inbound_http",
                    route_config: {
                      name: "inbound",
                      virtual_hosts: [{ name: "app", domains: ["*"], routes: [{ match: { prefix: "/" }, route: { cluster: "inbound_app" } }] }],
                    },
                    http_filters: [httpWasmFilter(configJson), ROUTER],
                  },
                },
              ],
            },
          ],
        },
        {
          name: "inbound_tcp",
          address: { socket_address: { address: "0.0.0.0", port_value: 15007 } },
          filter_chains: [
            {
              filters: [
                {
                  name: "envoy.filters.network.wasm",
                  typed_config: {
                    "@type": "type.googleapis.com/envoy.extensions.filters.network.wasm.v3.Wasm",
                    config: envoyPluginConfig(configJson),
                  },
                },
                {
                  name: "envoy.filters.network.tcp_proxy",
                  typed_config: {
                    "@type": "type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy",
                    stat_prefix: "inbound_tcp",
                    cluster: "inbound_app_tcp",
                  },
                },
              ],
            },
          ],
        },
      ],
      clusters: [staticCluster("inbound_app", 8080), staticCluster("inbound_app_tcp", 9000), hubCluster()],
    },
  };
}

const SELECTOR = { matchLabels: { app: "petstore" } };

/**
 * Istio-style WasmPlugins, renamed API group (extensions.mesh.io), pulling the
 * OCI image by tag with its manifest digest pinned: one for HTTP streams, one
 * (`type: NETWORK`) for the TCP mode.
 */
export function wasmPlugins(configJson: string, imageTag: string, manifestDigest: string) {
  const pluginConfig = JSON.parse(configJson);
  for (const client of [pluginConfig.httpClientConfig, pluginConfig.tcpClientConfig]) {
    if (client) client.transport = { ...client.transport, checkCluster: HUB_OUTBOUND_CLUSTER, reportCluster: HUB_OUTBOUND_CLUSTER };
  }
  const plugin = (name: string, type: "HTTP" | "NETWORK") => ({
    apiVersion: "extensions.mesh.io/v1alpha1",
    kind: "WasmPlugin",
    metadata: { name, namespace: "demo" },
    spec: {
      selector: SELECTOR,
      url: `oci://${IMAGE_REPOSITORY}:${imageTag}`,
      // Checked against the pulled image's manifest digest.
      sha256: manifestDigest,
      imagePullPolicy: "IfNotPresent",
      pluginName: PLUGIN_NAME,
      type,
      // No phase: the filter goes last before the router, after authentication and authorization.
      failStrategy: "FAIL_CLOSE",
      pluginConfig,
    },
  });
  return [plugin("hub-client", "HTTP"), plugin("hub-client-tcp", "NETWORK")];
}

/**
 * The EnvoyFilter alternative (no image pull; the module is mounted at
 * MODULE_PATH): the hub_server cluster added, the Wasm filter inserted before
 * the router of inbound HTTP listeners.
 */
export function envoyFilter(configJson: string) {
  return {
    apiVersion: "networking.mesh.io/v1alpha3",
    kind: "EnvoyFilter",
    metadata: { name: "hub-client", namespace: "demo" },
    spec: {
      workloadSelector: { labels: SELECTOR.matchLabels },
      configPatches: [
        {
          applyTo: "CLUSTER",
          match: { context: "SIDECAR_OUTBOUND" },
          patch: { operation: "ADD", value: hubCluster() },
        },
        {
          applyTo: "HTTP_FILTER",
          match: {
            context: "SIDECAR_INBOUND",
            listener: { filterChain: { filter: { name: "envoy.filters.network.http_connection_manager", subFilter: { name: "envoy.filters.http.router" } } } },
          },
          patch: { operation: "INSERT_BEFORE", value: httpWasmFilter(configJson) },
        },
      ],
    },
  };
}

export interface OciImage {
  manifestDigest: string;
  moduleDigest: string;
  tag: string;
}

function writeBlob(dir: string, bytes: Uint8Array | string): { digest: string; size: number } {
  const hex = sha256(bytes);
  writeFileSync(join(dir, "blobs", "sha256", hex), bytes);
  return { digest: `sha256:${hex}`, size: typeof bytes === "string" ? Buffer.byteLength(bytes) : bytes.byteLength };
}

/**
 * An OCI image layout (oci-layout, index.json, blobs/sha256/) holding the module
 * as a Wasm image. Deterministic: no timestamps, so the same module gives the
 * same digests.
 */
export function writeOciLayout(dir: string, module: Uint8Array, tag: string): OciImage {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, "blobs", "sha256"), { recursive: true });
  writeFileSync(join(dir, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }));
  const config = writeBlob(dir, JSON.stringify({ type: "envoy_proxy", abiVersions: ["v0.2.1"], rootIds: [PLUGIN_NAME] }));
  const layer = writeBlob(dir, module);
  const manifest = JSON.stringify({
    schemaVersion: 2,
    mediaType: MEDIA_TYPES.manifest,
    config: { mediaType: MEDIA_TYPES.config, ...config },
    layers: [{ mediaType: MEDIA_TYPES.layer, ...layer, annotations: { "org.opencontainers.image.title": "filter.wasm" } }],
  });
  const manifestBlob = writeBlob(dir, manifest);
  writeFileSync(
    join(dir, "index.json"),
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MEDIA_TYPES.index,
      manifests: [{ mediaType: MEDIA_TYPES.manifest, ...manifestBlob, annotations: { "org.opencontainers.image.ref.name": tag } }],
    }),
  );
  return { manifestDigest: manifestBlob.digest, moduleDigest: layer.digest, tag };
}

const HEADER = (what: string) => `# ${what}\n# Generated by npm run build (build/deploy_artifacts.ts) from build/filter.wasm and host/demo; see docs/deploy.md.\n`;

export function generate(): OciImage {
  const module = FilterModule.load();
  const configJson = defaultPluginConfig(module);
  const wasm = readFileSync(join(ROOT, "build", "filter.wasm"));
  const version = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
  mkdirSync(DEPLOY_DIR, { recursive: true });
  const image = writeOciLayout(OCI_DIR, wasm, version);
  const hex = (d: string) => d.slice("sha256:".length);
  writeFileSync(join(DEPLOY_DIR, "plugin-config.json"), `${JSON.stringify(JSON.parse(configJson), null, 2)}\n`);
  writeFileSync(join(DEPLOY_DIR, "envoy-bootstrap.yaml"), HEADER("Envoy v3 bootstrap: the filter module in front of an app, the hub_server cluster.") + stringify(envoyBootstrap(configJson)));
  writeFileSync(join(DEPLOY_DIR, "wasm-plugin.yaml"), HEADER(`WasmPlugin pulling oci://${IMAGE_REPOSITORY}:${version}.`) + wasmPlugins(configJson, version, hex(image.manifestDigest)).map((d) => stringify(d)).join("---\n"));
  writeFileSync(join(DEPLOY_DIR, "envoy-filter.yaml"), HEADER(`EnvoyFilter alternative: the module mounted at ${MODULE_PATH}.`) + stringify(envoyFilter(configJson)));
  writeFileSync(
    join(DEPLOY_DIR, "DIGESTS"),
    `filter.wasm ${image.moduleDigest}\noci://${IMAGE_REPOSITORY}:${version} ${image.manifestDigest}\n`,
  );
  return image;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const image = generate();
  console.log(`build/deploy: envoy-bootstrap.yaml, wasm-plugin.yaml, envoy-filter.yaml; OCI image ${image.tag} ${image.manifestDigest} (module ${image.moduleDigest})`);
}
