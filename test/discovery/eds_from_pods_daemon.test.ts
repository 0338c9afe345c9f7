// The real disco-discovery process fed upstream's bookinfo sample (renamed):
// Deployments and Services as the sample ships them, plus the Pods the
// orchestrator would have made (with their addresses), and no Endpoints
// documents. Envoy's EDS over real gRPC carries the pod IPs (decoded
// strictly with Envoy's v3 protos); a Service whose selector matches no Pod
// raises disco_eds_no_instances, is warned about once (not on every push)
// and shows empty on /debug/endpointz.
import assert from "node:assert/strict";
import { copyFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { DISCOVERY_BIN } from "../../host/demo/binaries.ts";
import { ENDPOINT } from "../../host/discovery/type_urls.ts";
import { decodeAnyStrict, envoyRoot } from "../support/envoy_protos.ts";
import { type Daemon, startDaemon, tempDir, waitFor } from "../support/processes.ts";
import { RawAdsClient } from "./support/raw_ads_client.ts";

/** Writes a file of the watched folder in one step, so the daemon never reads it half written (a truncated file is a valid, empty one). */
function writeWhole(path: string, text: string): void {
  writeFileSync(`${path}.tmp`, text);
  renameSync(`${path}.tmp`, path);
}

const BOOKINFO = join(import.meta.dirname, "..", "cli", "fixtures", "upstream", "samples", "bookinfo");
const FQDN = (name: string) => `${name}.default.svc.cluster.local`;

/** A Pod of a bookinfo Deployment as the orchestrator reports it once running: injected, addressed, Ready. */
function pod(app: string, version: string, ip: string): string {
  return `apiVersion: v1
kind: Pod
metadata:
  name: ${app}-${version}-7d8f9c
  namespace: default
  labels: {app: ${app}, version: ${version}, security.mesh.io/tlsMode: mesh}
spec:
  serviceAccountName: bookinfo-${app}
  containers: [{name: ${app}, image: docker.io/mesh/examples-bookinfo-${app}-${version}:1.20.2, ports: [{containerPort: 9080}]}]
status:
  phase: Running
  podIP: ${ip}
  podIPs: [{ip: ${ip}}]
  conditions: [{type: Ready, status: "True"}]
---
`;
}

const PODS = [
  pod("productpage", "v1", "10.244.0.10"),
  pod("details", "v1", "10.244.0.11"),
  pod("ratings", "v1", "10.244.0.12"),
  pod("reviews", "v1", "10.244.0.13"),
  pod("reviews", "v2", "10.244.0.14"),
].join("");

const GHOST = `apiVersion: v1
kind: Service
metadata: {name: ghost, namespace: default}
spec: {selector: {app: ghost}, ports: [{name: http, port: 80, targetPort: 8080}]}
`;

const PRODUCTPAGE = { id: "sidecar~10.244.0.10~productpage-v1-7d8f9c.default~default.svc.cluster.local", user_agent_name: "envoy" };

describe("disco-discovery: EDS from Pods when there are no Endpoints documents (real daemon)", { timeout: 600_000 }, () => {
  const dir = tempDir("disco-eds-pods-");
  let daemon: Daemon<{ grpc: string; http: string; monitoring: string }>;
  let channel: grpc.Client;

  const scrape = async () => (await fetch(`http://${daemon.listening.monitoring}/metrics`)).text();
  const gauge = async () => Number(/^disco_eds_no_instances (\S+)$/m.exec(await scrape())?.[1]);
  const endpointz = async () => (await (await fetch(`http://${daemon.listening.http}/debug/endpointz`)).json()) as Array<Record<string, any>>;
  const version = async () => ((await (await fetch(`http://${daemon.listening.http}/debug/configz`)).json()) as { version: number }).version;
  const warnings = (cluster: string) =>
    daemon
      .output()
      .split("\n")
      .filter((l) => /\bwarn/.test(l) && l.includes(`cluster ${cluster} has no endpoints`));

  before(async () => {
    copyFileSync(join(BOOKINFO, "platform", "kube", "bookinfo.yaml"), join(dir, "bookinfo.yaml"));
    copyFileSync(join(BOOKINFO, "networking", "destination-rule-all.yaml"), join(dir, "destination-rule-all.yaml"));
    writeFileSync(join(dir, "pods.yaml"), PODS);
    daemon = await startDaemon(
      DISCOVERY_BIN,
      [
        "discovery",
        "--configDir",
        dir,
        "--grpcAddr",
        "127.0.0.1:0",
        "--httpAddr",
        "127.0.0.1:0",
        "--monitoringAddr",
        "127.0.0.1:0",
        "--secureGrpcAddr",
        "",
        "--httpsAddr",
        "",
        "--ctrlz_port",
        "0",
        "--ctrlz_address",
        "127.0.0.1",
      ],
      "disco-discovery listening: ",
    );
    channel = new grpc.Client(daemon.listening.grpc, grpc.credentials.createInsecure());
  });
  after(async () => {
    channel?.close();
    await daemon?.stop();
  });

  it("Envoy's load assignments carry the pod IPs of each service and subset, decoded strictly", async () => {
    const names = [`outbound|9080||${FQDN("reviews")}`, `outbound|9080|v2|${FQDN("reviews")}`, `outbound|9080||${FQDN("ratings")}`];
    const c = new RawAdsClient(channel, PRODUCTPAGE);
    c.send({ type_url: ENDPOINT, resource_names: names });
    const r = await c.next();
    c.ack(r, names);
    c.stream.end();
    const root = envoyRoot();
    const byName = new Map(
      r.resources.map((x) => {
        const o = decodeAnyStrict(root, x).object as Record<string, any>;
        return [o.cluster_name as string, o];
      }),
    );
    const hosts = (name: string) =>
      (byName.get(name)?.endpoints ?? []).flatMap((l: any) =>
        l.lb_endpoints.map((e: any) => `${e.endpoint.address.socket_address.address}:${e.endpoint.address.socket_address.port_value}`),
      );
    assert.deepEqual(hosts(names[0]), ["10.244.0.13:9080", "10.244.0.14:9080"]);
    assert.deepEqual(hosts(names[1]), ["10.244.0.14:9080"]);
    assert.deepEqual(hosts(names[2]), ["10.244.0.12:9080"]);
    // Injected pods carry the tlsMode label: Envoy's auto mutual TLS matches it in the endpoint metadata.
    const first = byName.get(names[0])!.endpoints[0].lb_endpoints[0];
    assert.match(JSON.stringify(first.metadata.filter_metadata["envoy.transport_socket_match"]), /"tlsMode":\{"stringValue":"mesh"\}/);
  });

  it("reviews v3 has a Deployment but no Pod: its subset cluster is empty, counted, warned about and shown empty", async () => {
    const v3 = `outbound|9080|v3|${FQDN("reviews")}`;
    assert.equal(warnings(v3).length, 1, daemon.output());
    assert.match(warnings(v3)[0], /subset v3 selects none of the service's 2 endpoint\(s\)/);
    const page = await endpointz();
    const reviews = page.find((x) => x.cluster === `outbound|9080||${FQDN("reviews")}`)!;
    assert.equal(reviews.source, "Pods");
    assert.deepEqual(
      reviews.endpoints.map((e: any) => [e.address, e.serviceAccount, e.sidecar]),
      [
        ["10.244.0.13", "bookinfo-reviews", true],
        ["10.244.0.14", "bookinfo-reviews", true],
      ],
    );
    assert.deepEqual(page.find((x) => x.cluster === v3)!.endpoints, []);
    assert.ok((await gauge()) >= 1);
  });

  it("a Service that selects no Pod raises the gauge and is warned about once, not on every later push", async () => {
    const ghost = `outbound|80||${FQDN("ghost")}`;
    const before = await gauge();
    const v = await version();
    writeWhole(join(dir, "ghost.yaml"), GHOST);
    await waitFor("the Service without pods counted", async () => (await gauge()) === before + 1);
    assert.equal(warnings(ghost).length, 1, daemon.output());
    assert.match(warnings(ghost)[0], /Service default\/ghost has no Endpoints document and no ready Pod with an address matches its selector app=ghost/);
    assert.deepEqual((await endpointz()).find((x) => x.cluster === ghost)?.endpoints, []);
    // Another change pushes again: the cluster is still empty, and not warned about again.
    writeWhole(join(dir, "ghost.yaml"), `${GHOST}  # unchanged service, new version\n`);
    writeWhole(join(dir, "more.yaml"), GHOST.replaceAll("ghost", "ghost-two"));
    await waitFor("a later version", async () => (await version()) >= v + 2 && (await gauge()) === before + 2);
    assert.equal(warnings(ghost).length, 1, daemon.output());
    // A Pod for it arrives: the cluster has an endpoint and the gauge goes back down.
    writeWhole(join(dir, "ghost-pod.yaml"), pod("ghost", "v1", "10.244.0.20").replace("containerPort: 9080", "containerPort: 8080"));
    await waitFor("the ghost endpoint", async () => (await endpointz()).find((x) => x.cluster === ghost)?.endpoints.length === 1);
    assert.equal(await gauge(), before + 1);
  });
});
