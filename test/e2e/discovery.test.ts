import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, it } from "node:test";
import { AGENT_BIN, DISCOVERY_BIN } from "../../host/demo/binaries.ts";
import { startEchoApp } from "../../host/demo/echo_app.ts";
import { startHub, type HubProcess } from "../hubs/support/hub_process.ts";
import { type Daemon, spawnOwned, startDaemon, tempDir, waitFor } from "../support/processes.ts";
import { needPromtool, promtoolCheck } from "../telemetry/promtool.ts";
import { DEMO_SERVICE, HUB_RULES, get, sidecarConfig } from "./sidecar_support.ts";

// disco-discovery end to end, real processes on loopback: sidecars configured
// only by --discoveryAddress enforce a change made in the control plane's
// folder without a restart; a bad document is refused with its field path
// and the last good configuration keeps serving; a proxyless gRPC client
// (@grpc/grpc-js-xds) reaches the hub a ServiceEntry describes, and follows
// it when the endpoint changes.

interface DiscoveryListening {
  grpc: string;
  http: string;
  monitoring: string;
}

const CHECKS_OFF = `  serviceConfigs:\n    ${DEMO_SERVICE}: {disableCheckCalls: true}\n`;

async function startDiscovery(dir: string): Promise<Daemon<DiscoveryListening>> {
  return startDaemon<DiscoveryListening>(
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
    undefined,
    { ...process.env, DISCO_DEBOUNCE_AFTER: "100ms" },
  );
}

describe("disco-discovery: sidecars configured over ADS", () => {
  const hubDir = tempDir("disco-hub-");
  const discoDir = tempDir("disco-config-");
  let hub: HubProcess;
  let app: Awaited<ReturnType<typeof startEchoApp>>;
  let disco: Daemon<DiscoveryListening>;
  const sidecars: Array<Daemon<{ inbound: number; admin: number }>> = [];

  before(async () => {
    writeFileSync(join(hubDir, "rules.yaml"), HUB_RULES);
    hub = await startHub(["--configStoreURL", `fs://${hubDir}`, "--configDefaultNamespace", "mesh-system"]);
    app = await startEchoApp();
    writeFileSync(join(discoDir, "config.yaml"), sidecarConfig("FAIL_CLOSE"));
    disco = await startDiscovery(discoDir);
    for (const name of ["petstore-v1", "petstore-v2"]) {
      sidecars.push(
        await startDaemon(
          AGENT_BIN,
          [
            "proxy",
            "--inboundPort",
            "0",
            "--outboundPort",
            "0",
            "--proxyAdminPort",
            "0",
            "--appPort",
            String(app.port),
            "--discoveryAddress",
            disco.listening.grpc,
            // Plain-text xDS, no workload certificates (the control plane as the CA needs its TLS port).
            "--controlPlaneAuthPolicy",
            "NONE",
            "--cluster",
            `hub_server=127.0.0.1:${hub.listeners.grpcPort}`,
            "--inboundService",
            DEMO_SERVICE,
          ],
          "disco-agent listening ",
          undefined,
          { ...process.env, POD_NAME: name, POD_NAMESPACE: "demo" },
        ),
      );
    }
  });
  after(async () => {
    app?.server.close();
  });

  const admin = (s: (typeof sidecars)[number]) => get(`http://127.0.0.1:${s.listening.inbound}/admin/users`);

  it("each sidecar got its configuration from the control plane: the hub's denial applies", async () => {
    for (const s of sidecars) assert.equal((await admin(s)).status, 403);
  });

  it("a change in the control plane's folder is enforced by every sidecar without a restart", async () => {
    const changedAt = performance.now();
    writeFileSync(join(discoDir, "config.yaml"), sidecarConfig("FAIL_CLOSE", CHECKS_OFF));
    const elapsed = await Promise.all(
      sidecars.map((s) => waitFor("the change enforced", async () => ((await admin(s)).status === 200 ? performance.now() - changedAt : undefined))),
    );
    // Measured, not asserted (a loaded machine is slow): docs/discovery.md records the figure.
    process.stderr.write(`policy change enforced by both sidecars after ${Math.round(Math.max(...elapsed))} ms\n`);
  });

  it("a bad document is refused with its field path, and the last good configuration keeps serving", async () => {
    writeFileSync(
      join(discoDir, "broken.yaml"),
      "apiVersion: security.mesh.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: deny, namespace: demo}\nspec: {action: MAYBE}\n",
    );
    await waitFor("the refusal logged", () => (disco.output().includes("spec.action") ? true : undefined));
    for (const s of sidecars) assert.equal((await admin(s)).status, 200, "still the last good configuration");
  });

  it("the monitoring port counts the sidecars, the push and the refusal; promtool finds nothing to lint", async (t) => {
    const base = `http://${disco.listening.monitoring}`;
    assert.equal((await get(`${base}/ready`)).status, 200);
    const text = (await get(`${base}/metrics`)).body;
    assert.match(text, /^disco_xds 2$/m, "two sidecars connected");
    assert.match(text, /^disco_push_triggers_total\{type="config"\} [1-9]/m);
    assert.match(text, /^disco_total_rejected_configs_total [1-9]/m);
    assert.match(text, /^disco_proxy_convergence_time_count [2-9]/m, "both sidecars acknowledged the change");
    assert.match(text, /^mesh_build\{component="disco-discovery"/m);
    needPromtool(t);
    assert.deepEqual(promtoolCheck(text), { status: 0, problems: "" });
  });

  it("disco-discovery request reaches the debug and monitoring ports of the running daemon; version", () => {
    const run = (args: string[]) => spawnSync(process.execPath, [DISCOVERY_BIN, ...args], { encoding: "utf8", timeout: 120_000 });
    const syncz = run(["request", "GET", "/debug/syncz", "--httpAddr", disco.listening.http]);
    assert.equal(syncz.status, 0, syncz.stderr);
    const rows = JSON.parse(syncz.stdout) as Array<{ proxy: string; type: string }>;
    assert.equal(rows.filter((r) => r.type === "config").length, 2, "both sidecars");
    const metrics = run(["request", "GET", "/metrics", "--monitoringAddr", disco.listening.monitoring]);
    assert.equal(metrics.status, 0, metrics.stderr);
    assert.match(metrics.stdout, /^disco_xds 2$/m);
    const missing = run(["request", "GET", "/debug/nothing-here", "--httpAddr", disco.listening.http]);
    assert.equal(missing.status, 1, "a 404 exits 1");
    const version = run(["version", "-o", "json"]);
    assert.equal(version.status, 0, version.stderr);
    assert.match((JSON.parse(version.stdout) as { version: string }).version, /^\d+\.\d+\.\d+/);
  });
});

/** The proxyless client process: one health check per stdin line, answered in order. */
function proxylessClient(bootstrap: string, target: string) {
  const script = join(import.meta.dirname, "..", "discovery", "support", "proxyless_client.ts");
  const child = spawnOwned(process.execPath, ["--import", "tsx", script, target], {
    env: { ...process.env, GRPC_XDS_BOOTSTRAP_CONFIG: bootstrap },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const waiting: Array<(line: string) => void> = [];
  createInterface({ input: child.stdout! }).on("line", (line) => waiting.shift()?.(line));
  child.stderr!.resume();
  return {
    check(who: string): Promise<string> {
      child.stdin!.write(`${who}\n`);
      return new Promise((resolve) => waiting.push(resolve));
    },
  };
}

describe("disco-discovery: a proxyless gRPC client reaches the hub a ServiceEntry describes", () => {
  const dir = tempDir("disco-proxyless-");
  const entry = (port: number) => `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: {name: hubs, namespace: mesh-system}
spec:
  hosts: [hubs.mesh-system.svc.cluster.local]
  ports: [{number: 9091, name: grpc, protocol: GRPC}]
  location: MESH_INTERNAL
  resolution: STATIC
  endpoints: [{address: 127.0.0.1, ports: {grpc: ${port}}}]
`;
  let hubA: HubProcess;
  let hubB: HubProcess;
  let disco: Daemon<DiscoveryListening>;

  before(async () => {
    [hubA, hubB] = await Promise.all([startHub(), startHub()]);
    writeFileSync(join(dir, "hubs.yaml"), entry(hubA.listeners.grpcPort));
    disco = await startDiscovery(dir);
  });

  it("calls xds:///hubs.mesh-system.svc.cluster.local:9091, then follows the endpoint to a new hub", async () => {
    const bootstrap = JSON.stringify({
      xds_servers: [{ server_uri: disco.listening.grpc, channel_creds: [{ type: "insecure" }], server_features: ["xds_v3"] }],
      node: { id: "proxyless~127.0.0.1~client.demo~demo.svc.cluster.local", cluster: "client", locality: {}, metadata: { GENERATOR: "grpc" } },
    });
    const client = proxylessClient(bootstrap, "xds:///hubs.mesh-system.svc.cluster.local:9091");
    assert.equal(await client.check("mesh.hub.v1.Hub"), "SERVING", "hub A reached through xDS");
    writeFileSync(join(dir, "hubs.yaml"), entry(hubB.listeners.grpcPort));
    await hubA.stop();
    const answer = await waitFor("hub B reached", async () => {
      const a = await client.check("mesh.hub.v1.Hub");
      return a === "SERVING" ? a : undefined;
    });
    assert.equal(answer, "SERVING", "with hub A stopped, the call reached hub B");
  });
});
