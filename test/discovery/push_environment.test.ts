// disco-discovery's push variables, observed on the real daemon over real
// ADS streams (our sidecars' document subscription, as disco-agent makes it):
// DISCO_SCOPE_PUSHES (a policy change in namespace bar pushes nothing to a
// proxy of foo; off, everyone is pushed), DISCO_PUSH_THROTTLE (every proxy is
// still reached through the push queue), DISCO_ENABLE_EDS_DEBOUNCE=false (an
// Endpoints change is pushed at once while a 10-minute debounce holds a
// policy change), POD_NAME/POD_NAMESPACE in control_plane,
// TERMINATION_DRAIN_DURATION_SECONDS (open streams kept while draining). Pushes are counted
// from the daemon's /metrics and /debug/syncz.
import assert from "node:assert/strict";
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { CONFIG_DOCUMENT } from "../../host/discovery/type_urls.ts";
import { type Daemon, tempDir } from "../support/processes.ts";
import { type DiscoveryListening, LoopbackDiscoveries } from "./support/loopback_discovery.ts";
import { type AdsResponse, RawAdsClient } from "./support/raw_ads_client.ts";
import { until } from "./support/in_process.ts";

const policy = (namespace: string, path: string) => `apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: {name: deny, namespace: ${namespace}}
spec: {action: DENY, rules: [{to: [{operation: {paths: ["${path}"]}}]}]}
`;
const endpoints = (ip: string) => `apiVersion: v1
kind: Service
metadata: {name: db, namespace: foo}
spec: {ports: [{name: tcp-db, port: 5432}]}
---
apiVersion: v1
kind: Endpoints
metadata: {name: db, namespace: foo}
subsets: [{addresses: [{ip: ${ip}}], ports: [{name: tcp-db, port: 5432}]}]
`;

/** Replaces a file of the watched folder in one step (the watcher never reads it half-written). */
function replaceFile(path: string, text: string): void {
  const staged = join(tempDir("disco-push-staged-"), "next.yaml");
  writeFileSync(staged, text);
  renameSync(staged, path);
}

const discoveries = new LoopbackDiscoveries();

async function start(env: Record<string, string>): Promise<{ dir: string; d: Daemon<DiscoveryListening>; channel: grpc.Client }> {
  const dir = tempDir("disco-push-");
  writeFileSync(join(dir, "foo.yaml"), policy("foo", "/foo"));
  writeFileSync(join(dir, "bar.yaml"), policy("bar", "/bar"));
  writeFileSync(join(dir, "endpoints.yaml"), endpoints("10.0.0.1"));
  const { d, channel } = await discoveries.start(dir, env);
  return { dir, d, channel };
}

/** A sidecar of `namespace` subscribed to the configuration documents (ACKing each response). */
async function sidecar(channel: grpc.Client, namespace: string): Promise<{ client: RawAdsClient; first: AdsResponse }> {
  const client = new RawAdsClient(channel, { id: `sidecar~10.0.0.1~a.${namespace}~${namespace}.svc.cluster.local`, user_agent_name: "disco-agent" });
  client.send({ type_url: CONFIG_DOCUMENT });
  const first = await client.next();
  client.ack(first);
  return { client, first };
}

const names = (r: AdsResponse) => r.resources.map((x) => Buffer.from(x.value).toString("utf8")).join("\n");
async function metric(d: Daemon<DiscoveryListening>, series: string): Promise<number | undefined> {
  const text = await (await fetch(`http://${d.listening.monitoring}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
async function syncz(d: Daemon<DiscoveryListening>): Promise<Array<{ proxy: string; sent: string | null; acked: string | null }>> {
  return (await (await fetch(`http://${d.listening.http}/debug/syncz`)).json()) as Array<{ proxy: string; sent: string | null; acked: string | null }>;
}
const PUSHES = 'disco_xds_pushes_total{type="config"}';

describe("disco-discovery push variables (real daemon)", { timeout: 600_000 }, () => {
  after(async () => {
    await discoveries.stop();
  });

  it("DISCO_SCOPE_PUSHES (default): a policy change in bar is pushed to bar's proxy only; POD_NAME in control_plane", async () => {
    const { dir, d, channel } = await start({ POD_NAME: "discovery-7f9c", POD_NAMESPACE: "mesh-system" });
    const foo = await sidecar(channel, "foo");
    const bar = await sidecar(channel, "bar");
    assert.ok(!names(foo.first).includes("/bar"), "bar's policy is out of foo's view");
    assert.ok(names(bar.first).includes("/bar"));
    const identifier = JSON.parse((foo.first as unknown as { control_plane: { identifier: string } }).control_plane.identifier) as Record<string, unknown>;
    assert.equal(identifier.Component, "disco-discovery");
    assert.equal(identifier.ID, "discovery-7f9c");
    assert.equal(identifier.Namespace, "mesh-system");
    const fooVersion = foo.first.version_info;
    assert.equal(await metric(d, PUSHES), 2);

    replaceFile(join(dir, "bar.yaml"), policy("bar", "/bar-changed"));
    const pushed = await bar.client.next();
    assert.ok(names(pushed).includes("/bar-changed"));
    bar.client.ack(pushed);
    // The push that reached bar was decided for every proxy in the same turn (throttle 100 > 2).
    const state = await until("bar's ACK of the new version", async () => {
      const s = await syncz(d);
      return s.find((e) => e.proxy.includes("~a.bar~"))?.acked === pushed.version_info ? s : undefined;
    });
    assert.equal(state.find((e) => e.proxy.includes("~a.foo~"))?.sent, fooVersion, "foo was not pushed");
    assert.equal(await metric(d, PUSHES), 3, "one push: bar's");
    assert.equal(foo.client.pending(), 0);
  });

  it("DISCO_SCOPE_PUSHES=false, DISCO_PUSH_THROTTLE=1: the same change is pushed to every proxy, through the push queue", async () => {
    const { dir, d, channel } = await start({ DISCO_SCOPE_PUSHES: "false", DISCO_PUSH_THROTTLE: "1" });
    const foo = await sidecar(channel, "foo");
    const bar = await sidecar(channel, "bar");
    assert.ok(names(foo.first).includes("/bar"), "unscoped: every document");
    replaceFile(join(dir, "bar.yaml"), policy("bar", "/bar-changed"));
    const [toFoo, toBar] = await Promise.all([foo.client.next(), bar.client.next()]);
    assert.ok(names(toFoo).includes("/bar-changed"));
    assert.ok(names(toBar).includes("/bar-changed"));
    assert.equal(await metric(d, PUSHES), 4);
    assert.equal(await metric(d, "disco_proxy_queue_time_count"), 2, "each proxy waited its turn once");
  });

  it("DISCO_ENABLE_EDS_DEBOUNCE=false: an Endpoints change is pushed at once while a 10-minute debounce holds a policy change", async () => {
    const { dir, d, channel } = await start({ DISCO_ENABLE_EDS_DEBOUNCE: "false", DISCO_DEBOUNCE_AFTER: "10m", DISCO_DEBOUNCE_MAX: "10m" });
    const foo = await sidecar(channel, "foo");
    replaceFile(join(dir, "endpoints.yaml"), endpoints("10.0.0.2"));
    const pushed = await foo.client.next();
    assert.ok(names(pushed).includes("10.0.0.2"));
    foo.client.ack(pushed);
    assert.equal(await metric(d, 'disco_push_triggers_total{type="endpoint"}'), 1);
    replaceFile(join(dir, "foo.yaml"), policy("foo", "/foo-changed"));
    await until("the policy change applied (a new configuration version)", async () =>
      (await metric(d, 'disco_inbound_updates_total{type="config"}')) === 3 ? true : undefined,
    );
    assert.equal(await metric(d, 'disco_push_triggers_total{type="config"}'), 0, "the policy change waits for the debounce");
    assert.equal(foo.client.pending(), 0);
  });

  it("TERMINATION_DRAIN_DURATION_SECONDS: after SIGTERM an open xDS stream is kept for the drain; when it ends, the daemon exits 0", async () => {
    const { d, channel } = await start({ TERMINATION_DRAIN_DURATION_SECONDS: "600" });
    const foo = await sidecar(channel, "foo");
    const stopped = d.stop("SIGTERM");
    await new Promise((r) => setTimeout(r, 2000)); // far inside the 600 s drain
    assert.equal(d.proc.exitCode, null, "still draining while the proxy's stream is open");
    foo.client.stream.end();
    assert.equal(await stopped, 0, d.output());
  });
});
