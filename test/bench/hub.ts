// Benchmark of a real `hubs server` process on loopback (build first: node build/build.mjs).
//   checks per second, and server CPU seconds per 1000 reported requests with report
//   batching on (100 per ReportRequest) and off (1 per ReportRequest), side by side.
// Server CPU is read from the hub's own /metrics (process_cpu_seconds_total, i.e.
// process.cpuUsage() of the server process) before and after each phase, so the
// client's CPU is not counted. Then sidecar-like batches (report_decode.ts) to a
// hub with no handler: its CPU per reported request, and the decoding alone in
// this process. HUB_BENCH_COMPARE=<dir> adds the hubs server of another built
// checkout to the same interleaved rounds (a before and after under one load).
// Run alone: node --import tsx test/bench/hub.ts
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseDocuments } from "../../host/config/documents.ts";
import { decodeHubDocument, isHubDocument } from "../../host/config/resources/hub_rules.ts";
import { check } from "../../host/hubs/check.ts";
import { buildHubConfig } from "../../host/hubs/hub_config.ts";
import { MemQuotaStore } from "../../host/hubs/quota_store.ts";
import { compileRegex } from "../../host/regex/engine.ts";
import { messageType } from "../../host/wire/protos.ts";
import { loadFilter, runReportDecodeBench, sidecarReportRequest } from "./report_decode.ts";
import { median } from "./stats.ts";
import {
  checkRequest,
  DICTIONARY,
  metricsText,
  metricValue,
  reportRequest,
  startHub,
  tempDir,
  writeConfig,
  type HubClient,
  type HubProcess,
} from "../hubs/support/hub_process.ts";

const CHECK_SECONDS = 3;
// More calls in flight only queue up in the client (64 halves the rate on a 2-core machine).
const CHECK_CONCURRENCY = Number(process.env.HUB_BENCH_CONCURRENCY ?? 8);
const REPORTS = 10_000;
const BATCH = 100;
const SIDECAR_ROUNDS = 3;
const COMPARE = process.env.HUB_BENCH_COMPARE;

const CONFIG = `apiVersion: config.mesh.io/v1alpha2
kind: HubRule
metadata: {name: deny-admin}
spec:
  match:
  - clause: {request.path: {prefix: /admin}}
  - clause: {"request.headers[x-user]": {exact: mallory}}
  actions:
  - deny: {message: no}
---
apiVersion: config.mesh.io/v1alpha2
kind: HubRule
metadata: {name: methods}
spec:
  match:
  - clause: {request.path: {regex: "/api/.*"}}
  actions:
  - allowList: {attribute: request.method, values: [GET, POST]}
  - quota: {name: requests}
---
apiVersion: config.mesh.io/v1alpha2
kind: HubQuota
metadata: {name: requests}
spec: {maxAmount: 1000000000, validDuration: 1s}
---
apiVersion: config.mesh.io/v1alpha2
kind: HubAccessLog
metadata: {name: all}
spec: {path: access.jsonl}
`;

function encode(type: string, value: object): Buffer {
  const t = messageType(type);
  return Buffer.from(t.encode(t.fromObject(value)).finish());
}

function requestAttributes(i: number) {
  return {
    "request.path": `/api/items/${i % 50}`,
    "request.method": i % 3 ? "GET" : "POST",
    "request.headers": { "x-user": `user-${i % 7}`, "user-agent": "bench/1.0", ":authority": "shop.example" },
    "source.namespace": "web",
    "destination.service": "items.shop.svc.cluster.local",
    "response.code": 200n,
    "response.size": BigInt(100 + i),
  };
}

async function cpuSeconds(hub: HubProcess): Promise<number> {
  return metricValue(await metricsText(hub), "process_cpu_seconds_total") ?? NaN;
}

/** Runs `total` calls with `concurrency` outstanding; resolves with the wall time in seconds. */
async function drive(client: HubClient, method: "Check" | "Report", payloads: Buffer[], total: number, concurrency: number): Promise<number> {
  let next = 0;
  let failures = 0;
  const start = performance.now();
  const worker = async () => {
    while (next < total) {
      const i = next++;
      const r = await client.callRaw(method, payloads[i % payloads.length]);
      if (r.code !== 0) failures++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  if (failures > 0) throw new Error(`${failures} ${method} calls failed`);
  return (performance.now() - start) / 1000;
}

async function checksFor(client: HubClient, payloads: Buffer[], seconds: number): Promise<number> {
  let done = 0;
  const deadline = performance.now() + seconds * 1000;
  const worker = async () => {
    for (let i = 0; performance.now() < deadline; i++) {
      const r = await client.callRaw("Check", payloads[(done + i) % payloads.length]);
      if (r.code !== 0) throw new Error(`Check failed: ${r.details}`);
      done++;
    }
  };
  await Promise.all(Array.from({ length: CHECK_CONCURRENCY }, worker));
  return done;
}

async function reportPhase(hub: HubProcess, perRequest: number): Promise<{ cpuPer1000: number; reportsPerSecond: number }> {
  const payloads = Array.from({ length: 20 }, (_, j) =>
    encode("mesh.hub.v1.ReportRequest", reportRequest(Array.from({ length: perRequest }, (_, i) => requestAttributes(j * perRequest + i)))),
  );
  const calls = REPORTS / perRequest;
  await drive(hub.client, "Report", payloads, Math.min(calls, 200), Math.min(16, calls)); // warm-up
  const before = await cpuSeconds(hub);
  const wall = await drive(hub.client, "Report", payloads, calls, perRequest === 1 ? CHECK_CONCURRENCY : 8);
  const after = await cpuSeconds(hub);
  return { cpuPer1000: ((after - before) / REPORTS) * 1000, reportsPerSecond: REPORTS / wall };
}

/** The same Check work without gRPC: decode, rules, quota, encode, in this process (µs per check). */
function inProcessCheckMicros(payloads: Buffer[]): number {
  const resources = parseDocuments(CONFIG, "bench.yaml")
    .filter(isHubDocument)
    .map((d) => decodeHubDocument(d, { defaultNamespace: "mesh-system", compileRegex }, []));
  const ctx = { config: buildHubConfig(resources, "mesh-system").config, quotas: new MemQuotaStore(), dictionary: DICTIONARY };
  const req = messageType("mesh.hub.v1.CheckRequest");
  const res = messageType("mesh.hub.v1.CheckResponse");
  const run = (n: number) => {
    for (let i = 0; i < n; i++) res.encode(check(ctx, req.decode(payloads[i % payloads.length]) as never) as object).finish();
  };
  run(5000);
  const n = 50_000;
  const start = performance.now();
  run(n);
  return ((performance.now() - start) / n) * 1000;
}

/**
 * Server CPU µs per reported request for sidecar-like batches (100 entries of
 * 39 attributes) to hubs without handlers: this checkout's, and with
 * HUB_BENCH_COMPARE another's, in interleaved rounds (medians).
 */
async function sidecarReportPhase(): Promise<string[]> {
  const wasm = loadFilter();
  const payloads = Array.from({ length: 4 }, (_, j) => sidecarReportRequest(wasm, j * 100));
  const args = ["--log_output_level", "default:warn"];
  const hubs: Array<{ name: string; hub: HubProcess; micros: number[] }> = [];
  try {
    hubs.push({ name: "this checkout", hub: await startHub(args), micros: [] });
    if (COMPARE) hubs.push({ name: COMPARE, hub: await startHub(args, undefined, join(COMPARE, "build", "out", "hubs.mjs")), micros: [] });
    for (const h of hubs) await drive(h.hub.client, "Report", payloads, 20, 4); // warm-up
    const calls = REPORTS / 100;
    for (let r = 0; r < SIDECAR_ROUNDS; r++) {
      for (const h of hubs) {
        const before = await cpuSeconds(h.hub);
        await drive(h.hub.client, "Report", payloads, calls, 4);
        h.micros.push((((await cpuSeconds(h.hub)) - before) * 1e6) / REPORTS);
      }
    }
  } finally {
    for (const h of hubs) await h.hub.stop();
  }
  return [
    `  sidecar-like batches (${payloads[0].length} bytes: 100 entries of 39 attributes), no handler: server CPU µs per reported request (median of ${SIDECAR_ROUNDS} interleaved rounds)`,
    ...hubs.map((h) => `    ${median(h.micros).toFixed(1).padStart(8)}   ${h.name}`),
  ];
}

export async function runHubBench(): Promise<string> {
  const dir = tempDir("hubs-bench-");
  writeConfig(dir, "config.yaml", CONFIG);
  const hub = await startHub(["--configStoreURL", `fs://${dir}`, "--log_output_level", "default:warn"]);
  try {
    const checkPayloads = Array.from({ length: 64 }, (_, i) =>
      encode("mesh.hub.v1.CheckRequest", checkRequest(requestAttributes(i), { requests: { amount: 1 } })),
    );
    await checksFor(hub.client, checkPayloads, 1); // warm-up
    const cpuBefore = await cpuSeconds(hub);
    const checks = await checksFor(hub.client, checkPayloads, CHECK_SECONDS);
    const cpuAfter = await cpuSeconds(hub);
    const micros = inProcessCheckMicros(checkPayloads);
    const batched = await reportPhase(hub, BATCH);
    const single = await reportPhase(hub, 1);
    const f = (n: number, digits = 3) => n.toFixed(digits).padStart(12);
    return [
      `hub (hubs server process on loopback; ${CHECK_CONCURRENCY} calls in flight; server CPU from its process_cpu_seconds_total)`,
      `  checks/s                         ${f(checks / CHECK_SECONDS, 0)}   (server CPU ${(((cpuAfter - cpuBefore) / checks) * 1e6).toFixed(1)} µs per check, 2 rules + 1 quota)`,
      `  check work without gRPC           ${f(micros, 1)} µs per check (decode, rules, quota, encode; in this process)`,
      `  reports, ${REPORTS} requests          batched (${BATCH}/ReportRequest)   unbatched (1/ReportRequest)`,
      `  server CPU s per 1000 reports    ${f(batched.cpuPer1000)}               ${f(single.cpuPer1000)}`,
      `  reported requests/s              ${f(batched.reportsPerSecond, 0)}               ${f(single.reportsPerSecond, 0)}`,
      `  access log: ${join(dir, "access.jsonl")}`,
      ...(await sidecarReportPhase()),
      ...runReportDecodeBench(),
    ].join("\n");
  } finally {
    await hub.stop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(await runHubBench());
}
