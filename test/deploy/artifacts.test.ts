// The deployable artifacts of `npm run build` (build/deploy_artifacts.ts,
// docs/deploy.md): the Envoy bootstrap and the EnvoyFilter's Envoy config
// decode with Envoy's own v3 protos, strictly, every Any resolved; the
// WasmPlugin and the OCI image layout agree with the module that was built.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import type protobuf from "protobufjs";
import { parse, parseAllDocuments } from "yaml";
import { DEPLOY_DIR, MEDIA_TYPES, OCI_DIR, PLUGIN_NAME } from "../../build/deploy_artifacts.ts";
import { FilterModule, RELEASE_WASM } from "../../host/wasm/filter_module.ts";
import { decodeStrict, envoyRoot } from "../support/envoy_protos.ts";

const BOOTSTRAP = "envoy.config.bootstrap.v3.Bootstrap";
const yamlFile = (name: string) => parse(readFileSync(join(DEPLOY_DIR, name), "utf8")) as Record<string, any>;
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** Unpacks an Any with Envoy's protos. */
function unpack(root: protobuf.Root, any: { type_url: string; value: Uint8Array }): Record<string, any> {
  const type = root.lookupType(any.type_url.slice(any.type_url.lastIndexOf("/") + 1));
  return type.toObject(type.decode(any.value), { defaults: false, longs: String }) as Record<string, any>;
}

/** The plugin configuration inside an envoy.filters.http.wasm / network.wasm typed_config, decoded. */
function pluginConfigOf(root: protobuf.Root, typedConfig: { type_url: string; value: Uint8Array }) {
  const wasm = unpack(root, typedConfig);
  const configuration = unpack(root, wasm.config.configuration);
  return { plugin: wasm.config, json: configuration.value as string, configurationType: wasm.config.configuration.type_url as string };
}

function assertModuleAccepts(json: string): void {
  const module = FilterModule.load();
  const result = module.configure(json);
  assert.ok("handle" in result, `the module refuses the configuration: ${"error" in result ? result.error : ""}`);
  module.release(result.handle);
}

describe("Envoy bootstrap (build/deploy/envoy-bootstrap.yaml)", () => {
  let root: protobuf.Root;
  before(() => {
    root = envoyRoot();
  });

  it("decodes as envoy.config.bootstrap.v3.Bootstrap with every Any resolved", () => {
    const { message, anyTypes } = decodeStrict(root, BOOTSTRAP, yamlFile("envoy-bootstrap.yaml"));
    assert.deepEqual([...new Set(anyTypes)].sort(), [
      "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router",
      "type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm",
      "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
      "type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy",
      "type.googleapis.com/envoy.extensions.filters.network.wasm.v3.Wasm",
      "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
      "type.googleapis.com/google.protobuf.StringValue",
    ]);
    const bootstrap = root.lookupType(BOOTSTRAP).toObject(message, { longs: String }) as Record<string, any>;
    const [http, tcp] = bootstrap.static_resources.listeners;
    const hcm = unpack(root, http.filter_chains[0].filters[0].typed_config);
    assert.deepEqual(
      hcm.http_filters.map((f: { name: string }) => f.name),
      ["envoy.filters.http.wasm", "envoy.filters.http.router"],
    );
    const { plugin, json, configurationType } = pluginConfigOf(root, hcm.http_filters[0].typed_config);
    assert.equal(plugin.root_id, PLUGIN_NAME);
    assert.equal(plugin.vm_config.runtime, "envoy.wasm.runtime.v8");
    assert.equal(configurationType, "type.googleapis.com/google.protobuf.StringValue");
    assertModuleAccepts(json);
    // The hub calls go to the cluster the configuration names, which the bootstrap defines with HTTP/2 (gRPC).
    const checkCluster = JSON.parse(json).httpClientConfig.transport?.checkCluster ?? "hub_server";
    const cluster = bootstrap.static_resources.clusters.find((c: { name: string }) => c.name === checkCluster);
    assert.ok(cluster, `no cluster ${checkCluster}`);
    const options = unpack(root, cluster.typed_extension_protocol_options["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"]);
    assert.ok(options.explicit_http_config.http2_protocol_options);
    // TCP mode: the same module as a network filter, with a tcpClientConfig.
    assert.equal(tcp.filter_chains[0].filters[0].name, "envoy.filters.network.wasm");
    const tcpPlugin = pluginConfigOf(root, tcp.filter_chains[0].filters[0].typed_config);
    assert.ok(JSON.parse(tcpPlugin.json).tcpClientConfig);
    assertModuleAccepts(tcpPlugin.json);
  });

  it("the strict decoding refuses what Envoy refuses: an unknown field, an unknown Any type, a bad duration", () => {
    const typo = yamlFile("envoy-bootstrap.yaml");
    typo.static_resources.clusters[0].conect_timeout = "1s";
    assert.throws(() => decodeStrict(root, BOOTSTRAP, typo), /clusters\[0\]\.conect_timeout: no such field/);
    const unknownAny = yamlFile("envoy-bootstrap.yaml");
    unknownAny.static_resources.listeners[0].filter_chains[0].filters[0].typed_config["@type"] =
      "type.googleapis.com/envoy.extensions.filters.http.nothing.v3.Nothing";
    assert.throws(() => decodeStrict(root, BOOTSTRAP, unknownAny), /is not a message of Envoy's v3 API/);
    const duration = yamlFile("envoy-bootstrap.yaml");
    duration.static_resources.clusters[0].connect_timeout = "1 second";
    assert.throws(() => decodeStrict(root, BOOTSTRAP, duration), /connect_timeout: expected a duration/);
  });

  it("the EnvoyFilter's patches, applied to a sidecar's listener and clusters, decode as a Bootstrap", () => {
    const filter = yamlFile("envoy-filter.yaml");
    assert.equal(filter.apiVersion, "networking.mesh.io/v1alpha3");
    assert.equal(filter.kind, "EnvoyFilter");
    const patches = filter.spec.configPatches as Array<{ applyTo: string; match: any; patch: { operation: string; value: any } }>;
    const cluster = patches.find((p) => p.applyTo === "CLUSTER");
    const httpFilter = patches.find((p) => p.applyTo === "HTTP_FILTER");
    assert.equal(cluster?.patch.operation, "ADD");
    assert.equal(httpFilter?.patch.operation, "INSERT_BEFORE");
    assert.equal(httpFilter?.match.listener.filterChain.filter.subFilter.name, "envoy.filters.http.router");
    // What the control plane would produce: the Wasm filter before the router, the hub cluster added.
    const sidecar = {
      static_resources: {
        listeners: [
          {
            name: "virtualInbound",
            address: { socket_address: { address: "0.0.0.0", port_value: 15006 } },
            filter_chains: [
              {
                filters: [
                  {
                    name: "envoy.filters.network.http_connection_manager",
                    typed_config: {
                      "@type": "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
                      stat_prefix: "inbound_0.0.0.0_8080",
                      route_config: {
                        name: "inbound",
                        virtual_hosts: [{ name: "app", domains: ["*"], routes: [{ match: { prefix: "/" }, route: { cluster: "app" } }] }],
                      },
                      http_filters: [
                        httpFilter!.patch.value,
                        { name: "envoy.filters.http.router", typed_config: { "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router" } },
                      ],
                    },
                  },
                ],
              },
            ],
          },
        ],
        clusters: [cluster!.patch.value, { name: "app", type: "STATIC", load_assignment: { cluster_name: "app", endpoints: [] } }],
      },
    };
    const { message, anyTypes } = decodeStrict(root, BOOTSTRAP, sidecar);
    assert.ok(anyTypes.includes("type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm"));
    const bootstrap = root.lookupType(BOOTSTRAP).toObject(message) as Record<string, any>;
    const hcm = unpack(root, bootstrap.static_resources.listeners[0].filter_chains[0].filters[0].typed_config);
    assertModuleAccepts(pluginConfigOf(root, hcm.http_filters[0].typed_config).json);
    assert.equal(bootstrap.static_resources.clusters[0].name, "hub_server");
  });
});

describe("OCI image layout (build/deploy/oci)", () => {
  const blob = (digest: string) => readFileSync(join(OCI_DIR, "blobs", "sha256", digest.replace(/^sha256:/, "")));
  /** A descriptor's blob exists, has the stated size and hashes to the stated digest. */
  function checked(descriptor: { digest: string; size: number }): Buffer {
    const bytes = blob(descriptor.digest);
    assert.equal(bytes.length, descriptor.size, `size of ${descriptor.digest}`);
    assert.equal(`sha256:${sha256(bytes)}`, descriptor.digest);
    return bytes;
  }

  it("is a valid layout whose manifest, config and layer digests check out, the layer being the module", () => {
    assert.deepEqual(JSON.parse(readFileSync(join(OCI_DIR, "oci-layout"), "utf8")), { imageLayoutVersion: "1.0.0" });
    const index = JSON.parse(readFileSync(join(OCI_DIR, "index.json"), "utf8"));
    assert.equal(index.schemaVersion, 2);
    assert.equal(index.manifests.length, 1);
    const version = JSON.parse(readFileSync("package.json", "utf8")).version;
    assert.equal(index.manifests[0].annotations["org.opencontainers.image.ref.name"], version);
    assert.equal(index.manifests[0].mediaType, MEDIA_TYPES.manifest);
    const manifest = JSON.parse(checked(index.manifests[0]).toString("utf8"));
    assert.equal(manifest.schemaVersion, 2);
    assert.equal(manifest.mediaType, "application/vnd.oci.image.manifest.v1+json");
    assert.equal(manifest.config.mediaType, "application/vnd.module.wasm.config.v1+json");
    const config = JSON.parse(checked(manifest.config).toString("utf8"));
    assert.deepEqual(config.rootIds, [PLUGIN_NAME]);
    // The "oci" variant of the Wasm image format: exactly one layer, the raw module.
    assert.equal(manifest.layers.length, 1);
    assert.equal(manifest.layers[0].mediaType, "application/vnd.module.wasm.content.layer.v1+wasm");
    assert.deepEqual(checked(manifest.layers[0]), readFileSync(RELEASE_WASM));
  });

  it("a real OCI client (skopeo) reads the layout by tag, verifies every digest and gets the module back", () => {
    const tag = JSON.parse(readFileSync(join(OCI_DIR, "index.json"), "utf8")).manifests[0].annotations["org.opencontainers.image.ref.name"];
    const out = mkdtempSync(join(tmpdir(), "mesh-oci-"));
    try {
      const copy = spawnSync("skopeo", ["copy", "--quiet", `oci:${OCI_DIR}:${tag}`, `dir:${out}`], { encoding: "utf8" });
      assert.ifError(copy.error); // ENOENT: install skopeo (apt-get install skopeo; .ci/run does)
      assert.equal(copy.status, 0, copy.stderr);
      const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8"));
      assert.equal(manifest.config.mediaType, MEDIA_TYPES.config);
      assert.deepEqual(readFileSync(join(out, manifest.layers[0].digest.replace(/^sha256:/, ""))), readFileSync(RELEASE_WASM));
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it("the WasmPlugins (HTTP and NETWORK) pull that image and pins its manifest digest; DIGESTS lists both digests", () => {
    const index = JSON.parse(readFileSync(join(OCI_DIR, "index.json"), "utf8"));
    const manifestDigest: string = index.manifests[0].digest;
    const tag = index.manifests[0].annotations["org.opencontainers.image.ref.name"];
    const plugins = parseAllDocuments(readFileSync(join(DEPLOY_DIR, "wasm-plugin.yaml"), "utf8")).map((d) => d.toJS() as Record<string, any>);
    assert.deepEqual(
      plugins.map((p) => p.spec.type),
      ["HTTP", "NETWORK"],
    );
    for (const plugin of plugins) {
      assert.equal(plugin.apiVersion, "extensions.mesh.io/v1alpha1");
      assert.equal(plugin.kind, "WasmPlugin");
      assert.match(plugin.spec.url, new RegExp(`^oci://[^ ]+:${tag.replace(/\./g, "\\.")}$`));
      assert.equal(`sha256:${plugin.spec.sha256}`, manifestDigest);
      assert.equal(plugin.spec.pluginName, PLUGIN_NAME);
      assert.equal(plugin.spec.failStrategy, "FAIL_CLOSE");
      // Istio hands pluginConfig to the module as its JSON text; hub calls use the mesh's cluster for the hub service.
      assertModuleAccepts(JSON.stringify(plugin.spec.pluginConfig));
      assert.equal(plugin.spec.pluginConfig.httpClientConfig.transport.checkCluster, "outbound|9091||hubs.mesh-system.svc.cluster.local");
      assert.equal(plugin.spec.pluginConfig.tcpClientConfig.transport.reportCluster, "outbound|9091||hubs.mesh-system.svc.cluster.local");
    }
    const url = plugins[0].spec.url as string;
    const digests = readFileSync(join(DEPLOY_DIR, "DIGESTS"), "utf8");
    assert.ok(digests.includes(`filter.wasm sha256:${sha256(readFileSync(RELEASE_WASM))}`));
    assert.ok(digests.includes(`${url.slice("oci://".length)} ${manifestDigest}`));
  });
});
