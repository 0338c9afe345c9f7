// The cluster-side DISCO_* variables through the real disco-discovery
// process: its environment read as spec 2 says, what a sidecar Envoy and a
// gateway Envoy are served over ADS (real gRPC on loopback) with the
// defaults and with every variable changed, decoded strictly with Envoy's v3
// protos; a bad value is refused naming the variable.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { DISCOVERY_BIN } from "../../host/demo/binaries.ts";
import { CLUSTER, LISTENER } from "../../host/discovery/type_urls.ts";
import { decodeAnyStrict, envoyRoot } from "../support/envoy_protos.ts";
import { type Daemon, startDaemon, tempDir } from "../support/processes.ts";
import { SIDE_LISTENERS_OFF } from "./support/daemon_args.ts";
import { CLUSTER_MESH, DB } from "./support/cluster_mesh.ts";
import { RawAdsClient } from "./support/raw_ads_client.ts";

const daemons: Daemon<{ grpc: string }>[] = [];
const channels: grpc.Client[] = [];

function args(dir: string): string[] {
  return ["discovery", "--configDir", dir, "--grpcAddr", "127.0.0.1:0", "--httpAddr", "", ...SIDE_LISTENERS_OFF];
}

async function start(env: Record<string, string>): Promise<grpc.Client> {
  const dir = tempDir("disco-clusters-");
  writeFileSync(join(dir, "mesh.yaml"), CLUSTER_MESH);
  const d = await startDaemon<{ grpc: string }>(DISCOVERY_BIN, args(dir), "disco-discovery listening: ", undefined, { ...process.env, ...env });
  daemons.push(d);
  const channel = new grpc.Client(d.listening.grpc, grpc.credentials.createInsecure());
  channels.push(channel);
  return channel;
}

const SIDECAR = { id: "sidecar~10.0.0.9~client-1.shop~shop.svc.cluster.local", user_agent_name: "envoy" };
/** A gateway pod the registry does not list: its labels come in node metadata LABELS (a Struct on the wire). */
const GATEWAY = {
  id: "router~10.0.0.20~ingress-1.shop~shop.svc.cluster.local",
  user_agent_name: "envoy",
  metadata: { fields: { LABELS: { structValue: { fields: { app: { stringValue: "ingress" } } } } } },
};

/** What an Envoy of `node` is served of one type (wildcard), decoded strictly, by name; ACKed. */
async function fetchDecoded(channel: grpc.Client, node: Record<string, unknown>, type: string): Promise<Map<string, Record<string, any>>> {
  const c = new RawAdsClient(channel, node);
  c.send({ type_url: type });
  const r = await c.next();
  c.ack(r);
  c.stream.end();
  const root = envoyRoot();
  return new Map(
    r.resources.map((x) => {
      const o = decodeAnyStrict(root, x).object;
      return [o.name as string, o];
    }),
  );
}

const outbound = (clusters: Map<string, unknown>) => [...clusters.keys()].filter((n) => n.startsWith("outbound|")).sort();

describe("disco-discovery's cluster-side variables (real daemon)", { timeout: 600_000 }, () => {
  after(async () => {
    for (const c of channels) c.close();
    await Promise.all(daemons.map((d) => d.stop()));
  });

  it("defaults: headless ORIGINAL_DST with pod listeners, DNS clusters with respect_dns_ttl, a gateway served every cluster", async () => {
    const channel = await start({});
    const clusters = await fetchDecoded(channel, SIDECAR, CLUSTER);
    assert.equal(clusters.get(`outbound|5432||${DB}`)!.type, "ORIGINAL_DST");
    const api = clusters.get("outbound|443||api.example.com")!;
    assert.equal(api.type, "STRICT_DNS");
    assert.equal(api.respect_dns_ttl, true);
    const listeners = await fetchDecoded(channel, SIDECAR, LISTENER);
    assert.deepEqual([...listeners.keys()].filter((n) => n.startsWith("10.0.1.")).sort(), ["10.0.1.1_5432", "10.0.1.2_5432"]);
    assert.deepEqual(outbound(await fetchDecoded(channel, GATEWAY, CLUSTER)), outbound(clusters));
  });

  it("every variable changed: headless over EDS without pod listeners, no respect_dns_ttl, a gateway served only its own namespace's Gateway's destinations", async () => {
    const channel = await start({
      DISCO_ENABLE_EDS_FOR_HEADLESS_SERVICES: "true",
      DISCO_ENABLE_HEADLESS_SERVICE_POD_LISTENERS: "false",
      DISCO_RESPECT_DNS_TTL: "false",
      DISCO_FILTER_GATEWAY_CLUSTER_CONFIG: "true",
      DISCO_SCOPE_GATEWAY_TO_NAMESPACE: "true",
    });
    const clusters = await fetchDecoded(channel, SIDECAR, CLUSTER);
    const db = clusters.get(`outbound|5432||${DB}`)!;
    assert.equal(db.type, "EDS");
    assert.equal(db.eds_cluster_config.service_name, `outbound|5432||${DB}`);
    assert.equal(clusters.get("outbound|443||api.example.com")!.respect_dns_ttl, undefined);
    const listeners = await fetchDecoded(channel, SIDECAR, LISTENER);
    assert.deepEqual(
      [...listeners.keys()].filter((n) => n.startsWith("10.0.1.")),
      [],
    );
    assert.deepEqual(outbound(await fetchDecoded(channel, GATEWAY, CLUSTER)), ["outbound|80||web.shop.svc.cluster.local"]);
  });

  it("a value that is not a boolean is refused, naming the variable", () => {
    const r = spawnSync(process.execPath, [DISCOVERY_BIN, ...args(tempDir("disco-clusters-bad-"))], {
      encoding: "utf8",
      env: { ...process.env, DISCO_RESPECT_DNS_TTL: "sometimes" },
      timeout: 600_000,
    });
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /DISCO_RESPECT_DNS_TTL/);
  });
});
