// Upstream's proxy node id, built by the agent and Envoy's bootstrap and read
// by the control plane through one pair of functions.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { buildNodeId, parseNodeId, workloadNodeId } from "../../host/mesh/node_id.ts";

describe("node id: sidecar~IP~POD.NS~NS.svc.DOMAIN", () => {
  it("a workload's id, and its parts read back", () => {
    const id = workloadNodeId({ ip: "10.244.0.13", pod: "reviews-v1-7d8f9c", namespace: "default", domain: "cluster.local" });
    assert.equal(id, "sidecar~10.244.0.13~reviews-v1-7d8f9c.default~default.svc.cluster.local");
    assert.deepEqual(parseNodeId(id), {
      type: "sidecar",
      ip: "10.244.0.13",
      proxyId: "reviews-v1-7d8f9c.default",
      dnsDomain: "default.svc.cluster.local",
      pod: "reviews-v1-7d8f9c",
      namespace: "default",
    });
    assert.equal(buildNodeId(parseNodeId(id)!), id);
  });

  it("a gateway's type; a proxy id without a dot takes the namespace from the DNS domain; other ids are not node ids", () => {
    const gw = parseNodeId(workloadNodeId({ type: "router", ip: "10.0.0.20", pod: "ingress-1", namespace: "shop", domain: "example.org" }))!;
    assert.deepEqual([gw.type, gw.namespace, gw.dnsDomain], ["router", "shop", "shop.svc.example.org"]);
    assert.deepEqual(
      [parseNodeId("sidecar~10.0.0.1~custom~foo.svc.cluster.local")?.pod, parseNodeId("sidecar~10.0.0.1~custom~foo.svc.cluster.local")?.namespace],
      ["custom", "foo"],
    );
    assert.equal(parseNodeId("a.foo"), undefined);
    assert.equal(parseNodeId("sidecar~10.0.0.1~a.foo"), undefined);
  });
});
