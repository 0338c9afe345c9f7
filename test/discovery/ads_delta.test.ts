import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import type { AdsObserver, AggregatedDiscoveryService } from "../../host/discovery/ads_server.ts";
import { type AdsHarness, startAdsHarness } from "./support/ads_harness.ts";
import { proxylessResources, type XdsService } from "../../host/discovery/proxyless.ts";
import { CLUSTER, ENDPOINT } from "../../host/discovery/type_urls.ts";
import { unpackAny } from "../../host/wire/envoy_protos.ts";
import { type DeltaResponse, RawDeltaClient } from "./support/raw_delta_client.ts";
import { decodeAnyStrict, envoyRoot } from "../support/envoy_protos.ts";

// The incremental (Delta) protocol, Envoy's DELTA_GRPC, spoken by hand over
// a real gRPC stream: a wildcard and a named subscription, only the changed
// resources pushed, removals named, what a NACKed response carried sent
// again with the next push, and a reconnecting proxy's
// initial_resource_versions sparing it what it has.

const A = "outbound|80||a.foo.svc.cluster.local";
const B = "outbound|80||b.foo.svc.cluster.local";
const ENVOY = { id: "sidecar~10.0.0.1~a.foo~foo.svc.cluster.local", user_agent_name: "envoy" };
class DeltaClient extends RawDeltaClient {
  constructor(client: grpc.Client) {
    super(client, ENVOY);
  }
}

const services = (bPort: number, withB = true, aPort = 8080): XdsService[] => [
  { host: "a.foo.svc.cluster.local", port: 80, endpoints: [{ address: "10.0.0.1", port: aPort }] },
  ...(withB ? [{ host: "b.foo.svc.cluster.local", port: 80, endpoints: [{ address: "10.0.0.2", port: bPort }] }] : []),
];
const names = (r: DeltaResponse) => r.resources.map((x) => x.name).sort();

/** Polls until `done` (every 10 ms, at most 90 s). */
async function until(done: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 90_000; !done(); ) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("ADS incremental (Delta) protocol", { timeout: 600_000 }, () => {
  let harness: AdsHarness;
  let client: grpc.Client;
  let ads: AggregatedDiscoveryService;
  const events: string[] = [];
  const observer: AdsObserver = { acked: (_n, type) => events.push(`ack ${type}`), nacked: (_n, type, _v, message) => events.push(`nack ${type} ${message}`) };

  before(async () => {
    harness = await startAdsHarness(() => proxylessResources(services(8080)), observer);
    ({ ads, client } = harness);
  });
  after(() => harness?.stop());

  it("subscriptions, changed resources only, removals, and what a NACKed response carried sent again", async () => {
    const c = new DeltaClient(client);
    c.send({ type_url: CLUSTER });
    const clusters = await c.next();
    assert.deepEqual(names(clusters), [A, B], "the first request with no names: every cluster (a wildcard type)");
    for (const r of clusters.resources) assert.equal(decodeAnyStrict(envoyRoot(), r.resource).object.name, r.name);
    c.send({ type_url: CLUSTER, response_nonce: clusters.nonce });
    c.send({ type_url: ENDPOINT, resource_names_subscribe: [B, "outbound|80||nowhere"] });
    const endpoints = await c.next();
    assert.deepEqual(names(endpoints), [B]);
    assert.deepEqual(endpoints.removed_resources, ["outbound|80||nowhere"], "a name that does not exist is said to be absent");
    c.send({ type_url: ENDPOINT, response_nonce: endpoints.nonce });

    ads.push(() => proxylessResources(services(9090)));
    const changed = await c.next();
    assert.equal(changed.type_url, ENDPOINT, "clusters did not change: only the endpoint subscription is pushed");
    assert.deepEqual(names(changed), [B]);
    assert.equal(unpackAny(changed.resources[0].resource).cluster_name, B);
    assert.notEqual(changed.resources[0].version, endpoints.resources[0].version);
    c.send({ type_url: ENDPOINT, response_nonce: changed.nonce });

    c.send({ type_url: ENDPOINT, resource_names_subscribe: [A] });
    const widened = await c.next();
    assert.deepEqual(names(widened), [A], "a new name: only it is sent");
    c.send({ type_url: ENDPOINT, response_nonce: widened.nonce });

    // A and B change together and the proxy refuses that response: it still holds their earlier versions.
    ads.push(() => proxylessResources(services(9091, true, 8081)));
    const refused = await c.next();
    assert.deepEqual(names(refused), [A, B]);
    c.send({ type_url: ENDPOINT, response_nonce: refused.nonce, error_detail: { code: 3, message: "bad endpoint" } });
    await until(() => events.includes(`nack ${ENDPOINT} bad endpoint`));
    assert.equal(c.pending(), 0, "a NACK is not answered: the proxy keeps what it holds");
    ads.push(() => proxylessResources(services(9092, true, 8081)));
    const after = await c.next();
    assert.deepEqual(names(after), [A, B], "A is sent again: the proxy never took its refused version");
    assert.match(
      JSON.stringify(unpackAny(after.resources.find((r) => r.name === B)!.resource)),
      /9092/,
      "the next response is the next push, not an answer to the NACK",
    );
    c.send({ type_url: ENDPOINT, response_nonce: after.nonce });

    ads.push(() => proxylessResources(services(9092, false, 8081)));
    const removals = [await c.next(), await c.next()].sort((x, y) => x.type_url.localeCompare(y.type_url));
    assert.deepEqual(
      removals.map((r) => [r.type_url, r.resources.length, r.removed_resources]),
      [
        [CLUSTER, 0, [B]],
        [ENDPOINT, 0, [B]],
      ],
    );
    assert.ok(events.includes(`nack ${ENDPOINT} bad endpoint`) && events.includes(`ack ${CLUSTER}`), events.join("; "));
    c.end();
  });

  it("a reconnecting proxy's initial_resource_versions: only what it lacks or holds in another version", async () => {
    ads.push(() => proxylessResources(services(8080)));
    const first = new DeltaClient(client);
    first.send({ type_url: CLUSTER });
    const all = await first.next();
    first.end();
    const held = Object.fromEntries(all.resources.map((r) => [r.name, r.name === A ? r.version : "stale"]));
    const again = new DeltaClient(client);
    again.send({ type_url: CLUSTER, initial_resource_versions: held });
    const r = await again.next();
    assert.deepEqual(names(r), [B], "A is held in its current version");
    again.end();
  });
});
