// `hubs server` as a real process: load shedding, config reload, probes, monitoring, ControlZ, unix sockets, version.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, it } from "node:test";
import { checkRequest, HUBS_BIN, metricsText, metricValue, startHub, tempDir, waitFor, writeConfig } from "./support/hub_process.ts";

const run = promisify(execFile);

async function hubsCommand(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [HUBS_BIN, ...args]);
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

const denyRule = (name: string, path: string) => `apiVersion: config.mesh.io/v1alpha2
kind: HubRule
metadata: {name: ${name}}
spec:
  match:
  - clause:
      request.path: {exact: "${path}"}
  actions:
  - deny: {message: "${name}"}
`;

describe("hubs server: operations", () => {
  it("--loadsheddingMode enforce: sheds load above --maxRequestsPerSecond + --burstSize with UNAVAILABLE, counted", async () => {
    const hub = await startHub(["--loadsheddingMode", "enforce", "--maxRequestsPerSecond", "5", "--burstSize", "10"]);
    try {
      await hub.client.check(checkRequest({ "request.path": "/" })); // connect first; this call takes one token
      const start = performance.now();
      const results = await Promise.all(Array.from({ length: 40 }, () => hub.client.check(checkRequest({ "request.path": "/" }))));
      const refilled = Math.ceil(((performance.now() - start) / 1000) * 5) + 1;
      const ok = results.filter((r) => r.code === 0).length;
      const unavailable = results.filter((r) => r.code === 14);
      assert.equal(ok + unavailable.length, 40);
      assert.ok(ok >= 9 && ok <= 10 + refilled, `the burst (at most 10 tokens) plus at most ${refilled} refilled meanwhile passed, got ${ok}`);
      assert.match(unavailable[0].details, /load shedding/);
      const text = await metricsText(hub);
      assert.equal(metricValue(text, "hub_loadshedding_requests_throttled_total"), unavailable.length);
      assert.equal(
        metricValue(text, 'grpc_server_handled_total{grpc_type="unary",grpc_service="mesh.hub.v1.Hub",grpc_method="Check",grpc_code="UNAVAILABLE"}'),
        unavailable.length,
      );
    } finally {
      await hub.stop();
    }
  });

  it("--loadsheddingMode logonly: what enforce would drop is logged and counted, and served", async () => {
    const hub = await startHub(["--loadsheddingMode", "logonly", "--maxRequestsPerSecond", "1"]);
    try {
      const results = [];
      for (let i = 0; i < 5; i++) results.push(await hub.client.check(checkRequest({ "request.path": "/" })));
      assert.deepEqual(
        results.map((r) => r.code),
        [0, 0, 0, 0, 0],
      );
      const text = await metricsText(hub);
      assert.ok(metricValue(text, "hub_loadshedding_requests_logged_only_total")! >= 3, text);
      assert.equal(metricValue(text, "hub_loadshedding_requests_throttled_total"), 0);
      assert.match(hub.output(), /loadshedding\tlogonly: would throttle \(rateLimit\): more than 1 requests per second/);
    } finally {
      await hub.stop();
    }
  });

  it("--averageLatencyThreshold: enforce drops calls once the average call duration reaches it; disabled (the default) warns that it is inert", async () => {
    // 1ns: any measured call duration is above it; --latencyEnforcementThreshold 0: enforced at any volume.
    const hub = await startHub(["--loadsheddingMode", "enforce", "--averageLatencyThreshold", "1ns", "--latencyEnforcementThreshold", "0"]);
    try {
      const first = await hub.client.check(checkRequest({ "request.path": "/" }));
      assert.equal(first.code, 0, "no call measured yet: the average is 0");
      const next = await hub.client.check(checkRequest({ "request.path": "/" }));
      assert.equal(next.code, 14);
      assert.match(next.details, /^hub is overloaded: observed average latency [\d.]+s exceeds the threshold 0\.000000s; request dropped by load shedding$/);
      assert.equal(metricValue(await metricsText(hub), "hub_loadshedding_requests_throttled_total"), 1);
    } finally {
      await hub.stop();
    }
    const inert = await startHub(["--averageLatencyThreshold", "1ns", "--latencyEnforcementThreshold", "0", "--maxRequestsPerSecond", "1"]);
    try {
      for (let i = 0; i < 3; i++) assert.equal((await inert.client.check(checkRequest({ "request.path": "/" }))).code, 0);
      assert.match(inert.output(), /--maxRequestsPerSecond has no effect: --loadsheddingMode is disabled/);
      assert.match(inert.output(), /--averageLatencyThreshold has no effect: --loadsheddingMode is disabled/);
    } finally {
      await inert.stop();
    }
  });

  it("--loadsheddingMode with another value: exit 2 naming the flag", async () => {
    const r = await hubsCommand(["server", "--loadsheddingMode", "on"]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--loadsheddingMode/);
  });

  it("reloads changed config and keeps a bad file out (its last good version stays)", async () => {
    const dir = tempDir();
    writeConfig(dir, "a.yaml", denyRule("deny-a", "/a"));
    const hub = await startHub(["--configStoreURL", `fs://${dir}`, "--configDefaultNamespace", "ops"]);
    const denied = async (path: string) => (await hub.client.check(checkRequest({ "request.path": path }))).response!.precondition.status?.message;
    try {
      assert.equal(await denied("/a"), "deny-a");
      assert.equal(await denied("/b"), undefined);

      writeConfig(dir, "b.yaml", denyRule("deny-b", "/b"));
      await waitFor("b.yaml applied", async () => (await denied("/b")) === "deny-b" || undefined);

      writeConfig(dir, "a.yaml", denyRule("deny-a", "/a").replace("exact:", "exactly:"));
      await waitFor("the error counted", async () => metricValue(await metricsText(hub), "hub_config_rule_config_errors_total") === 1 || undefined);
      assert.equal(await denied("/a"), "deny-a", "the last good a.yaml is still in force");
      assert.match(
        hub.output(),
        /a\.yaml: HubRule ops\/deny-a: spec\.match\[0\]\.clause\[request\.path\]\.exactly: unknown field in a StringMatch \(known: exact, prefix, regex\); keeping its last good version/,
      );

      writeConfig(dir, "c.yaml", denyRule("deny-c", "/c").replace('{exact: "/c"}', '{regex: "(?=x)"}'));
      await waitFor("the regex error counted", async () => metricValue(await metricsText(hub), "hub_config_rule_config_match_error_total") === 1 || undefined);
      assert.equal(await denied("/c"), undefined, "a file that never decoded contributes nothing");
      assert.match(
        hub.output(),
        /c\.yaml: HubRule ops\/deny-c: spec\.match\[0\]\.clause\[request\.path\]\.regex: regex "\(\?=x\)" is not supported: unsupported regex construct: lookahead/,
      );

      writeConfig(dir, "a.yaml", denyRule("deny-a", "/a2"));
      rmSync(join(dir, "c.yaml"));
      await waitFor("fixed a.yaml applied", async () => (await denied("/a2")) === "deny-a" || undefined);
      assert.equal(await denied("/a"), undefined);
      const text = await metricsText(hub);
      assert.equal(metricValue(text, "hub_config_rule_config_errors_total"), 0);
      assert.equal(metricValue(text, "hub_config_rule_configs_total"), 2);

      const ctrlz = (await (await fetch(`${hub.ctrlzUrl}/json`)).json()) as { rules: Array<{ id: string }>; info: { version: string }; uptimeSeconds: number };
      assert.deepEqual(
        ctrlz.rules.map((r) => r.id),
        ["HubRule ops/deny-a", "HubRule ops/deny-b"],
      );
    } finally {
      assert.equal(await hub.stop(), 0);
    }
  });

  it("touches probe files while healthy; `hubs probe` tells fresh from stale", async () => {
    const dir = tempDir();
    const live = join(dir, "live");
    const ready = join(dir, "ready");
    const hub = await startHub([
      "--livenessProbePath",
      live,
      "--livenessProbeInterval",
      "100ms",
      "--readinessProbePath",
      ready,
      "--readinessProbeInterval",
      "100ms",
    ]);
    try {
      await waitFor("probe files", () => (existsSync(live) && existsSync(ready)) || undefined);
      const first = statSync(ready).mtimeMs;
      await waitFor("readiness touched again", () => statSync(ready).mtimeMs > first || undefined);
      assert.equal((await hubsCommand(["probe", "--probe-path", ready, "--interval", "1s"])).code, 0);
      const missing = await hubsCommand(["probe", "--probe-path", join(dir, "nope"), "--interval", "1s"]);
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /probe failed: probe file .*nope does not exist/);
    } finally {
      assert.equal(await hub.stop(), 0);
    }
    assert.equal(existsSync(ready), false, "a stopped server removes its probe files");
    writeConfig(dir, "stale", "");
    await new Promise((r) => setTimeout(r, 80));
    const stale = await hubsCommand(["probe", "--probe-path", join(dir, "stale"), "--interval", "50ms"]);
    assert.equal(stale.code, 1);
    assert.match(stale.stderr, /is stale: last updated .* ago, more than the interval 50ms/);
  });

  it("serves /version, /healthz and ControlZ log levels; listens on a unix socket", async () => {
    const sock = join(tempDir(), "hub.sock");
    const hub = await startHub(["--address", `unix://${sock}`, "--log_output_level", "default:info,api:warn"]);
    try {
      assert.equal(hub.listeners.grpc, `unix:${sock}`);
      assert.equal((await hub.client.check(checkRequest({ "request.path": "/" }))).code, 0);
      const version = (await (await fetch(`${hub.monitoringUrl}/version`)).json()) as { version: string };
      assert.match(version.version, /^\d+\.\d+\.\d+/);
      const health = await fetch(`${hub.monitoringUrl}/healthz`);
      assert.equal(health.status, 200);
      let levels = (await (await fetch(`${hub.ctrlzUrl}/logging`)).json()) as Record<string, string>;
      assert.equal(levels.api, "warn");
      assert.equal(levels.adapters, "info");
      levels = (await (
        await fetch(`${hub.ctrlzUrl}/logging`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ scope: "api", level: "debug" }),
        })
      ).json()) as Record<string, string>;
      assert.equal(levels.api, "debug");
      const bad = await fetch(`${hub.ctrlzUrl}/logging?scope=nope&level=debug`);
      assert.equal(bad.status, 400);
      const page = await (await fetch(`${hub.ctrlzUrl}/`)).text();
      assert.match(page, /<h2>Log levels<\/h2>/);
      assert.match(page, /<h2>rules<\/h2>/);
    } finally {
      assert.equal(await hub.stop(), 0);
    }
  });

  it("`hubs version` prints text, JSON and YAML, short or full", async () => {
    const full = await hubsCommand(["version", "-o", "json"]);
    assert.equal(full.code, 0);
    const info = JSON.parse(full.stdout) as Record<string, string>;
    assert.deepEqual(Object.keys(info), ["version", "revision", "node_version", "status", "tag"]);
    const short = await hubsCommand(["version", "-s"]);
    assert.equal(short.stdout, `${info.version}\n`);
    const yaml = await hubsCommand(["version", "-o", "yaml", "--short=false"]);
    assert.match(yaml.stdout, /^version: /m);
    assert.match(yaml.stdout, /^node_version: /m);
  });

  it("refuses bad flags and an unsupported config store", async () => {
    const badLevel = await hubsCommand(["server", "--log_output_level", "api:loud"]);
    assert.equal(badLevel.code, 2);
    assert.match(badLevel.stderr, /unknown level "loud"/);
    const store = await hubsCommand(["server", "--address", "tcp://127.0.0.1:0", "--monitoringPort", "0", "--ctrlz_port", "0", "--configStoreURL", "mcps://x"]);
    assert.equal(store.code, 2);
    assert.match(store.stderr, /^hubs server: --configStoreURL "mcps:\/\/x": this hub supports fs:\/\/DIR only/);
    const wait = await hubsCommand([
      "server",
      "--address",
      "tcp://127.0.0.1:0",
      "--monitoringPort",
      "0",
      "--ctrlz_port",
      "0",
      "--configStoreURL",
      "fs:///nonexistent/dir",
      "--configWaitTimeout",
      "200ms",
    ]);
    assert.equal(wait.code, 1);
    assert.match(wait.stderr, /did not appear within the config wait timeout/);
  });
});
