// `meshctl proxy-status --debugAddress` (issue 24): every proxy connected to
// a real disco-discovery, with the state of each xDS type as istioctl shows
// it, and a proxy's diff. The proxies are real: a Node sidecar
// (`disco-agent proxy --discoveryAddress`), and Envoy-like clients speaking
// ADS by hand over gRPC so that one can leave a response unacknowledged
// (STALE), refuse one (ERROR) and never ask for a type (NOT SENT).
import assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { AGENT_BIN, DISCOVERY_BIN } from "../../host/demo/binaries.ts";
import { CLUSTER, LISTENER } from "../../host/discovery/type_urls.ts";
import { type Daemon, startDaemon, tempDir, waitFor } from "../support/processes.ts";
import { RawAdsClient } from "../discovery/support/raw_ads_client.ts";
import { sidecarConfig } from "../e2e/sidecar_support.ts";
import { meshctl } from "./cli_golden_support.ts";

const SERVICE = (name: string) =>
  `---\napiVersion: v1\nkind: Service\nmetadata: {name: ${name}, namespace: shop}\nspec:\n  clusterIP: 10.96.0.10\n  ports: [{name: http, port: 8000, targetPort: 8080}]\n  selector: {app: ${name}}\n`;

const meta = (fields: Record<string, string>) => ({ fields: Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, { stringValue: v }])) });

describe("proxy-status through disco-discovery's debug port", () => {
  const dir = tempDir("ps-disco-");
  let disco: Daemon<{ grpc: string; http: string }>;
  let channel: grpc.Client;
  let synced: RawAdsClient;
  let stale: RawAdsClient;
  let refusing: RawAdsClient;
  const ps = (...args: string[]) => meshctl(["proxy-status", "--debugAddress", disco.listening.http, ...args]);
  /** The table's rows by name, each split into its columns. */
  const table = async () => {
    const r = await ps();
    assert.equal(r.status, 0, r.stderr);
    const [header, ...lines] = r.stdout.trimEnd().split("\n");
    assert.match(header, /^NAME\s+CLUSTER\s+CDS\s+LDS\s+EDS\s+RDS\s+ECDS\s+DISCO\s+VERSION$/);
    return new Map(lines.map((l) => [l.split(/\s{3,}/)[0], l.split(/\s{3,}/)]));
  };

  before(async () => {
    writeFileSync(join(dir, "config.yaml"), sidecarConfig("FAIL_OPEN") + SERVICE("httpbin"));
    disco = await startDaemon(
      DISCOVERY_BIN,
      [
        "discovery",
        "--configDir",
        dir,
        "--grpcAddr",
        "127.0.0.1:0",
        "--httpAddr",
        "127.0.0.1:0",
        "--monitoringAddr",
        "",
        "--secureGrpcAddr",
        "",
        "--httpsAddr",
        "",
        "--ctrlz_port",
        "0",
        "--ctrlz_address",
        "127.0.0.1",
      ],
      "disco-discovery listening: ",
      undefined,
      { ...process.env, POD_NAME: "disco-discovery-7f9c", DISCO_DEBOUNCE_AFTER: "50ms" },
    );
    await startDaemon(
      AGENT_BIN,
      // Plain-text xDS (--grpcAddr), no workload certificate: said explicitly (the default is the control plane as the CA, over TLS).
      [
        "proxy",
        "sidecar",
        "--inboundPort",
        "0",
        "--outboundPort",
        "0",
        "--proxyAdminPort",
        "0",
        "--discoveryAddress",
        disco.listening.grpc,
        "--controlPlaneAuthPolicy",
        "NONE",
      ],
      "disco-agent listening ",
      undefined,
      { ...process.env, POD_NAME: "web-0", POD_NAMESPACE: "shop", INSTANCE_IP: "127.0.0.1", MESH_META_CLUSTER_ID: "east" },
    );
    channel = new grpc.Client(disco.listening.grpc, grpc.credentials.createInsecure());
    const envoy = (pod: string) => ({
      id: `sidecar~10.0.0.2~${pod}.shop~shop.svc.cluster.local`,
      user_agent_name: "envoy",
      metadata: meta({ CLUSTER_ID: "Kubernetes", ISTIO_VERSION: "1.22.0", NAMESPACE: "shop" }),
    });
    // ACKs clusters and listeners.
    synced = new RawAdsClient(channel, envoy("envoy-synced"));
    synced.send({ type_url: CLUSTER });
    synced.ack(await synced.next());
    synced.send({ type_url: LISTENER });
    synced.ack(await synced.next());
    // ACKs clusters; leaves its listeners unanswered.
    stale = new RawAdsClient(channel, envoy("envoy-stale"));
    stale.send({ type_url: CLUSTER });
    stale.ack(await stale.next());
    stale.send({ type_url: LISTENER });
    await stale.next();
    // Refuses its clusters.
    refusing = new RawAdsClient(channel, envoy("envoy-refusing"));
    refusing.send({ type_url: CLUSTER });
    const r = await refusing.next();
    refusing.send({
      type_url: CLUSTER,
      version_info: "",
      response_nonce: r.nonce,
      error_detail: { code: 3, message: "cluster outbound|8000||httpbin.shop.svc.cluster.local: bad" },
    });
  });
  after(() => {
    for (const c of [synced, stale, refusing]) c?.stream.end();
    channel?.close();
  });

  test("every connected proxy, sorted by name, with SYNCED / STALE / ERROR / NOT SENT per type, the cluster, the control plane and the version", async () => {
    const rows = await waitFor("every proxy's answers recorded", async () => {
      const t = await table();
      return t.size === 4 && t.get("envoy-refusing.shop")?.[2] === "ERROR" && t.get("web-0.shop")?.[2] === "SYNCED" ? t : undefined;
    });
    assert.deepEqual([...rows.keys()], ["envoy-refusing.shop", "envoy-stale.shop", "envoy-synced.shop", "web-0.shop"]);
    assert.deepEqual(rows.get("envoy-synced.shop"), [
      "envoy-synced.shop",
      "Kubernetes",
      "SYNCED",
      "SYNCED",
      "NOT SENT",
      "NOT SENT",
      "NOT SENT",
      "disco-discovery-7f9c",
      "1.22.0",
    ]);
    assert.deepEqual(rows.get("envoy-stale.shop")!.slice(2, 7), ["SYNCED", "STALE", "NOT SENT", "NOT SENT", "NOT SENT"]);
    assert.deepEqual(rows.get("envoy-refusing.shop")!.slice(2, 7), ["ERROR", "NOT SENT", "NOT SENT", "NOT SENT", "NOT SENT"]);
    // The Node sidecar's configuration documents stand for its clusters, listeners, endpoints and routes.
    const web = rows.get("web-0.shop")!;
    assert.deepEqual(web.slice(1, 8), ["east", "SYNCED", "SYNCED", "SYNCED", "SYNCED", "NOT SENT", "disco-discovery-7f9c"]);
    assert.match(web[8], /^\d+\.\d+\.\d+/, "the agent's version");
  });

  test("-o json carries the same, with the refusal's message", async () => {
    const r = await ps("-o", "json");
    assert.equal(r.status, 0, r.stderr);
    const list = JSON.parse(r.stdout) as Array<{ name: string; status: Record<string, string>; errors: Record<string, string> }>;
    const refusing = list.find((p) => p.name === "envoy-refusing.shop")!;
    assert.equal(refusing.status.cds, "ERROR");
    assert.match(refusing.errors.cds, /httpbin\.shop\.svc\.cluster\.local: bad/);
  });

  test("with a pod: what matches and, as a unified diff, what the proxy has not acknowledged", async () => {
    const good = await ps("envoy-synced.shop");
    assert.equal(good.status, 0, good.stderr);
    assert.equal(good.stdout, "Clusters Match\nListeners Match\n");
    const lagging = await ps("envoy-stale", "-n", "shop");
    assert.equal(lagging.status, 0, lagging.stderr);
    assert.match(lagging.stdout, /^Clusters Match\n--- Disco Listeners\n\+\+\+ Proxy Listeners\n@@ -1,\d+ \+1,1 @@\n-\[\n/);
    assert.match(lagging.stdout, /\n\+\[\]\n/, "the proxy holds no listeners");
    const sidecar = await ps("web-0.shop");
    assert.equal(sidecar.stdout, "Configuration Documents Match\n");
    const missing = await ps("nobody.shop");
    assert.equal(missing.status, 1);
    assert.equal(missing.stderr, "Error: meshctl proxy-status: no proxy nobody.shop is connected to disco-discovery\n");
  });

  test("proxy-config listener --debugAddress: the listeners the proxy acknowledged, as the control plane knows them", async () => {
    const pc = (...args: string[]) => meshctl(["proxy-config", ...args, "--debugAddress", disco.listening.http]);
    const r = await pc("listener", "envoy-synced.shop");
    assert.equal(r.status, 0, r.stderr);
    const [header, ...rows] = r.stdout.trimEnd().split("\n");
    assert.match(header, /^NAME\s+ADDRESS\s+PORT\s+CHAINS\s+DESTINATION$/);
    assert.ok(
      rows.some((l) => /^0\.0\.0\.0_8000\s+0\.0\.0\.0\s+8000\s+\d+\s+/.test(l)),
      r.stdout,
    );
    const asJson = JSON.parse((await pc("listener", "envoy-synced.shop", "-o", "json")).stdout) as Array<{ name: string }>;
    assert.ok(asJson.some((l) => l.name === "0.0.0.0_8000"));
    assert.equal(
      (await pc("listener", "envoy-stale.shop", "--port", "8000")).stdout,
      "NAME   ADDRESS   PORT   CHAINS   DESTINATION\n",
      "nothing acknowledged yet",
    );
    const node = await pc("listener", "web-0.shop");
    assert.equal(node.status, 1);
    assert.match(node.stderr, /web-0\.shop is a disco-agent sidecar: .*ask its admin port \(--admin\)/);
  });

  test("a change in disco-discovery's configuration: proxies that acknowledge it are SYNCED again, the one that does not is STALE", async () => {
    const before = (await table()).get("envoy-synced.shop")!;
    assert.equal(before[2], "SYNCED");
    writeFileSync(join(dir, "config.yaml"), sidecarConfig("FAIL_OPEN") + SERVICE("httpbin") + SERVICE("sleep"));
    const rows = await waitFor("the push seen", async () => {
      const t = await table();
      return t.get("envoy-synced.shop")?.[2] === "STALE" && t.get("web-0.shop")?.[2] === "SYNCED" ? t : undefined;
    });
    assert.equal(rows.get("web-0.shop")![2], "SYNCED", "the Node sidecar acknowledged the change");
    const diff = await ps("envoy-synced.shop");
    assert.match(diff.stdout, /^--- Disco Clusters\n\+\+\+ Proxy Clusters\n/);
    assert.match(diff.stdout, /^-.*outbound\|8000\|\|sleep\.shop\.svc\.cluster\.local/m, "the new cluster is on the control plane's side only");
    synced.ack(await synced.next());
    await waitFor("the ACK seen", async () => ((await table()).get("envoy-synced.shop")?.[2] === "SYNCED" ? true : undefined));
    assert.match((await ps("envoy-synced.shop")).stdout, /^Clusters Match\n/);
  });

  test("an unreachable debug address is an error naming it; without one, the message points at --debugAddress", async () => {
    const r = await meshctl(["proxy-status", "--debugAddress", "127.0.0.1:1"]);
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /^Error: meshctl proxy-status: unable to query disco-discovery \(--debugAddress is its --httpAddr\): 127\.0\.0\.1:1\/debug\/syncz: /,
    );
    const none = await meshctl(["proxy-status"]);
    assert.equal(none.status, 69);
    assert.match(none.stderr, /--debugAddress HOST:PORT/);
  });
});
