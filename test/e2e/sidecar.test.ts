import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type LocalMesh, startLocalMesh } from "../../host/demo/local_mesh.ts";
import { HUB_RULES, accessLogLines, get, sidecarConfig, stats, waitFor } from "./sidecar_support.ts";

// Real processes on loopback: `hubs server`, the echo app, and `disco-agent
// proxy` running build/filter.wasm in front of it.
describe("sidecar end to end (FAIL_CLOSE)", () => {
  let mesh: LocalMesh;
  before(async () => {
    mesh = await startLocalMesh({ hubConfig: HUB_RULES, sidecarConfig: sidecarConfig("FAIL_CLOSE") });
  });
  after(async () => {
    await mesh?.stop();
  });

  it("forwards an allowed request to the app with the filter's decisions applied", async () => {
    const res = await get(`${mesh.inboundUrl}/pets/42?key=alice`, { "x-drop-me": "1", connection: "close, x-drop-me", "x-mesh-attributes": "Zm9yZ2Vk" });
    assert.equal(res.status, 200, res.body);
    const echo = JSON.parse(res.body);
    assert.equal(echo.path, "/pets/42?key=alice");
    assert.equal(echo.headers["x-drop-me"], undefined, "fields named by Connection are hop-by-hop");
    const forwarded = echo.headers["x-mesh-attributes"];
    assert.ok(forwarded && forwarded !== "Zm9yZ2Vk", "the client's header is replaced by the filter's");
    assert.ok(Buffer.from(forwarded, "base64").toString("latin1").includes("kubernetes://petstore-v1.demo"));
  });

  it("a hub denial answers 403 with the hub's reason", async () => {
    const res = await get(`${mesh.inboundUrl}/admin/users`);
    assert.equal(res.status, 403);
    assert.equal(res.body, "PERMISSION_DENIED:admins only");
    assert.equal(
      mesh.app.seen.some((r) => r.path.startsWith("/admin")),
      false,
      "denied requests never reach the app",
    );
  });

  it("an exhausted quota answers 429", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 15; i++) statuses.push((await get(`${mesh.inboundUrl}/limited/${i % 2}`)).status);
    assert.ok(statuses.includes(200), statuses.join(","));
    assert.ok(statuses.includes(429), statuses.join(","));
    assert.ok(statuses.filter((s) => s === 200).length < 15);
  });

  it("check cache hits avoid remote calls, visible in /stats", async () => {
    for (let i = 0; i < 6; i++) assert.equal((await get(`${mesh.inboundUrl}/pets/7`)).status, 200);
    const s = await waitFor("published counters", async () => {
      const m = await stats(mesh.adminUrl);
      return (m.get("hub_client.total_check_cache_hits") ?? 0) >= 5 ? m : undefined;
    });
    assert.ok(s.get("hub_client.total_remote_check_calls")! < s.get("hub_client.total_check_calls")!);
    assert.ok(s.get("listener.inbound.requests")! >= 6);
  });

  it("reports reach the hub in batches", async () => {
    await get(`${mesh.inboundUrl}/pets/99`);
    const lines = await waitFor("access log lines", () => {
      const l = accessLogLines(mesh.accessLog);
      return l.some((x) => x.attributes["request.path"]?.stringValue === "/pets/99") ? l : undefined;
    });
    const entry = lines.find((x) => x.attributes["request.path"]?.stringValue === "/pets/99")!;
    assert.deepEqual(entry.attributes["response.code"], { int64Value: "200" });
    assert.deepEqual(entry.attributes["api.operation"], { stringValue: "getPet" });
    const s = await stats(mesh.adminUrl);
    assert.ok(s.get("hub_client.total_remote_report_calls")! < s.get("hub_client.total_report_calls")!, "fewer report calls than reported requests");
  });

  it("a bad configuration file is reported and the last good one keeps serving", async () => {
    const before = (await stats(mesh.adminUrl)).get("config.errors") ?? 0;
    writeFileSync(
      join(mesh.sidecarConfigDir, "zz-bad.yaml"),
      "apiVersion: config.mesh.io/v1alpha2\nkind: HTTPAPISpec\nmetadata: {name: bad, namespace: demo}\nspec: {patterns: [{uriTemplate: '/a//b'}]}\n",
    );
    await waitFor("the config error to be counted", async () => (((await stats(mesh.adminUrl)).get("config.errors") ?? 0) > before ? true : undefined));
    assert.match(mesh.sidecar.output(), /zz-bad\.yaml: HTTPAPISpec demo\/bad: spec\.patterns\[0\]\.uriTemplate/);
    assert.equal((await get(`${mesh.inboundUrl}/admin`)).status, 403);
    const echo = JSON.parse((await get(`${mesh.inboundUrl}/pets/5`)).body);
    assert.equal(echo.path, "/pets/5");
  });

  it("with the hub stopped, FAIL_CLOSE answers 503 after the retries, in bounded time", async () => {
    assert.equal(await mesh.hub.stop(), 0);
    const started = Date.now();
    const res = await get(`${mesh.inboundUrl}/pets/fresh-${Date.now()}`);
    const elapsed = Date.now() - started;
    assert.equal(res.status, 503);
    assert.match(res.body, /^UNAVAILABLE:/);
    // Two retries waiting at most 0.2 s each, plus 5 s of margin for a loaded machine.
    assert.ok(elapsed < 6000, `took ${elapsed} ms`);
    const s = await stats(mesh.adminUrl);
    assert.ok((s.get("hub_transport.retries") ?? 0) >= 2, "two retries of the failed call");
  });
});

describe("sidecar end to end (FAIL_OPEN, drain)", () => {
  let mesh: LocalMesh;
  before(async () => {
    mesh = await startLocalMesh({ hubConfig: HUB_RULES, sidecarConfig: sidecarConfig("FAIL_OPEN"), agentEnv: { TERMINATION_DRAIN_DURATION_SECONDS: "5" } });
  });
  after(async () => {
    await mesh?.stop();
  });

  it("with the hub stopped, FAIL_OPEN delivers the request", async () => {
    await mesh.hub.stop();
    const res = await get(`${mesh.inboundUrl}/pets/open-${Date.now()}`);
    assert.equal(res.status, 200);
  });

  it("SIGTERM lets requests in flight finish, then exits 0", async () => {
    const slow = get(`${mesh.inboundUrl}/pets/slow?delay=700`);
    await waitFor("the slow request to reach the app", () => (mesh.app.seen.some((r) => r.path.startsWith("/pets/slow")) ? true : undefined));
    const exit = mesh.sidecar.stop("SIGTERM");
    const res = await slow;
    assert.equal(res.status, 200);
    assert.equal(await exit, 0);
    await assert.rejects(get(`${mesh.inboundUrl}/pets/1`), /ECONNREFUSED|ECONNRESET/);
  });
});
