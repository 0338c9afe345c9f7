// The pod harness on its own (test/support/netns.ts): pods as network
// namespaces on a bridge talk plain HTTP by name, Service addresses reach
// their endpoints through the kube-proxy stand-in, and nothing the harness
// made (namespaces, links, the bridge, /etc/netns folders, the FORWARD rule,
// processes) is left once the network is removed, nor what a dead owner left.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { PodNetwork, harnessLeftovers, installServiceRoutes, sh, sweepLeftovers } from "../../support/netns.ts";
import { curlInPod, startInPod, waitForPodProcess } from "../../support/netns_process.ts";

const HTTPBIN = join(import.meta.dirname, "apps", "httpbin.mjs");

describe("pods as network namespaces on one bridge", () => {
  const net = new PodNetwork();
  after(() => net.remove());

  it("a pod reaches another's app by name and by a Service address, over the bridge", async () => {
    const server = net.addPod("httpbin", "foo");
    const client = net.addPod("sleep", "bar");
    const clusterIp = net.allocateServiceIp();
    net.setHosts([
      { ip: clusterIp, names: ["httpbin.foo", "httpbin.foo.svc", "httpbin.foo.svc.cluster.local"] },
      { ip: server.ip, names: ["httpbin-pod"] },
    ]);
    installServiceRoutes(client, [{ clusterIp, port: 8000, endpoints: [{ ip: server.ip, port: 8080 }] }]);
    const app = startInPod(server, "httpbin", [process.execPath, HTTPBIN, "8080"]);
    await waitForPodProcess(app, "httpbin listening", async () => app.output().includes("listening on 8080"));

    const byPod = await curlInPod(client, "http://httpbin-pod:8080/ip");
    assert.equal(byPod.status, 200, byPod.stderr);
    assert.equal(JSON.parse(byPod.body).origin, client.ip, "the app sees the client pod's own address");

    const byService = await curlInPod(client, "http://httpbin.foo:8000/headers", ["-H", "X-Probe: 1"]);
    assert.equal(byService.status, 200, byService.stderr);
    assert.deepEqual(JSON.parse(byService.body).headers["X-Probe"], ["1"]);
    assert.equal((await curlInPod(client, "http://httpbin.foo:8000/status/418")).status, 418);

    // The host side (where disco-discovery listens) is reachable from a pod at the bridge's address.
    const host = createServer((_req, res) => res.end("host side"));
    await new Promise<void>((r) => host.listen(0, net.gateway, r));
    try {
      const reply = await curlInPod(client, `http://${net.gateway}:${(host.address() as AddressInfo).port}/`);
      assert.deepEqual([reply.status, reply.body], [200, "host side"], reply.stderr);
    } finally {
      host.close();
    }
  });

  it("removing the network leaves nothing behind, processes included", async () => {
    const other = new PodNetwork(1);
    const pod = other.addPod("lonely", "default");
    const app = startInPod(pod, "httpbin", [process.execPath, HTTPBIN, "8080"]);
    await waitForPodProcess(app, "httpbin listening", async () => app.output().includes("listening"));
    assert.ok(harnessLeftovers().some((n) => n.includes("lonely")));
    other.remove();
    await new Promise((r) => app.proc.once("exit", r));
    assert.ok(!app.running());
    assert.deepEqual(
      harnessLeftovers().filter((n) => n.includes("-b1") || n.includes("-h1-") || n.includes("lonely")),
      [],
    );
  });

  it("a sweep removes what a dead owner left and nothing of a live one", () => {
    const dead = spawnSync(process.execPath, ["-e", ""]).pid!;
    const tag = `e2m${dead.toString(36)}`;
    sh("ip", ["netns", "add", `${tag}-ghost.default`]);
    sh("ip", ["link", "add", `${tag}-b9`, "type", "bridge"]);
    mkdirSync(`/etc/netns/${tag}-ghost.default`, { recursive: true });
    const removed = sweepLeftovers();
    assert.ok(removed.includes(`netns ${tag}-ghost.default`), removed.join(", "));
    assert.ok(removed.includes(`link ${tag}-b9`), removed.join(", "));
    assert.ok(!existsSync(`/etc/netns/${tag}-ghost.default`));
    assert.ok(
      harnessLeftovers().some((n) => n === net.bridge),
      "the live network is untouched",
    );
  });
});
