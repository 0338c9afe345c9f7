// disco-discovery's pushes to incremental (DeltaAggregatedResources) Envoy
// sidecars, observed on the real daemon over real gRPC streams with Envoy's
// v3 messages: DISCO_SCOPE_PUSHES (a policy change in namespace bar reaches
// bar's proxy only, and carries only the listeners that changed),
// DISCO_PUSH_THROTTLE (every proxy still reached through the push queue,
// each once), DISCO_DEBOUNCE_AFTER/_MAX (a burst of changes is one push,
// made by DEBOUNCE_MAX while DEBOUNCE_AFTER would wait ten minutes) and
// DISCO_ENABLE_EDS_DEBOUNCE (default: an Endpoints change waits for the
// debounce like any other). Pushes are counted from /metrics.
import assert from "node:assert/strict";
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { LISTENER } from "../../host/discovery/type_urls.ts";
import { type Daemon, tempDir } from "../support/processes.ts";
import { type DiscoveryListening, LoopbackDiscoveries } from "./support/loopback_discovery.ts";
import { type DeltaResponse, RawDeltaClient } from "./support/raw_delta_client.ts";
import { until } from "./support/in_process.ts";

const policy = (namespace: string, path: string) => `apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: {name: deny, namespace: ${namespace}}
spec: {action: DENY, rules: [{to: [{operation: {paths: ["${path}"]}}]}]}
`;
const service = (namespace: string, ip: string) => `apiVersion: v1
kind: Service
metadata: {name: web, namespace: ${namespace}}
spec: {selector: {app: web}, ports: [{name: http, port: 80, targetPort: 8080}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: ${namespace}, labels: {app: web}}
spec: {containers: [{name: web, ports: [{containerPort: 8080}]}]}
status: {podIP: ${ip}}
---
apiVersion: v1
kind: Endpoints
metadata: {name: web, namespace: ${namespace}}
subsets: [{addresses: [{ip: ${ip}, targetRef: {kind: Pod, name: web, namespace: ${namespace}}}], ports: [{name: http, port: 8080}]}]
`;

/** Replaces a file of the watched folder in one step (the watcher never reads it half-written). */
function replaceFile(path: string, text: string): void {
  const staged = join(tempDir("disco-delta-staged-"), "next.yaml");
  writeFileSync(staged, text);
  renameSync(staged, path);
}

const discoveries = new LoopbackDiscoveries();

async function start(env: Record<string, string>): Promise<{ dir: string; d: Daemon<DiscoveryListening>; channel: grpc.Client }> {
  const dir = tempDir("disco-delta-");
  for (const [ns, ip] of [
    ["foo", "10.0.0.1"],
    ["bar", "10.0.0.2"],
  ]) {
    writeFileSync(join(dir, `${ns}-policy.yaml`), policy(ns, `/${ns}`));
    writeFileSync(join(dir, `${ns}-web.yaml`), service(ns, ip));
  }
  const { d, channel } = await discoveries.start(dir, env);
  return { dir, d, channel };
}

/** An Envoy sidecar of `namespace` on an incremental stream, subscribed to its listeners (a wildcard type) and ACKing the first response. */
async function sidecar(channel: grpc.Client, namespace: string, ip: string): Promise<{ client: RawDeltaClient; first: DeltaResponse }> {
  const client = new RawDeltaClient(channel, { id: `sidecar~${ip}~web.${namespace}~${namespace}.svc.cluster.local`, user_agent_name: "envoy" });
  client.send({ type_url: LISTENER });
  const first = await client.next();
  assert.equal(first.type_url, LISTENER);
  client.ack(first);
  return { client, first };
}

const text = (r: DeltaResponse) => r.resources.map((x) => Buffer.from(x.resource.value).toString("latin1")).join("\n");
async function metric(d: Daemon<DiscoveryListening>, series: string): Promise<number> {
  const body = await (await fetch(`http://${d.listening.monitoring}/metrics`)).text();
  const line = body.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}
const LDS = 'disco_xds_pushes_total{type="lds"}';

describe("disco-discovery pushes to incremental Envoy sidecars (real daemon)", { timeout: 600_000 }, () => {
  after(async () => {
    await discoveries.stop();
  });

  it("DISCO_SCOPE_PUSHES (default): bar's policy change reaches bar's proxy only, with only the listeners that changed", async () => {
    const { dir, d, channel } = await start({});
    const foo = await sidecar(channel, "foo", "10.0.0.1");
    const bar = await sidecar(channel, "bar", "10.0.0.2");
    assert.ok(text(bar.first).includes("/bar") && !text(foo.first).includes("/bar"), "bar's policy is in bar's view only");
    assert.equal(await metric(d, LDS), 2);

    replaceFile(join(dir, "bar-policy.yaml"), policy("bar", "/bar-changed"));
    const pushed = await bar.client.next();
    assert.equal(pushed.type_url, LISTENER);
    assert.ok(text(pushed).includes("/bar-changed"));
    assert.ok(
      pushed.resources.length > 0 && pushed.resources.length < bar.first.resources.length,
      `only the changed listeners: ${pushed.resources.map((r) => r.name).join(", ")} of ${bar.first.resources.length}`,
    );
    assert.deepEqual(pushed.removed_resources, []);
    const unchanged = new Map(bar.first.resources.map((r) => [r.name, r.version]));
    for (const r of pushed.resources) assert.notEqual(unchanged.get(r.name), r.version, `${r.name} is sent in a new version`);
    bar.client.ack(pushed);
    await until("bar's push counted", async () => ((await metric(d, LDS)) === 3 ? true : undefined));
    assert.equal(await metric(d, 'disco_push_triggers_total{type="config"}'), 1);
    assert.equal(foo.client.pending(), 0, "foo was pushed nothing");
  });

  it("DISCO_PUSH_THROTTLE=1: a change in every view reaches each proxy once, through the push queue", async () => {
    const { dir, d, channel } = await start({ DISCO_PUSH_THROTTLE: "1" });
    const proxies = [await sidecar(channel, "foo", "10.0.0.1"), await sidecar(channel, "bar", "10.0.0.2"), await sidecar(channel, "foo", "10.0.0.3")];
    const queued = await metric(d, "disco_proxy_queue_time_count");
    replaceFile(join(dir, "root-policy.yaml"), policy("mesh-system", "/everyone"));
    const pushed = await Promise.all(proxies.map((p) => p.client.next()));
    for (const r of pushed) assert.ok(text(r).includes("/everyone"));
    await until("three pushes counted", async () => ((await metric(d, LDS)) === 6 ? true : undefined));
    assert.equal((await metric(d, "disco_proxy_queue_time_count")) - queued, 3, "each proxy waited its turn once");
    for (const p of proxies) assert.equal(p.client.pending(), 0, "one push each");
  });

  it("DISCO_DEBOUNCE_MAX: two changes under a ten-minute DISCO_DEBOUNCE_AFTER are one push, made by DEBOUNCE_MAX", async () => {
    const { dir, d, channel } = await start({ DISCO_DEBOUNCE_AFTER: "10m", DISCO_DEBOUNCE_MAX: "3s" });
    const bar = await sidecar(channel, "bar", "10.0.0.2");
    replaceFile(join(dir, "bar-policy.yaml"), policy("bar", "/first"));
    replaceFile(join(dir, "bar-more.yaml"), policy("bar", "/second").replace("name: deny", "name: deny-more"));
    const pushed = await bar.client.next();
    assert.ok(text(pushed).includes("/second"), "the push holds the burst's last change");
    assert.equal(await metric(d, 'disco_push_triggers_total{type="config"}'), 1, "one push for the burst");
    assert.equal(bar.client.pending(), 0);
  });

  it("DISCO_ENABLE_EDS_DEBOUNCE (default true): an Endpoints change waits for the debounce like a config change", async () => {
    const { dir, d, channel } = await start({ DISCO_DEBOUNCE_AFTER: "10m", DISCO_DEBOUNCE_MAX: "10m" });
    const foo = await sidecar(channel, "foo", "10.0.0.1");
    const updates = await metric(d, 'disco_inbound_updates_total{type="config"}');
    replaceFile(join(dir, "bar-web.yaml"), service("bar", "10.0.0.9"));
    await until("the Endpoints change applied (a new configuration version)", async () =>
      (await metric(d, 'disco_inbound_updates_total{type="config"}')) > updates ? true : undefined,
    );
    assert.equal(await metric(d, 'disco_push_triggers_total{type="endpoint"}'), 0, "not pushed at once");
    assert.equal(await metric(d, 'disco_push_triggers_total{type="config"}'), 0, "held by the debounce");
    assert.equal(foo.client.pending(), 0);
  });
});
