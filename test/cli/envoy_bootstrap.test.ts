import assert from "node:assert/strict";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import type protobuf from "protobufjs";
import { parse } from "yaml";
import { DISCOVERY_BIN } from "../../host/demo/binaries.ts";
import { LISTENER } from "../../host/discovery/type_urls.ts";
import { RawAdsClient } from "../discovery/support/raw_ads_client.ts";
import { decodeAnyStrict, decodeStrict, envoyRoot } from "../support/envoy_protos.ts";
import { type Daemon, startDaemon, tempDir } from "../support/processes.ts";
import { meshctl } from "./cli_golden_support.ts";
import { SIDE_LISTENERS_OFF } from "../discovery/support/daemon_args.ts";

// `meshctl x envoy-bootstrap`: the bootstrap decodes as Envoy's
// envoy.config.bootstrap.v3.Bootstrap (strictly, every Any known), and the
// node it describes, sent to a real disco-discovery, is served the sidecar
// configuration of its workload.

const BOOTSTRAP = "envoy.config.bootstrap.v3.Bootstrap";

describe("meshctl x envoy-bootstrap", { timeout: 600_000 }, () => {
  let root: protobuf.Root;
  before(() => {
    root = envoyRoot();
  });

  it("prints YAML that decodes as envoy.config.bootstrap.v3.Bootstrap: node, admin, the xds-grpc cluster, everything dynamic over ADS", async () => {
    const run = await meshctl([
      "x",
      "envoy-bootstrap",
      "--discoveryAddress",
      "disco-discovery.mesh-system.svc:15010",
      "--pod",
      "reviews-v1-7d4b9c7f9-abcde",
      "-n",
      "bookinfo",
      "--ip",
      "10.1.2.3",
      "--labels",
      "app=reviews,version=v1",
    ]);
    assert.equal(run.status, 0, run.stderr);
    const { message, anyTypes } = decodeStrict(root, BOOTSTRAP, parse(run.stdout));
    assert.deepEqual([...new Set(anyTypes)], ["type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions"]);
    const b = root.lookupType(BOOTSTRAP).toObject(message, { longs: String, enums: String }) as Record<string, any>;
    assert.equal(b.node.id, "sidecar~10.1.2.3~reviews-v1-7d4b9c7f9-abcde.bookinfo~bookinfo.svc.cluster.local");
    assert.equal(b.node.cluster, "reviews-v1-7d4b9c7f9-abcde.bookinfo");
    assert.equal(b.admin.address.socket_address.port_value, 15000);
    const ads = b.dynamic_resources.ads_config;
    assert.equal(ads.api_type, "GRPC");
    assert.equal(ads.transport_api_version, "V3");
    const xds = b.static_resources.clusters.find((c: { name: string }) => c.name === ads.grpc_services[0].envoy_grpc.cluster_name);
    assert.ok(xds, "ads_config names a static cluster");
    assert.equal(xds.type, "STRICT_DNS");
    assert.deepEqual(xds.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address, {
      address: "disco-discovery.mesh-system.svc",
      port_value: 15010,
    });
    assert.ok(b.dynamic_resources.lds_config.ads && b.dynamic_resources.cds_config.ads, "listeners and clusters over ADS");
  });

  it("--controlPlaneAuthPolicy MUTUAL_TLS: xds-grpc speaks mutual TLS with the agent's SDS certificate and roots, checking disco-discovery's identity suffix", async () => {
    const run = await meshctl([
      "x",
      "envoy-bootstrap",
      "--discoveryAddress",
      "disco-discovery.mesh-system.svc:15012",
      "--controlPlaneAuthPolicy",
      "MUTUAL_TLS",
      "--discoIdentity",
      "sa/disco-discovery",
      "--type",
      "router",
      "--pod",
      "egress-1",
      "-n",
      "shop",
      "-o",
      "json",
    ]);
    assert.equal(run.status, 0, run.stderr);
    const { message, anyTypes } = decodeStrict(root, BOOTSTRAP, JSON.parse(run.stdout));
    assert.ok(anyTypes.includes("type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext"));
    const b = root.lookupType(BOOTSTRAP).toObject(message, { longs: String, enums: String }) as Record<string, any>;
    const tls = JSON.parse(run.stdout).static_resources.clusters.find((c: { name: string }) => c.name === "xds-grpc").transport_socket.typed_config
      .common_tls_context;
    assert.deepEqual(
      tls.tls_certificate_sds_secret_configs.map((x: { name: string }) => x.name),
      ["default"],
    );
    assert.equal(tls.combined_validation_context.validation_context_sds_secret_config.name, "ROOTCA");
    assert.deepEqual(tls.combined_validation_context.default_validation_context.match_subject_alt_names, [{ suffix: "sa/disco-discovery" }]);
    assert.equal(b.node.id, "router~127.0.0.1~egress-1.shop~shop.svc.cluster.local");
    assert.equal((await meshctl(["x", "envoy-bootstrap", "--controlPlaneAuthPolicy", "TLS"])).status, 2, "an unknown policy is a usage error");
  });

  it("-o json prints the same bootstrap as JSON; a bad address is refused naming the flag", async () => {
    const yaml = await meshctl(["x", "envoy-bootstrap", "--discoveryAddress", "127.0.0.1:15010"]);
    const json = await meshctl(["x", "envoy-bootstrap", "--discoveryAddress", "127.0.0.1:15010", "-o", "json"]);
    assert.equal(json.status, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout), parse(yaml.stdout));
    assert.equal(JSON.parse(json.stdout).static_resources.clusters[0].type, "STATIC", "an address needs no DNS");
    const bad = await meshctl(["x", "envoy-bootstrap", "--discoveryAddress", "disco-discovery"]);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--discoveryAddress: expected host:port/);
    for (const [flag, value] of [
      ["--labels", "app"],
      ["--adminPort", "0"],
    ]) {
      const refused = await meshctl(["x", "envoy-bootstrap", flag, value]);
      assert.equal(refused.status, 2, refused.stderr);
      assert.match(
        refused.stderr,
        new RegExp(`^Error: option '${flag} <[^>]+>' argument '${value}' is invalid\\. expected `, "i"),
        "one line naming the flag, no stack trace",
      );
    }
  });

  describe("the node it describes, connected to disco-discovery", async () => {
    let disco: Daemon<{ grpc: string }>;
    let channel: grpc.Client;
    before(async () => {
      const dir = tempDir("envoy-bootstrap-");
      for (const f of ["bookinfo.yaml", "bookinfo-networking.yaml"]) copyFileSync(join(import.meta.dirname, "fixtures", "upstream", f), join(dir, f));
      disco = await startDaemon(
        DISCOVERY_BIN,
        ["discovery", "--configDir", dir, "--grpcAddr", "127.0.0.1:0", "--httpAddr", "", ...SIDE_LISTENERS_OFF],
        "disco-discovery listening: ",
      );
      channel = new grpc.Client(disco.listening.grpc, grpc.credentials.createInsecure());
    });
    after(async () => {
      channel?.close();
      await disco?.stop();
    });

    it("is served the inbound listener of its workload", async () => {
      const run = await meshctl(["x", "envoy-bootstrap", "--discoveryAddress", disco.listening.grpc, "--pod", "productpage-v1-6b746f74dc-9stvs", "-o", "json"]);
      assert.equal(run.status, 0, run.stderr);
      const node = JSON.parse(run.stdout).node;
      // Envoy sends the node as the bootstrap gives it, with its user agent.
      const metadata = { fields: Object.fromEntries(Object.entries(node.metadata).map(([k, v]) => [k, { string_value: v }])) };
      const c = new RawAdsClient(channel, { id: node.id, cluster: node.cluster, metadata, user_agent_name: "envoy" });
      c.send({ type_url: LISTENER });
      const r = await c.next();
      const inbound = r.resources.map((x) => decodeAnyStrict(root, x).object).find((l) => l.name === "virtualInbound")!;
      const ports = inbound.filter_chains.flatMap((fc: any) => fc.filter_chain_match.destination_port ?? []);
      assert.deepEqual([...new Set(ports)], [9080], "productpage's Deployment, found from the pod name, serves 9080");
      c.stream.end();
    });
  });
});
