import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { PassThrough } from "node:stream";
import * as grpc from "@grpc/grpc-js";
import { runWait } from "../../host/cli/meshctl/wait.ts";
import { DistributionLedger, ResourceVersioning, type SyncedVersion } from "../../host/discovery/distribution.ts";
import type { DiscoveryServer } from "../../host/discovery/server.ts";
import { CONFIG_DOCUMENT } from "../../host/discovery/type_urls.ts";
import { tempDir } from "../support/processes.ts";
import { RawAdsClient } from "./support/raw_ads_client.ts";
import { denyPolicy, startTestDiscovery, until } from "./support/in_process.ts";

// Config distribution tracking: the ledger of configuration versions
// (DISCO_DISTRIBUTION_HISTORY_RETENTION), resource versions and generations,
// what /debug/config_distribution and /debug/adsz (DISCO_DEBUG_ADSZ_CONFIG)
// answer over a real ADS stream, and tracking switched off.

const doc = (file: string, name: string, body: Record<string, unknown>) => ({
  file,
  index: 0,
  apiVersion: "security.mesh.io/v1beta1",
  kind: "AuthorizationPolicy",
  name,
  namespace: "foo",
  body,
});
const catalogOf = (...names: string[]) =>
  ({ resources: names.map((name) => ({ kind: "AuthorizationPolicy", namespace: "foo", name, origin: { file: `${name}.yaml`, index: 0 } })) }) as never;

describe("resource versions and the ledger", () => {
  it("generation counts changes outside metadata, remembered across an absence; resourceVersion changes with any change; metadata wins", () => {
    const v = new ResourceVersioning();
    const spec = (path: string) => ({
      metadata: { name: "deny", namespace: "foo" },
      spec: { action: "DENY", rules: [{ to: [{ operation: { paths: [path] } }] }] },
    });
    const first = v.next(catalogOf("deny"), [doc("deny.yaml", "deny", spec("/a"))]).get("AuthorizationPolicy/foo/deny")!;
    assert.equal(first.generation, 1);
    const labelled = { ...spec("/a"), metadata: { name: "deny", namespace: "foo", labels: { team: "x" } } };
    const relabelled = v.next(catalogOf("deny"), [doc("deny.yaml", "deny", labelled)]).get("AuthorizationPolicy/foo/deny")!;
    assert.equal(relabelled.generation, 1, "a metadata change is no new generation");
    assert.notEqual(relabelled.resourceVersion, first.resourceVersion, "but a new resource version");
    assert.equal(v.next(catalogOf(), []).size, 0);
    assert.equal(v.next(catalogOf("deny"), [doc("deny.yaml", "deny", spec("/b"))]).get("AuthorizationPolicy/foo/deny")!.generation, 2);
    const given = v
      .next(catalogOf("deny"), [
        doc("deny.yaml", "deny", { ...spec("/b"), metadata: { name: "deny", namespace: "foo", resourceVersion: "4711", generation: 7 } }),
      ])
      .get("AuthorizationPolicy/foo/deny")!;
    assert.deepEqual(given, { resourceVersion: "4711", generation: 7 });
  });

  it("a superseded configuration is forgotten after the retention: a proxy still on it reads as unknown", () => {
    let now = 0;
    const ledger = new DistributionLedger(60_000, () => now);
    ledger.record(1, new Map([["K/ns/a", { resourceVersion: "r1", generation: 1 }]]));
    ledger.record(2, new Map());
    assert.deepEqual(ledger.at(1, "K/ns/a"), { state: "present", resourceVersion: "r1", generation: 1 });
    assert.deepEqual(ledger.at(2, "K/ns/a"), { state: "absent" });
    assert.deepEqual(ledger.at(undefined, "K/ns/a"), { state: "unknown" });
    now = 60_001;
    assert.deepEqual(ledger.at(1, "K/ns/a"), { state: "unknown" });
    assert.deepEqual(ledger.at(2, "K/ns/a"), { state: "absent" }, "the newest version is never forgotten");
  });
});

describe("/debug/config_distribution and /debug/adsz over a real ADS stream", () => {
  const dir = tempDir("distribution-");
  let server: DiscoveryServer;
  let client: grpc.Client;
  const get = async (path: string) => {
    const res = await fetch(`http://${server.listeners.http}${path}`);
    return { status: res.status, body: await res.text() };
  };
  before(async () => {
    writeFileSync(join(dir, "policy.yaml"), denyPolicy("/a"));
    server = await startTestDiscovery(dir, { http: { host: "127.0.0.1", port: 0 }, debugAdszConfig: true });
    client = new grpc.Client(server.listeners.grpc!, grpc.credentials.createInsecure());
  });
  after(async () => {
    client?.close();
    await server?.close();
  });

  it("a proxy is present only once it ACKs; a NACKed change leaves it on the version it had", async () => {
    const ads = new RawAdsClient(client, { id: "sidecar~10.0.0.1~a.foo~foo.svc.cluster.local", user_agent_name: "disco-agent" });
    ads.send({ type_url: CONFIG_DOCUMENT });
    const first = await ads.next();
    assert.match(first.nonce, /^1-\d+$/, "the nonce carries the configuration version");
    const rows = async () => JSON.parse((await get("/debug/config_distribution?resource=AuthorizationPolicy/foo/deny")).body) as SyncedVersion[];
    assert.equal((await rows())[0].State, "unknown", "not acknowledged yet");
    ads.ack(first);
    const acked = await until("the ACK", async () => ((await rows())[0].State === "present" ? rows() : undefined));
    assert.equal(acked[0].ConfigVersion, 1);
    assert.equal(acked[0].Generation, 1);
    assert.equal(acked[0].DocumentVersion, acked[0].ResourceVersion);

    writeFileSync(join(dir, "policy.yaml"), denyPolicy("/b"));
    const pushed = await ads.next();
    ads.send({ type_url: CONFIG_DOCUMENT, version_info: first.version_info, response_nonce: pushed.nonce, error_detail: { code: 3, message: "no" } });
    await until("the NACK", async () => ((JSON.parse((await get("/debug/syncz")).body) as Array<{ nacked: unknown }>)[0].nacked ? true : undefined));
    assert.deepEqual(
      (await rows()).map((r) => [r.ResourceVersion, r.Generation]),
      [[acked[0].ResourceVersion, 1]],
    );

    const adsz = JSON.parse((await get("/debug/adsz")).body) as Array<{ config: Record<string, Array<{ name: string; value: { spec: { rules: unknown } } }>> }>;
    assert.deepEqual(
      adsz[0].config.config.map((r) => r.name),
      ["AuthorizationPolicy/foo/deny"],
    );
    assert.deepEqual(adsz[0].config.config[0].value.spec.rules, [{ to: [{ operation: { paths: ["/b"] } }] }], "what was last sent, NACKed or not");
    ads.stream.cancel();
  });

  it("a request without ?resource= is answered 422, as upstream", async () => {
    assert.deepEqual(await get("/debug/config_distribution"), { status: 422, body: "querystring parameter 'resource' is required\n" });
  });
});

describe("tracking off (DISCO_ENABLE_CONFIG_DISTRIBUTION_TRACKING=false)", () => {
  const dir = tempDir("distribution-off-");
  let server: DiscoveryServer;
  before(async () => {
    writeFileSync(join(dir, "policy.yaml"), denyPolicy("/a"));
    server = await startTestDiscovery(dir, { http: { host: "127.0.0.1", port: 0 }, distributionTracking: false });
  });
  after(() => server?.close());

  it("/debug/config_distribution says so (409); meshctl x wait names the variable and exits 1; nonces are plain; /debug/adsz has no config by default", async () => {
    const res = await fetch(`http://${server.listeners.http}/debug/config_distribution?resource=AuthorizationPolicy/foo/deny`);
    assert.equal(res.status, 409);
    assert.match(await res.text(), /DISCO_ENABLE_CONFIG_DISTRIBUTION_TRACKING=true/);
    const [host, port] = server.listeners.http!.split(":");
    const out = new PassThrough();
    const err = new PassThrough();
    const code = await runWait(
      {
        for: "distribution",
        kind: "AuthorizationPolicy",
        name: "deny",
        namespace: "foo",
        resourceVersions: [],
        threshold: 1,
        timeoutMs: 5000,
        discovery: [{ host, port: Number(port) }],
        pollMs: 100,
        verbose: false,
      },
      out,
      err,
    );
    assert.equal(code, 1);
    assert.match(String(err.read()), /^Error: unable to query disco-discovery for distribution .*HTTP 409: config distribution tracking is off/);
    const client = new grpc.Client(server.listeners.grpc!, grpc.credentials.createInsecure());
    const ads = new RawAdsClient(client, { id: "sidecar~10.0.0.1~a.foo~foo.svc.cluster.local", user_agent_name: "disco-agent" });
    ads.send({ type_url: CONFIG_DOCUMENT });
    assert.match((await ads.next()).nonce, /^\d+$/, "plain nonces");
    const adsz = (await (await fetch(`http://${server.listeners.http}/debug/adsz`)).json()) as Array<Record<string, unknown>>;
    assert.equal(adsz.length, 1);
    assert.ok(!("config" in adsz[0]), "DISCO_DEBUG_ADSZ_CONFIG is off by default");
    ads.stream.cancel();
    client.close();
  });
});
