// A hub outage under load, with real processes on loopback: `hubs server`
// stopped for 10 s while requests keep coming through `disco-agent proxy`
// (FAIL_OPEN), then started again on the same port. The filter keeps the
// report batches the hub could not take and resends them: every request's
// report reaches the hub's access log, or — past the retry buffer's bound —
// is counted in hub_client.report_dropped. Nothing is lost silently.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { HUBS_BIN, type HubListening, type LocalMesh, startLocalMesh } from "../../host/demo/local_mesh.ts";
import { type Daemon, startDaemon } from "../../host/demo/processes.ts";
import { HUB_RULES, accessLogLines, get, sidecarConfig, stats, waitFor } from "./sidecar_support.ts";

const OUTAGE_MS = 10_000;
const WORKERS = 4;

/** `hubs server` again on the port and configuration the mesh's hub had. */
function restartHub(mesh: LocalMesh): Promise<Daemon<HubListening>> {
  return startDaemon<HubListening>(
    HUBS_BIN,
    [
      "server",
      "--address",
      `tcp://127.0.0.1:${mesh.hub.listening.grpcPort}`,
      "--monitoringPort",
      "0",
      "--ctrlz_port",
      "0",
      "--ctrlz_address",
      "127.0.0.1",
      "--configStoreURL",
      `fs://${mesh.hubConfigDir}`,
      "--configDefaultNamespace",
      "mesh-system",
    ],
    "hubs listening ",
    60_000,
  );
}

/** Sends requests with unique paths from WORKERS loops until `stop()`; returns the paths answered 200. */
function load(mesh: LocalMesh, prefix: string): { stop(): Promise<string[]> } {
  let running = true;
  const served: string[] = [];
  let n = 0;
  const worker = async () => {
    while (running) {
      const path = `/pets/${prefix}-${n++}`;
      const res = await get(`${mesh.inboundUrl}${path}`);
      assert.equal(res.status, 200, `${path}: ${res.body}`);
      served.push(path);
    }
  };
  const workers = Array.from({ length: WORKERS }, worker);
  return {
    async stop() {
      running = false;
      await Promise.all(workers);
      return served;
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const loggedPaths = (mesh: LocalMesh) => new Set(accessLogLines(mesh.accessLog).map((l) => l.attributes["request.path"]?.stringValue as string));

async function outage(mesh: LocalMesh, prefix: string): Promise<{ served: string[]; restarted: Daemon<HubListening> }> {
  const traffic = load(mesh, prefix);
  await sleep(1000);
  assert.equal(await mesh.hub.stop(), 0);
  await sleep(OUTAGE_MS);
  const restarted = await restartHub(mesh);
  await sleep(1500);
  return { served: await traffic.stop(), restarted };
}

describe("hub outage under load: reports survive (retry buffer)", () => {
  let mesh: LocalMesh;
  let restarted: Daemon<HubListening> | undefined;
  before(async () => {
    mesh = await startLocalMesh({ hubConfig: HUB_RULES, sidecarConfig: sidecarConfig("FAIL_OPEN") });
  });
  after(async () => {
    await mesh?.sidecar.stop();
    await restarted?.stop();
    await mesh?.stop();
  });

  it("every request's report reaches the hub's access log once the hub is back", async (t) => {
    const result = await outage(mesh, "outage");
    restarted = result.restarted;
    const served = result.served;
    assert.ok(served.length >= 40, `load during the outage: ${served.length} requests`);
    const missing = await waitFor(
      "every report in the access log",
      () => {
        const logged = loggedPaths(mesh);
        const left = served.filter((p) => !logged.has(p));
        return left.length === 0 ? left : undefined;
      },
      90_000,
    ).catch(() => served.filter((p) => !loggedPaths(mesh).has(p)));
    assert.deepEqual(missing, [], `${missing.length} of ${served.length} reports missing`);
    const s = await waitFor(
      "published counters",
      async () => {
        const m = await stats(mesh.adminUrl);
        return (m.get("hub_client.total_remote_report_send_errors") ?? 0) > 0 ? m : undefined;
      },
      60_000,
    );
    assert.equal(s.get("hub_client.report_dropped"), 0);
    t.diagnostic(`${served.length} requests, all logged; ${s.get("hub_client.total_remote_report_send_errors")} report calls failed during the outage`);
  });
});

describe("hub outage under load: past the retry buffer's bound, reports are dropped and counted", () => {
  let mesh: LocalMesh;
  let restarted: Daemon<HubListening> | undefined;
  before(async () => {
    mesh = await startLocalMesh({ hubConfig: HUB_RULES, sidecarConfig: sidecarConfig("FAIL_OPEN", "    reportBufferMaxEntries: 10\n") });
  });
  after(async () => {
    await mesh?.sidecar.stop();
    await restarted?.stop();
    await mesh?.stop();
  });

  it("logged + dropped = every request served", async (t) => {
    const result = await outage(mesh, "overflow");
    restarted = result.restarted;
    const served = result.served;
    const counted = await waitFor(
      "every report logged or counted as dropped",
      async () => {
        const logged = served.filter((p) => loggedPaths(mesh).has(p)).length;
        const dropped = (await stats(mesh.adminUrl)).get("hub_client.report_dropped") ?? 0;
        return logged + dropped === served.length ? { logged, dropped } : undefined;
      },
      90_000,
    );
    assert.ok(counted.dropped > 0, "the outage overflowed a 10-report buffer");
    assert.ok(counted.logged >= 10, `${counted.logged} logged`);
    t.diagnostic(`${served.length} requests: ${counted.logged} logged, ${counted.dropped} dropped and counted`);
  });
});
