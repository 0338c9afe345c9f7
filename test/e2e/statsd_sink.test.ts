// --metricsdUdpAddress on real processes: a `disco-agent proxy` in front of the echo app sends its
// stats to a real UDP socket standing in for the metrics daemon (statsd).
import assert from "node:assert/strict";
import { createSocket } from "node:dgram";
import { after, before, describe, it } from "node:test";
import { type LocalMesh, startLocalMesh } from "../../host/demo/local_mesh.ts";
import { HUB_RULES, get, sidecarConfig, waitFor } from "./sidecar_support.ts";

describe("disco-agent --metricsdUdpAddress", () => {
  const daemon = createSocket("udp4");
  const received: string[] = [];
  let mesh: LocalMesh;
  before(async () => {
    daemon.on("message", (m) => received.push(...m.toString().split("\n")));
    await new Promise<void>((resolve) => daemon.bind(0, "127.0.0.1", resolve));
    mesh = await startLocalMesh({
      hubConfig: HUB_RULES,
      sidecarConfig: sidecarConfig("FAIL_OPEN"),
      agentArgs: ["--metricsdUdpAddress", `127.0.0.1:${daemon.address().port}`],
    });
  });
  after(async () => {
    await mesh?.stop();
    daemon.close();
  });

  it("sends counter increases and gauges in statsd lines every flush", async () => {
    await waitFor("a first flush", () => (received.some((l) => l === "envoy.listener.inbound.active:0|g") ? true : undefined));
    const res = await get(`${mesh.inboundUrl}/pets/1`);
    assert.equal(res.status, 200, res.body);
    await waitFor("the request counted", () => (received.includes("envoy.listener.inbound.requests:1|c") ? true : undefined));
    const at = received.lastIndexOf("envoy.listener.inbound.requests:1|c");
    // The next flush carries the counter's increase since: 0 (sent, as Envoy sends every used counter).
    await waitFor("the next flush", () => (received.slice(at + 1).includes("envoy.listener.inbound.requests:0|c") ? true : undefined));
    assert.ok(
      received.every((l) => /^envoy\.[\w.:-]+:-?\d+(\.\d+)?\|[cg]$/.test(l)),
      received.find((l) => !/^envoy\.[\w.:-]+:-?\d+(\.\d+)?\|[cg]$/.test(l)),
    );
  });
});
