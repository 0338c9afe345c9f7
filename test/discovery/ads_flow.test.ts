import assert from "node:assert/strict";
import http2 from "node:http2";
import { after, describe, it } from "node:test";
import { DEFAULT_PUSH_POLICY } from "../../host/discovery/ads_types.ts";
import { WriteBudget, type WritableStream } from "../../host/discovery/ads_flow.ts";
import { proxylessResources } from "../../host/discovery/proxyless.ts";
import { CLUSTER, ENDPOINT, LISTENER } from "../../host/discovery/type_urls.ts";
import { envoyType, unpackAny } from "../../host/wire/envoy_protos.ts";
import { type AdsHarness, startAdsHarness } from "./support/ads_harness.ts";
import { type AdsResponse, RawAdsClient } from "./support/raw_ads_client.ts";

// Responses beyond the bytes the streams may have in flight together wait
// (host/discovery/ads_flow.ts): each proxy still gets its responses in order,
// and a proxy that stops reading holds the others up only until its write is
// parked.

const ADS = "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources";
const services = (n: number, port = 8080) =>
  Array.from({ length: n }, (_, i) => ({ host: `s${i}.foo.svc.cluster.local`, port: 80, endpoints: [{ address: `10.0.${i >> 8}.${i & 255}`, port }] }));
/** The names of a response's clusters or load assignments. */
const names = (r: AdsResponse) =>
  r.resources.map((a) => {
    const resource = unpackAny(a) as { name?: string; cluster_name?: string };
    return resource.name ?? resource.cluster_name;
  });

describe("ADS responses within a write limit", { timeout: 600_000 }, () => {
  const harnesses: AdsHarness[] = [];
  after(() => Promise.all(harnesses.map((h) => h.stop())));

  it("with room for one response at a time, every proxy still gets each response, in the order it asked, and later pushes", async () => {
    let resources = proxylessResources(services(3));
    const h = await startAdsHarness(() => resources, {}, { ...DEFAULT_PUSH_POLICY, writeLimitBytes: 1 });
    harnesses.push(h);
    const clients = [
      new RawAdsClient(h.client, { id: "sidecar~10.0.0.1~a.foo~foo.svc.cluster.local" }),
      new RawAdsClient(h.client, { id: "sidecar~10.0.0.2~b.foo~foo.svc.cluster.local" }),
    ];
    const eds = ["outbound|80||s1.foo.svc.cluster.local", "outbound|80||s2.foo.svc.cluster.local"];
    for (const c of clients) {
      c.send({ type_url: CLUSTER });
      c.send({ type_url: ENDPOINT, resource_names: eds });
      c.send({ type_url: LISTENER });
    }
    for (const c of clients) {
      const [cds, endpoints, lds] = [await c.next(), await c.next(), await c.next()];
      assert.deepEqual([cds.type_url, endpoints.type_url, lds.type_url], [CLUSTER, ENDPOINT, LISTENER]);
      assert.equal(cds.resources.length, 3);
      assert.deepEqual(names(endpoints), eds);
      c.ack(cds);
      c.ack(endpoints, eds);
      c.ack(lds);
    }
    resources = proxylessResources(services(3, 9090));
    h.ads.push();
    for (const c of clients) {
      const pushed = await c.next();
      assert.equal(pushed.type_url, ENDPOINT);
      assert.deepEqual(names(pushed), eds);
      c.stream.end();
    }
  });

  it("a proxy that does not read holds the others' responses only until its write is parked", async () => {
    // Its clusters (thousands) are more than its HTTP/2 window takes: the write never completes while it does not read.
    const h = await startAdsHarness(() => proxylessResources(services(3000)), {}, { ...DEFAULT_PUSH_POLICY, writeLimitBytes: 1, parkWritesAfterMs: 300 });
    harnesses.push(h);
    const session = http2.connect(`http://${h.address}`);
    session.on("error", () => {});
    try {
      const stuck = session.request({ ":method": "POST", ":path": ADS, "content-type": "application/grpc", te: "trailers" });
      stuck.on("error", () => {});
      const request = envoyType("envoy.service.discovery.v3.DiscoveryRequest");
      const message = request.encode(request.fromObject({ node: { id: "sidecar~10.0.0.9~stuck.foo~foo.svc.cluster.local" }, type_url: CLUSTER })).finish();
      const frame = Buffer.alloc(5 + message.length);
      frame.writeUInt32BE(message.length, 1);
      frame.set(message, 5);
      stuck.write(frame);
      // Nothing reads `stuck`: once its window is full, the response stays in flight.
      const healthy = new RawAdsClient(h.client);
      healthy.send({ type_url: ENDPOINT, resource_names: ["outbound|80||s1.foo.svc.cluster.local"] });
      const answer = await healthy.next();
      assert.deepEqual(names(answer), ["outbound|80||s1.foo.svc.cluster.local"]);
      healthy.stream.end();
    } finally {
      session.destroy();
    }
  });
});

/** A stream whose writes complete when the test says so. */
class HeldStream implements WritableStream {
  readonly written: string[] = [];
  private readonly done: Array<() => void> = [];
  write(bytes: Buffer, done: () => void): void {
    this.written.push(bytes.toString());
    this.done.push(done);
  }
  /** Completes the oldest write (its callback runs as Node's streams run it: on a later tick). */
  complete(): void {
    const d = this.done.shift()!;
    process.nextTick(d);
  }
}
const tick = () => new Promise((r) => setImmediate(r));

describe("WriteBudget", () => {
  it("writes at once within the limit; past it, builds each response only when its turn comes, taking turns between connections", async () => {
    const budget = new WriteBudget(9, 60_000);
    const [a1, a2, b] = [new HeldStream(), new HeldStream(), new HeldStream()];
    const fail = () => assert.fail("no write fails");
    const [wa1, wa2, wb] = [budget.writer(a1, "conn-a", fail), budget.writer(a2, "conn-a", fail), budget.writer(b, "conn-b", fail)];
    const built: string[] = [];
    const response = (text: string) => () => (built.push(text), Buffer.from(text));
    wa1.write(response("a1-first-"), "x"); // 9 bytes: written, the limit reached
    wa1.write(response("a1-second"), "x"); // waits
    wa2.write(response("a2-first-"), "x");
    wb.write(response("b-first--"), "x");
    assert.deepEqual(built, ["a1-first-"]);
    assert.deepEqual(budget.usage, { inFlight: 9, waiting: 3 });
    a1.complete();
    await tick();
    // conn-a's first waiting response, then conn-b's turn, then conn-a's next.
    assert.deepEqual(built, ["a1-first-", "a1-second"]);
    a1.complete();
    await tick();
    assert.deepEqual(built, ["a1-first-", "a1-second", "b-first--"]);
    wb.close(); // conn-b's stream is gone: its write in flight stops counting
    await tick();
    assert.deepEqual(built, ["a1-first-", "a1-second", "b-first--", "a2-first-"]);
    assert.deepEqual(a1.written, ["a1-first-", "a1-second"]);
    assert.deepEqual(a2.written, ["a2-first-"]);
  });

  it("parks a write in flight too long, and drops what a closed stream had waiting", async () => {
    let now = 0;
    const budget = new WriteBudget(1, 1_000, () => now);
    const [stuck, other, gone] = [new HeldStream(), new HeldStream(), new HeldStream()];
    const fail = () => assert.fail("no write fails");
    const [ws, wo, wg] = [budget.writer(stuck, "s", fail), budget.writer(other, "o", fail), budget.writer(gone, "g", fail)];
    ws.write(() => Buffer.from("never done"), "x");
    wg.write(() => Buffer.from("dropped"), "x");
    wo.write(() => Buffer.from("later"), "x");
    wg.close();
    now = 999;
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(other.written, []);
    now = 1_001; // the stuck write has been in flight past parkAfterMs: the next waiting response goes
    await new Promise((r) => setTimeout(r, 1_100));
    assert.deepEqual(other.written, ["later"]);
    assert.deepEqual(gone.written, []);
    assert.deepEqual(budget.usage, { inFlight: 5, waiting: 0 });
  });
});
