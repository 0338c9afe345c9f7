import assert from "node:assert/strict";
import { once } from "node:events";
import { after, before, describe, it } from "node:test";
import { type LocalMesh, startLocalMesh } from "../../host/demo/local_mesh.ts";
import type { MeshCa } from "../../host/demo/secure_mesh.ts";
import { needPromtool, promtoolCheck } from "../telemetry/promtool.ts";
import { HUB_RULES, freePort, get, sidecarConfig, stats, waitFor } from "./sidecar_support.ts";

// The operator's HTTP surface on real processes: mesh_ca, `hubs server`, the
// echo app and a `disco-agent proxy` with the filter and a workload
// certificate. Every metrics endpoint passes Prometheus's own linter
// (`promtool check metrics`); the sidecar's admin port answers Envoy's admin
// endpoints in Envoy's shapes.

/** `name → type` of every `# TYPE` line. */
function families(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1], m[2]]));
}

function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function post(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url, { method: "POST" });
  return { status: res.status, body: await res.text() };
}

let ca: MeshCa;
let mesh: LocalMesh;
/** The status port (`--statusPort` has no "pick a free port" value: 0 turns it off). */
let statusUrl: string;

before(async () => {
  const statusPort = await freePort();
  statusUrl = `http://127.0.0.1:${statusPort}`;
  // secure: mesh_ca with tokens, the hub over mutual TLS, the sidecar's certificate from mesh_ca
  mesh = await startLocalMesh({
    hubConfig: HUB_RULES,
    sidecarConfig: sidecarConfig("FAIL_OPEN"),
    secure: true,
    agentArgs: ["--statusPort", String(statusPort)],
  });
  ca = mesh.ca!;
  // traffic: allowed, denied by the hub, charged to a quota
  for (const path of ["/pets/1", "/admin/x", "/limited/1", "/pets/2"]) await get(`${mesh.inboundUrl}${path}`);
  await waitFor("published filter counters", async () => ((await stats(mesh.adminUrl)).get("hub_client.total_check_calls") ?? 0) >= 3 || undefined, 60_000);
});

after(async () => {
  await mesh?.stop();
});

describe("promtool check metrics on every endpoint", { timeout: 600_000 }, () => {
  // Every spec name and type: test/telemetry/spec_metric_names.test.ts (generated from spec 2).
  it("hubs /metrics: the hub's counters count the traffic; promtool flags only the spec's gauges named _total", async (t) => {
    const text = await (await fetch(`http://127.0.0.1:${mesh.hub.listening.monitoringPort}/metrics`)).text();
    const types = families(text);
    assert.equal(types.get("hub_runtime_dispatch_duration_seconds"), "histogram");
    assert.equal(types.get("hub_config_rule_configs_total"), "gauge");
    assert.equal(sample(text, "hub_config_rule_configs_total"), HUB_RULES.match(/^kind: HubRule$/gm)!.length);
    assert.equal(sample(text, "hub_config_handler_configs_total"), HUB_RULES.match(/^kind: HubQuota$/gm)!.length + 1, "the quotas and the access log");
    assert.ok((sample(text, "hub_dispatcher_destinations_per_request_count") ?? 0) >= 3, "one observation per Check and Report");
    needPromtool(t);
    const flagged = promtoolCheck(text)
      .problems.split("\n")
      .filter(Boolean)
      .filter((l) => !/^hub_(config|dispatcher|handler)_\w+_total non-counter metrics should not have "_total" suffix$/.test(l));
    assert.deepEqual(flagged, []);
  });

  it("mesh_ca /metrics: the anchor_server_* counters count the hub's and the sidecar's CSRs, clean", async (t) => {
    const text = await (await fetch(`http://127.0.0.1:${ca.listening.monitoringPort}/metrics`)).text();
    assert.equal(sample(text, "anchor_server_csr_count_total"), 2);
    assert.equal(sample(text, "anchor_server_success_cert_issuance_count_total"), 2);
    assert.equal(families(text).get("anchor_server_root_cert_expiry_timestamp"), "gauge");
    needPromtool(t);
    assert.deepEqual(promtoolCheck(text), { status: 0, problems: "" });
  });

  it("sidecar /stats/prometheus and /stats?format=prometheus: proxy stats and the agent's counters, clean", async (t) => {
    const text = await (await fetch(`${mesh.adminUrl}/stats/prometheus`)).text();
    assert.match(text, /^mesh_build\{component="disco-agent",/m);
    assert.equal(sample(text, 'num_outgoing_requests_total{request_type="csr"}'), 1);
    assert.equal(sample(text, 'num_failed_outgoing_requests_total{request_type="csr"}'), 0);
    assert.ok((sample(text, 'outgoing_latency_total{request_type="csr"}') ?? 0) > 0);
    assert.equal(sample(text, "total_pushes_total"), 1);
    assert.equal(sample(text, "disco_total_rejected_configs_total"), 0);
    assert.ok((sample(text, "hub_client_total_check_calls_total") ?? 0) >= 3);
    assert.equal(families(text).get("listener_inbound_active"), "gauge");
    const viaStats = await (await fetch(`${mesh.adminUrl}/stats?format=prometheus`)).text();
    assert.ok(families(viaStats).has("hub_client_total_check_calls_total"));
    const viaStatus = await (await fetch(`${statusUrl}/stats/prometheus`)).text();
    assert.ok(families(viaStatus).has("num_outgoing_requests_total"));
    needPromtool(t);
    assert.deepEqual(promtoolCheck(text), { status: 0, problems: "" });
    assert.deepEqual(promtoolCheck(viaStats), { status: 0, problems: "" });
    assert.deepEqual(promtoolCheck(viaStatus), { status: 0, problems: "" });
  });
});

describe("sidecar admin: Envoy's endpoints", { timeout: 600_000 }, () => {
  it("/server_info: envoy.admin.v3.ServerInfo", async () => {
    const info = JSON.parse((await get(`${mesh.adminUrl}/server_info`)).body);
    assert.equal(info.state, "LIVE");
    assert.match(info.version, /^\d+\.\d+\.\d+/);
    assert.match(info.uptime_current_epoch, /^\d+s$/);
    assert.equal(info.node.id, "petstore-v1.demo");
    assert.equal(info.command_line_options.caAddress, ca.address);
  });

  it("/clusters (text and ?format=json) and /listeners", async () => {
    const hub = `127.0.0.1:${mesh.hub.listening.grpcPort}`;
    assert.match((await get(`${mesh.adminUrl}/clusters`)).body, new RegExp(`^hub_server::${hub}::health_flags::healthy$`, "m"));
    const clusters = JSON.parse((await get(`${mesh.adminUrl}/clusters?format=json`)).body);
    const hubCluster = clusters.cluster_statuses.find((c: { name: string }) => c.name === "hub_server");
    assert.deepEqual(hubCluster.host_statuses[0].address, { socket_address: { address: "127.0.0.1", port_value: mesh.hub.listening.grpcPort } });
    assert.ok(clusters.cluster_statuses.some((c: { name: string }) => c.name === `inbound|${mesh.app.port}||`));
    const listeners = JSON.parse((await get(`${mesh.adminUrl}/listeners?format=json`)).body);
    const inbound = listeners.listener_statuses.find((l: { name: string }) => l.name === "inbound");
    assert.equal(inbound.local_address.socket_address.port_value, mesh.sidecar.listening.inbound);
    assert.match((await get(`${mesh.adminUrl}/listeners`)).body, new RegExp(`^outbound::127\\.0\\.0\\.1:${mesh.sidecar.listening.outbound}$`, "m"));
  });

  it("/certs: the workload certificate from mesh_ca and its root", async () => {
    const certs = JSON.parse((await get(`${mesh.adminUrl}/certs`)).body);
    const [entry] = certs.certificates;
    assert.deepEqual(entry.cert_chain[0].subject_alt_names, [{ uri: "spiffe://cluster.local/ns/demo/sa/petstore" }]);
    assert.match(entry.cert_chain[0].serial_number, /^[0-9a-f]+$/);
    assert.match(entry.cert_chain[0].days_until_expiration, /^\d+$/);
    assert.ok(Date.parse(entry.cert_chain[0].expiration_time) > Date.now());
    assert.equal(entry.ca_cert.length, 1);
  });

  it("/stats?format=json&filter=<regex>, usedonly, and a bad regex", async () => {
    const { stats: list } = JSON.parse(
      (await get(`${mesh.adminUrl}/stats?format=json&filter=${encodeURIComponent("^hub_client\\.total_(check|quota)_calls$")}`)).body,
    );
    assert.deepEqual(
      list.map((s: { name: string }) => s.name),
      ["hub_client.total_check_calls", "hub_client.total_quota_calls"],
    );
    assert.ok(list[0].value >= 3);
    const used = (await get(`${mesh.adminUrl}/stats?usedonly`)).body;
    assert.doesNotMatch(used, /: 0$/m);
    assert.match(used, /^hub_client\.total_check_calls: \d+$/m);
    assert.equal((await get(`${mesh.adminUrl}/stats?filter=(`)).status, 400);
  });

  it("/config_dump?resource= and name_regex", async () => {
    const dump = JSON.parse((await get(`${mesh.adminUrl}/config_dump?resource=listeners&name_regex=${encodeURIComponent("^(in|out)bound$")}`)).body);
    assert.deepEqual(
      dump.configs.map((l: { name: string }) => l.name),
      ["inbound", "outbound"],
    );
    assert.equal((await get(`${mesh.adminUrl}/config_dump?resource=no_such_field`)).status, 404);
  });

  it("/healthcheck/fail fails readiness (DRAINING) while traffic is still served; /healthcheck/ok restores it; both POST only", async () => {
    assert.equal((await get(`${mesh.adminUrl}/healthcheck/fail`)).status, 405);
    assert.equal((await post(`${mesh.adminUrl}/healthcheck/fail`)).status, 200);
    assert.deepEqual(await get(`${mesh.adminUrl}/ready`).then((r) => [r.status, r.body]), [503, "DRAINING\n"]);
    assert.equal(JSON.parse((await get(`${mesh.adminUrl}/server_info`)).body).state, "DRAINING");
    assert.equal((await get(`${statusUrl}/healthz/ready`)).status, 503);
    const served = await get(`${mesh.inboundUrl}/pets/3`);
    assert.equal(served.status, 200, served.body);
    assert.equal((await post(`${mesh.adminUrl}/healthcheck/ok`)).status, 200);
    assert.deepEqual(await get(`${mesh.adminUrl}/ready`).then((r) => [r.status, r.body]), [200, "LIVE\n"]);
    assert.equal((await get(`${statusUrl}/healthz/ready`)).status, 200);
  });

  it("POST /quitquitquit drains and exits 0", async () => {
    assert.equal((await get(`${mesh.adminUrl}/quitquitquit`)).status, 405);
    assert.deepEqual(await post(`${mesh.adminUrl}/quitquitquit`), { status: 200, body: "OK\n" });
    // The sidecar must exit by itself: a SIGTERM from here could land while
    // Node tears down after process.exit, when no handler catches it any more.
    const { proc } = mesh.sidecar;
    const gone = proc.exitCode !== null || proc.signalCode !== null;
    const [code, signal] = gone ? [proc.exitCode, proc.signalCode] : await once(proc, "exit", { signal: AbortSignal.timeout(60_000) });
    assert.deepEqual({ code, signal }, { code: 0, signal: null });
  });
});
