import { join } from "node:path";
import autocannon from "autocannon";
import { startLocalMesh } from "../../host/demo/local_mesh.ts";
import { startDaemon } from "../../host/demo/processes.ts";
import { cpuSeconds, rssMiB } from "./process_usage.ts";

const DURATION_S = Number(process.env.SIDECAR_BENCH_SECONDS ?? 5);
const CONNECTIONS = 16;
const ROUNDS = 2;

interface Run {
  rps: number;
  p50: number;
  p99: number;
  cpuPer1000: number;
  errors: number;
}

async function load(url: string, pid: number): Promise<Run> {
  const cpuBefore = cpuSeconds(pid);
  const result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION_S, pipelining: 1 });
  const cpu = cpuSeconds(pid) - cpuBefore;
  const requests = result.requests.total;
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuPer1000: requests > 0 ? (cpu / requests) * 1000 : Number.NaN,
    errors: result.errors + result.non2xx,
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/**
 * Requests per second, latency percentiles, CPU seconds per 1000 requests and
 * RSS through the sidecar (filter on, answers from the check cache) and
 * through a bare Node forwarding proxy to the same app, interleaved in one run.
 */
export async function runSidecarBench(): Promise<string[]> {
  // No hub rules: every check is allowed (and unknown quotas granted), so
  // what is measured is the filter and the proxy, not denials.
  const mesh = await startLocalMesh({ hubConfig: "" });
  const bare = await startDaemon<{ port: number }>(join(import.meta.dirname, "bare_proxy.mjs"), [String(mesh.app.port)], "bare-proxy listening ");
  try {
    const sidecarUrl = `${mesh.inboundUrl}/pets/42?key=bench`;
    const bareUrl = `http://127.0.0.1:${bare.listening.port}/pets/42?key=bench`;
    // Warm up both (JIT, the check cache, keep-alive pools).
    await autocannon({ url: sidecarUrl, connections: 4, amount: 2000 });
    await autocannon({ url: bareUrl, connections: 4, amount: 2000 });
    const sidecar: Run[] = [];
    const baseline: Run[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      sidecar.push(await load(sidecarUrl, mesh.sidecar.proc.pid!));
      baseline.push(await load(bareUrl, bare.proc.pid!));
    }
    const row = (name: string, runs: Run[], rss: number) =>
      `${name.padEnd(22)} ${median(runs.map((r) => r.rps)).toFixed(0).padStart(8)}  ${median(runs.map((r) => r.p50)).toFixed(1).padStart(7)}  ${median(runs.map((r) => r.p99)).toFixed(1).padStart(7)}  ${median(runs.map((r) => r.cpuPer1000)).toFixed(3).padStart(14)}  ${rss.toFixed(0).padStart(7)}  ${runs.reduce((a, r) => a + r.errors, 0)}`;
    const s = median(sidecar.map((r) => r.rps));
    const b = median(baseline.map((r) => r.rps));
    return [
      `sidecar vs bare Node proxy: ${CONNECTIONS} connections, ${DURATION_S} s x ${ROUNDS} interleaved rounds (medians)`,
      `${"".padEnd(22)} ${"req/s".padStart(8)}  ${"p50 ms".padStart(7)}  ${"p99 ms".padStart(7)}  ${"CPU s/1000 req".padStart(14)}  ${"RSS MiB".padStart(7)}  non-2xx+errors`,
      row("sidecar (filter on)", sidecar, rssMiB(mesh.sidecar.proc.pid!)),
      row("bare Node proxy", baseline, rssMiB(bare.proc.pid!)),
      `sidecar throughput / bare proxy: ${(s / b).toFixed(2)}; CPU per request sidecar / bare: ${(median(sidecar.map((r) => r.cpuPer1000)) / median(baseline.map((r) => r.cpuPer1000))).toFixed(2)}`,
    ];
  } finally {
    await bare.stop();
    await mesh.stop();
  }
}
