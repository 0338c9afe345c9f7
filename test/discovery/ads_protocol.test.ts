import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import type { AdsObserver, AggregatedDiscoveryService } from "../../host/discovery/ads_server.ts";
import { type AdsHarness, startAdsHarness } from "./support/ads_harness.ts";
import { proxylessResources } from "../../host/discovery/proxyless.ts";
import { CLUSTER, ENDPOINT, LISTENER } from "../../host/discovery/type_urls.ts";
import { unpackAny } from "../../host/wire/envoy_protos.ts";
import { RawAdsClient } from "./support/raw_ads_client.ts";

// The state-of-the-world protocol, spoken by hand over a real gRPC stream:
// subscriptions, ACK, NACK (the proxy keeps its last good version), stale
// nonces, pushes of changed resources only.

const services = (port: number) => [
  { host: "a.foo.svc.cluster.local", port: 80, endpoints: [{ address: "10.0.0.1", port }] },
  { host: "b.foo.svc.cluster.local", port: 80, endpoints: [{ address: "10.0.0.2", port: 8080 }] },
];

describe("ADS state-of-the-world protocol", { timeout: 600_000 }, () => {
  let harness: AdsHarness;
  let client: grpc.Client;
  let ads: AggregatedDiscoveryService;
  const nacks: string[] = [];
  const observer: AdsObserver = { nacked: (_n, type, version, message) => nacks.push(`${type} ${version} ${message}`) };

  before(async () => {
    harness = await startAdsHarness(() => proxylessResources(services(8080)), observer);
    ({ ads, client } = harness);
  });
  after(() => harness?.stop());

  it("a wildcard cluster subscription gets every cluster; a named endpoint subscription gets the named ones", async () => {
    const c = new RawAdsClient(client);
    c.send({ type_url: CLUSTER });
    const clusters = await c.next();
    assert.equal(clusters.type_url, CLUSTER);
    assert.deepEqual(
      clusters.resources.map((r) => unpackAny(r).name),
      ["outbound|80||a.foo.svc.cluster.local", "outbound|80||b.foo.svc.cluster.local"],
    );
    c.send({ type_url: ENDPOINT, resource_names: ["outbound|80||b.foo.svc.cluster.local", "outbound|80||unknown"] });
    const endpoints = await c.next();
    assert.deepEqual(
      endpoints.resources.map((r) => unpackAny(r).cluster_name),
      ["outbound|80||b.foo.svc.cluster.local"],
    );
    c.stream.end();
  });

  it("an ACK is not answered; a NACK is counted and the last good version stands until the resources change", async () => {
    const c = new RawAdsClient(client);
    c.send({ type_url: LISTENER, resource_names: ["a.foo.svc.cluster.local:80"] });
    const first = await c.next();
    c.send({ type_url: LISTENER, resource_names: ["a.foo.svc.cluster.local:80"], version_info: first.version_info, response_nonce: first.nonce });
    ads.push(() => proxylessResources(services(8080))); // same content: nothing to send
    ads.push(() => proxylessResources(services(9090))); // listeners unchanged: nothing either
    c.send({ type_url: ENDPOINT, resource_names: ["outbound|80||a.foo.svc.cluster.local"] });
    const eds = await c.next();
    assert.equal(eds.type_url, ENDPOINT, "only the endpoint subscription was answered");
    c.send({
      type_url: ENDPOINT,
      resource_names: ["outbound|80||a.foo.svc.cluster.local"],
      version_info: "",
      response_nonce: eds.nonce,
      error_detail: { code: 3, message: "bad endpoint" },
    });
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(c.pending(), 0, "nothing resent after a NACK");
    assert.ok(
      nacks.some((n) => n.startsWith(`${ENDPOINT} ${eds.version_info} bad endpoint`)),
      nacks.join("; "),
    );
    const state = ads.state().find((s) => s.subscriptions.get(ENDPOINT)?.nacked);
    assert.equal(state?.subscriptions.get(LISTENER)?.ackedVersion, first.version_info);
    ads.push(() => proxylessResources(services(7070)));
    const fixed = await c.next();
    assert.equal(fixed.type_url, ENDPOINT);
    assert.notEqual(fixed.version_info, eds.version_info);
    const port = (unpackAny(fixed.resources[0]) as any).endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value;
    assert.equal(port, 7070);
    c.stream.end();
  });

  it("a request with a stale nonce is ignored; a changed subscription is answered", async () => {
    const c = new RawAdsClient(client);
    c.send({ type_url: CLUSTER });
    const first = await c.next();
    ads.push(() => proxylessResources(services(6060).slice(0, 1)));
    const second = await c.next();
    assert.equal(second.resources.length, 1);
    c.send({ type_url: CLUSTER, version_info: first.version_info, response_nonce: first.nonce, error_detail: { message: "stale" } });
    c.send({ type_url: ENDPOINT, resource_names: ["outbound|80||a.foo.svc.cluster.local"] });
    const eds = await c.next();
    assert.equal(eds.type_url, ENDPOINT, "the stale NACK was not answered");
    c.send({ type_url: ENDPOINT, resource_names: [], version_info: eds.version_info, response_nonce: eds.nonce });
    const none = await c.next();
    assert.equal(none.resources.length, 0, "unsubscribing from every name answers an empty set");
    c.stream.end();
  });

  it("a push sends only the load assignments that changed (not a whole-state type); after a NACK, all of them", async () => {
    ads.push(() => proxylessResources(services(8080)));
    const names = ["outbound|80||a.foo.svc.cluster.local", "outbound|80||b.foo.svc.cluster.local"];
    const clusterNames = (r: { resources: Array<{ type_url: string; value: Uint8Array }> }) => r.resources.map((x) => unpackAny(x).cluster_name);
    const c = new RawAdsClient(client);
    c.send({ type_url: ENDPOINT, resource_names: names });
    const first = await c.next();
    assert.deepEqual(clusterNames(first), names);
    c.send({ type_url: ENDPOINT, resource_names: names, version_info: first.version_info, response_nonce: first.nonce });
    ads.push(() => proxylessResources(services(5050))); // only a's endpoint moves
    const moved = await c.next();
    assert.deepEqual(clusterNames(moved), [names[0]]);
    assert.notEqual(moved.version_info, first.version_info);
    c.send({ type_url: ENDPOINT, resource_names: names, version_info: "", response_nonce: moved.nonce, error_detail: { code: 3, message: "refused" } });
    await new Promise((r) => setTimeout(r, 200));
    ads.push(() => proxylessResources(services(4040)));
    const whole = await c.next();
    assert.deepEqual(clusterNames(whole), names, "after a refusal the proxy is sent every load assignment again");
    c.stream.end();
  });

  it("ACKs without the node that repeat the subscribed names (as Envoy sends them) are ACKs; a stale one is ignored; changed names subscribe anew", async () => {
    // Such ACKs are read without decoding their names (host/discovery/ads_wire.ts readSotwAck).
    const seen: string[] = [];
    const own = await startAdsHarness(() => proxylessResources(services(8080)), {
      acked: (_n, type, version) => seen.push(`ack ${type} ${version}`),
      expiredNonce: (_n, type) => seen.push(`expired ${type}`),
    });
    try {
      const names = ["outbound|80||a.foo.svc.cluster.local", "outbound|80||b.foo.svc.cluster.local"];
      const c = new RawAdsClient(own.client);
      const ack = (r: { version_info: string; nonce: string }, list = names) =>
        c.send({ node: undefined, type_url: ENDPOINT, resource_names: list, version_info: r.version_info, response_nonce: r.nonce });
      c.send({ type_url: ENDPOINT, resource_names: names });
      const first = await c.next();
      ack(first);
      while (seen.length === 0) await new Promise((r) => setTimeout(r, 10)); // ACKed before the push supersedes it
      own.ads.push(() => proxylessResources(services(5050)));
      const moved = await c.next();
      ack(moved);
      ack(first);
      ack(moved, [names[1]]);
      const narrowed = await c.next();
      assert.deepEqual(
        narrowed.resources.map((x) => unpackAny(x).cluster_name),
        [names[1]],
      );
      ack(narrowed, [names[1]]);
      own.ads.push(() => proxylessResources(services(4040))); // a's endpoint moves: nothing for b's subscription
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(c.pending(), 0);
      assert.deepEqual(seen, [
        `ack ${ENDPOINT} ${first.version_info}`,
        `ack ${ENDPOINT} ${moved.version_info}`,
        `expired ${ENDPOINT}`,
        `ack ${ENDPOINT} ${moved.version_info}`,
        `ack ${ENDPOINT} ${narrowed.version_info}`,
      ]);
      c.stream.end();
    } finally {
      await own.stop();
    }
  });
});
