// disco-discovery's self-monitoring port: the disco_* counters of spec 2 as a
// scraper reads them from /metrics (checked by promtool), updated by real ADS
// streams (an XdsConfigSource ACKing and NACKing), the configuration's
// refusals and its conflicts; /ready and /version.
import { DEFAULT_DOMAIN } from "../../host/mesh/hosts.ts";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { DiscoveryServer } from "../../host/discovery/server.ts";
import type { LoadedConfig } from "../../host/config/config_dir.ts";
import { XdsConfigSource } from "../../host/proxy/xds_config.ts";
import { denyPolicy, silent, startTestDiscovery, testChecks, until } from "./support/in_process.ts";
import { needPromtool, promtoolCheck } from "../telemetry/promtool.ts";

const MESH = `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: {name: hubs, namespace: mesh-system}
spec:
  hosts: [hubs.mesh-system.svc.cluster.local]
  ports: [{number: 9091, name: grpc, protocol: GRPC}]
  resolution: STATIC
  endpoints: [{address: 127.0.0.1, ports: {grpc: 9091}, labels: {version: v1}}, {address: 127.0.0.2, ports: {grpc: 9091}, labels: {version: v1}}]
---
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: {name: empty, namespace: mesh-system}
spec:
  hosts: [empty.example.com]
  ports: [{number: 80, name: http, protocol: HTTP}]
  resolution: DNS
---
apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: {name: hubs-a, namespace: mesh-system}
spec:
  host: hubs.mesh-system.svc.cluster.local
  subsets: [{name: v1, labels: {version: v1}}, {name: v2, labels: {version: v2}}]
---
apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: {name: hubs-b, namespace: mesh-system}
spec:
  host: hubs.mesh-system.svc.cluster.local
  subsets: [{name: v1, labels: {version: v1}}]
---
apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata: {name: a, namespace: demo}
spec:
  hosts: [petstore.demo.svc.cluster.local]
  http: [{route: [{destination: {host: petstore.demo.svc.cluster.local}}]}]
---
apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata: {name: b, namespace: demo}
spec:
  hosts: [petstore]
  http: [{route: [{destination: {host: petstore.demo.svc.cluster.local}}]}]
`;

/** One sample's value from the exposition (`name{labels}`), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("disco-discovery --monitoringAddr", { timeout: 600_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "disco-metrics-"));
  const checks = testChecks();
  let discovery: DiscoveryServer;
  let base: string;
  const scrape = async () => (await fetch(`${base}/metrics`)).text();

  before(async () => {
    writeFileSync(join(dir, "mesh.yaml"), MESH);
    writeFileSync(join(dir, "policy.yaml"), denyPolicy("/admin"));
    discovery = await startTestDiscovery(dir, { monitoring: { host: "127.0.0.1", port: 0 } });
    base = `http://${discovery.listeners.monitoring}`;
  });
  after(async () => {
    await discovery?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("/ready and /version answer; the bound address is announced", async () => {
    assert.match(discovery.listeners.monitoring!, /^127\.0\.0\.1:\d+$/);
    const ready = await fetch(`${base}/ready`);
    assert.equal(ready.status, 200);
    assert.equal(await ready.text(), "ok\n");
    const version = (await (await fetch(`${base}/version`)).json()) as { version: string };
    assert.match(version.version, /^\d+\.\d+\.\d+/);
  });

  it("services, virtual services, clusters without instances and conflicts of the configuration", async () => {
    const text = await scrape();
    assert.equal(sample(text, "disco_services"), 2);
    assert.equal(sample(text, "disco_virt_services"), 2);
    // outbound|80||empty.example.com and the v2 subset of hubs select no endpoint.
    assert.equal(sample(text, "disco_eds_no_instances"), 2);
    assert.equal(sample(text, 'disco_xds_eds_all_locality_endpoints{cluster="outbound|9091||hubs.mesh-system.svc.cluster.local"}'), 2);
    assert.equal(sample(text, 'disco_xds_eds_instances{cluster="outbound|9091||hubs.mesh-system.svc.cluster.local"}'), 1);
    assert.equal(sample(text, "disco_destrule_subsets"), 1, "subset v1 of hubs is defined twice");
    assert.equal(sample(text, "disco_vservice_dup_domain"), 1, "petstore.demo is claimed by two VirtualServices");
    assert.equal(sample(text, "disco_duplicate_proxy_clusters"), 0);
  });

  it("connections, pushes, ACK convergence, NACKs and refused configurations are counted", async () => {
    const applied: LoadedConfig[] = [];
    const accepting = new XdsConfigSource(
      discovery.listeners.grpc!,
      { id: "sidecar~127.0.0.1~a.foo~foo.svc.cluster.local", cluster: "a.foo" },
      checks,
      DEFAULT_DOMAIN,
      (c) => (applied.push(c), true),
      () => {},
      silent,
    );
    const refusing = new XdsConfigSource(
      discovery.listeners.grpc!,
      { id: "sidecar~127.0.0.1~b.foo~foo.svc.cluster.local", cluster: "b.foo" },
      checks,
      DEFAULT_DOMAIN,
      (c) => !JSON.stringify(c.mesh.byKind.AuthorizationPolicy).includes("/refuse-me"),
      () => {},
      silent,
    );
    try {
      await accepting.start();
      await refusing.start();
      let text = await scrape();
      assert.equal(sample(text, "disco_xds"), 2);
      assert.ok(sample(text, 'disco_xds_pushes_total{type="config"}')! >= 2, text);
      writeFileSync(join(dir, "policy.yaml"), denyPolicy("/refuse-me"));
      text = await until("the NACK counted", async () => {
        const t = await scrape();
        return sample(t, 'disco_total_xds_rejects_total{type="config"}') === 1 ? t : undefined;
      });
      assert.equal(sample(text, 'disco_push_triggers_total{type="config"}'), 1);
      assert.ok(sample(text, "disco_proxy_convergence_time_count")! >= 1, "the accepting proxy converged");
      assert.ok(sample(text, 'disco_xds_push_time_count{type="config"}')! >= 4);
      assert.equal(sample(text, 'disco_inbound_updates_total{type="config"}'), 2);
      writeFileSync(
        join(dir, "broken.yaml"),
        "apiVersion: security.mesh.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: bad, namespace: foo}\nspec: {action: MAYBE}\n",
      );
      await until("the refused configuration counted", async () => (sample(await scrape(), "disco_total_rejected_configs_total") === 1 ? true : undefined));
    } finally {
      accepting.stop();
      refusing.stop();
    }
    await until("the streams gone", async () => (sample(await scrape(), "disco_xds") === 0 ? true : undefined));
  });

  it("the exposition is clean under promtool check metrics", async (t) => {
    needPromtool(t);
    assert.deepEqual(promtoolCheck(await scrape()), { status: 0, problems: "" });
  });
});
