// hubs --profile, mesh_ca --enable-profiling and disco-discovery --profile on real processes: the
// /debug/pprof/ endpoints hand out real V8 profiles (a .cpuprofile of the requested seconds, a .heapsnapshot).
import assert from "node:assert/strict";

import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { AGENT_BIN } from "../../host/demo/local_mesh.ts";
import { type Daemon, startDaemon } from "../../host/demo/processes.ts";
import { type CaProcess, startCa } from "../anchor/support/ca_process.ts";
import { SIDE_LISTENERS_OFF } from "../discovery/support/daemon_args.ts";
import { type HubProcess, startHub } from "../hubs/support/hub_process.ts";
import { tempDir } from "../support/processes.ts";

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string } }>;
  startTime: number;
  endTime: number;
  samples: number[];
}

async function cpuProfile(base: string, seconds: number): Promise<CpuProfile> {
  const res = await fetch(`${base}/debug/pprof/profile?seconds=${seconds}`);
  assert.equal(res.status, 200, await res.clone().text());
  assert.match(res.headers.get("content-disposition") ?? "", /attachment; filename="cpu-\d+-\d+\.cpuprofile"/);
  return (await res.json()) as CpuProfile;
}

describe("profiling endpoints (/debug/pprof/ on the monitoring port)", () => {
  let hub: HubProcess;
  let plainHub: HubProcess;
  let ca: CaProcess;
  before(async () => {
    [hub, plainHub, ca] = await Promise.all([startHub(["--profile"]), startHub([]), startCa(["--self-signed-ca", "--grpc-plaintext", "--enable-profiling"])]);
  });
  after(async () => {
    await Promise.all([hub?.stop(), plainHub?.stop(), ca?.stop("SIGTERM")]);
  });

  it("hubs --profile: a CPU profile of the requested seconds in V8's .cpuprofile format", async () => {
    const profile = await cpuProfile(hub.monitoringUrl, 1);
    assert.ok(profile.nodes.length > 0 && profile.nodes.some((n) => n.callFrame.functionName === "(root)"), "a call tree from the root");
    // V8 times are microseconds: the profile spans the second asked for (at least).
    assert.ok(profile.endTime - profile.startTime >= 1_000_000, `${profile.endTime - profile.startTime} µs`);
    assert.ok(Array.isArray(profile.samples));
  });

  it("hubs --profile: a heap snapshot in V8's .heapsnapshot format, and the index names both", async () => {
    const res = await fetch(`${hub.monitoringUrl}/debug/pprof/heap`);
    assert.equal(res.status, 200);
    const snapshot = (await res.json()) as { snapshot: { meta: { node_fields: string[] }; node_count: number }; nodes: number[]; strings: string[] };
    assert.ok(snapshot.snapshot.meta.node_fields.includes("self_size"));
    assert.ok(snapshot.snapshot.node_count > 1000, `${snapshot.snapshot.node_count} nodes`);
    assert.equal(snapshot.nodes.length, snapshot.snapshot.node_count * snapshot.snapshot.meta.node_fields.length);
    const index = await (await fetch(`${hub.monitoringUrl}/debug/pprof/`)).text();
    assert.match(index, /\/debug\/pprof\/profile\?seconds=N/);
    assert.match(index, /\/debug\/pprof\/heap/);
    const cmdline = await (await fetch(`${hub.monitoringUrl}/debug/pprof/cmdline`)).text();
    assert.ok(cmdline.split("\0").includes("--profile"), cmdline);
  });

  it("refuses a bad seconds value (400) and an unknown profile (404)", async () => {
    const bad = await fetch(`${hub.monitoringUrl}/debug/pprof/profile?seconds=abc`);
    assert.equal(bad.status, 400);
    assert.match(await bad.text(), /seconds: expected a whole number of seconds/);
    assert.equal((await fetch(`${hub.monitoringUrl}/debug/pprof/goroutine`)).status, 404);
  });

  it("without --profile there are no profiling endpoints; /metrics is served either way", async () => {
    assert.equal((await fetch(`${plainHub.monitoringUrl}/debug/pprof/`)).status, 404);
    assert.equal((await fetch(`${plainHub.monitoringUrl}/debug/pprof/heap`)).status, 404);
    assert.equal((await fetch(`${hub.monitoringUrl}/metrics`)).status, 200);
  });

  it("mesh_ca --enable-profiling: the same endpoints on its monitoring port", async () => {
    const profile = await cpuProfile(ca.monitoringUrl, 1);
    assert.ok(profile.nodes.length > 0);
    const heap = await fetch(`${ca.monitoringUrl}/debug/pprof/heap`);
    assert.equal(heap.status, 200);
    assert.ok(((await heap.json()) as { snapshot: { node_count: number } }).snapshot.node_count > 1000);
  });
});

describe("disco-discovery --profile: /debug/pprof/ on the --httpAddr debug port", { timeout: 600_000 }, () => {
  let discovery: Daemon<{ http: string }>;
  before(async () => {
    const args = [
      "discovery",
      "--configDir",
      tempDir("disco-profile-"),
      "--grpcAddr",
      "127.0.0.1:0",
      "--httpAddr",
      "127.0.0.1:0",
      "--profile",
      ...SIDE_LISTENERS_OFF,
    ];
    discovery = await startDaemon<{ http: string }>(join(AGENT_BIN, "..", "disco-discovery.mjs"), args, "disco-discovery listening: ", 60_000);
  });
  after(async () => {
    await discovery?.stop();
  });

  it("serves a CPU profile and a heap snapshot beside the debug pages", async () => {
    const base = `http://${discovery.listening.http}`;
    const profile = await cpuProfile(base, 1);
    assert.ok(profile.nodes.some((n) => n.callFrame.functionName === "(root)"));
    const heap = await fetch(`${base}/debug/pprof/heap`);
    assert.equal(heap.status, 200);
    assert.ok(((await heap.json()) as { snapshot: { node_count: number } }).snapshot.node_count > 1000);
    assert.equal((await fetch(`${base}/debug/syncz`)).status, 200);
  });
});
