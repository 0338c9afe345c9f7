import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { AggregatedDiscoveryService } from "../../host/discovery/ads_server.ts";
import { proxylessResources, type XdsService } from "../../host/discovery/proxyless.ts";
import type { Resource, ResourceSet } from "../../host/discovery/resource_set.ts";
import { selectResources } from "../../host/discovery/resource_set.ts";
import { proxyConfig } from "../../host/discovery/sync_status.ts";
import { CLUSTER, ENDPOINT } from "../../host/discovery/type_urls.ts";
import { unpackAny } from "../../host/wire/envoy_protos.ts";
import { type AdsHarness, startAdsHarness } from "./support/ads_harness.ts";
import { type DeltaResponse, RawDeltaClient } from "./support/raw_delta_client.ts";

// What an incremental (Delta) proxy holds as far as it acknowledged: the
// `proxy` side of /debug/proxy_config, which `meshctl proxy-status <pod>`
// diffs against what disco-discovery would serve now. Several proxies that
// subscribe alike share what they hold; each must still read as its own
// through ACKs, a NACK, a push that changes nothing for it, and a reconnect.

const A = "outbound|80||a.foo.svc.cluster.local";
const B = "outbound|80||b.foo.svc.cluster.local";
const node = (n: number) => ({ id: `sidecar~10.0.0.${n}~p${n}.foo~foo.svc.cluster.local`, user_agent_name: "envoy" });

const services = (aPort: number, bPort: number): XdsService[] => [
  { host: "a.foo.svc.cluster.local", port: 80, endpoints: [{ address: "10.0.0.1", port: aPort }] },
  { host: "b.foo.svc.cluster.local", port: 80, endpoints: [{ address: "10.0.0.2", port: bPort }] },
];

async function until(done: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 90_000; !done(); ) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("what an incremental proxy acknowledged (proxy-status)", { timeout: 600_000 }, () => {
  let harness: AdsHarness;
  let ads: AggregatedDiscoveryService;
  let current: ResourceSet = proxylessResources(services(8080, 8080));
  const acks: string[] = [];
  const nacks: string[] = [];

  before(async () => {
    harness = await startAdsHarness(() => current, {
      acked: (n, type) => acks.push(`${n.id} ${type}`),
      nacked: (n, type) => nacks.push(`${n.id} ${type}`),
    });
    ads = harness.ads;
  });
  after(() => harness?.stop());

  const push = (aPort: number, bPort: number) => {
    current = proxylessResources(services(aPort, bPort));
    ads.push(() => current);
  };
  /** The proxy's acknowledged resources of a type: cluster names, or `name:port` for load assignments. */
  const acked = (n: number, type: string): string[] => {
    const decode = (r: Resource) => {
      const port = JSON.stringify(unpackAny(r.any)).match(/"port_value":(\d+)/)?.[1];
      return port ? `${r.name}:${port}` : r.name;
    };
    const serveNow = (_node: unknown, t: string, names: ReadonlySet<string> | "*") => selectResources(current, t, names);
    const config = proxyConfig(ads.state(), node(n).id, serveNow, decode);
    assert.ok(config, `proxy ${n} is connected`);
    return (config.configs.find((c) => c.type === (type === CLUSTER ? "cds" : "eds"))?.proxy ?? []) as string[];
  };
  /** ACKs and waits until the server has taken it. */
  const ack = async (c: RawDeltaClient, n: number, r: DeltaResponse) => {
    const before = acks.filter((a) => a === `${node(n).id} ${r.type_url}`).length;
    c.ack(r);
    await until(() => acks.filter((a) => a === `${node(n).id} ${r.type_url}`).length > before);
  };

  it("follows each proxy's ACKs and NACKs, also when proxies hold the same resources", async () => {
    const clients = [1, 2].map((n) => new RawDeltaClient(harness.client, node(n)));
    for (const c of clients) c.send({ type_url: CLUSTER });
    for (const c of clients) c.send({ type_url: ENDPOINT, resource_names_subscribe: [A, B] });
    const first = await Promise.all(clients.map(async (c) => [await c.next(), await c.next()]));
    assert.deepEqual(acked(1, ENDPOINT), [], "nothing acknowledged before the first ACK");
    for (const [i, c] of clients.entries()) for (const r of first[i]) await ack(c, i + 1, r);
    for (const n of [1, 2]) {
      assert.deepEqual(acked(n, CLUSTER), [A, B]);
      assert.deepEqual(acked(n, ENDPOINT), [`${A}:8080`, `${B}:8080`]);
    }

    push(8080, 9090);
    const [p1, p2] = await Promise.all(clients.map((c) => c.next()));
    assert.deepEqual(
      p1.resources.map((r) => r.name),
      [B],
    );
    assert.deepEqual(acked(1, ENDPOINT), [`${A}:8080`, `${B}:8080`], "the push is not acknowledged yet");
    await ack(clients[0], 1, p1);
    assert.deepEqual(acked(1, ENDPOINT), [`${A}:8080`, `${B}:9090`]);
    assert.deepEqual(acked(2, ENDPOINT), [`${A}:8080`, `${B}:8080`], "proxy 2 has not acknowledged it");
    await ack(clients[1], 2, p2);
    assert.deepEqual(acked(2, ENDPOINT), [`${A}:8080`, `${B}:9090`]);

    // Proxy 1 refuses the next push: it keeps what it acknowledged before; proxy 2 takes it.
    push(8081, 9091);
    const [r1, r2] = await Promise.all(clients.map((c) => c.next()));
    clients[0].send({ type_url: ENDPOINT, response_nonce: r1.nonce, error_detail: { code: 3, message: "bad endpoint" } });
    await until(() => nacks.includes(`${node(1).id} ${ENDPOINT}`));
    await ack(clients[1], 2, r2);
    assert.deepEqual(acked(1, ENDPOINT), [`${A}:8080`, `${B}:9090`], "a NACK changes nothing the proxy holds");
    assert.deepEqual(acked(2, ENDPOINT), [`${A}:8081`, `${B}:9091`]);

    // A push that changes nothing for proxy 2 (the same endpoints, a new version of the mesh) still lets proxy 1 catch up.
    push(8081, 9091);
    const resent = await clients[0].next();
    assert.deepEqual(resent.resources.map((r) => r.name).sort(), [A, B], "what the refused response carried is sent again");
    await ack(clients[0], 1, resent);
    for (const n of [1, 2]) assert.deepEqual(acked(n, ENDPOINT), [`${A}:8081`, `${B}:9091`]);
    assert.equal(clients[1].pending(), 0, "proxy 2 was sent nothing");

    push(8082, 9091);
    const [q1, q2] = await Promise.all(clients.map((c) => c.next()));
    await ack(clients[0], 1, q1);
    await ack(clients[1], 2, q2);
    for (const n of [1, 2]) {
      assert.deepEqual(acked(n, ENDPOINT), [`${A}:8082`, `${B}:9091`]);
      assert.deepEqual(acked(n, CLUSTER), [A, B], "clusters were never pushed again");
    }
    for (const c of clients) c.end();
  });

  it("a reconnecting proxy has acknowledged only what it was sent", async () => {
    const c = new RawDeltaClient(harness.client, node(3));
    const versions = new Map<string, string>();
    const probe = new RawDeltaClient(harness.client, node(4));
    probe.send({ type_url: ENDPOINT, resource_names_subscribe: [A, B] });
    for (const r of (await probe.next()).resources) versions.set(r.name, r.version);
    probe.end();
    c.send({ type_url: ENDPOINT, resource_names_subscribe: [A, B], initial_resource_versions: { [A]: versions.get(A), [B]: "stale" } });
    const r = await c.next();
    assert.deepEqual(
      r.resources.map((x) => x.name),
      [B],
    );
    await ack(c, 3, r);
    assert.deepEqual(acked(3, ENDPOINT), [`${B}:9091`], "A's version was the proxy's own: never sent, never acknowledged here");
    c.end();
  });
});
