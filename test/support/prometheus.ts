// Test support: Debian's prometheus (unpacked by `npm test` into
// build/out/tools, test/telemetry/promtool.ts) scraping the given targets
// every second, with its configuration and storage in a temporary folder, on
// a free loopback port; owned by the test file's process (processes.ts), so
// it is stopped in every outcome.
import type { ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { prometheusProgram } from "../telemetry/promtool.ts";
import { spawnOwned, stopOwned, tempDir, waitFor } from "./processes.ts";

export interface PrometheusServer {
  url: string;
  /** An instant query's result vector: labels and value of each series. */
  query(promql: string): Promise<Array<{ metric: Record<string, string>; value: number }>>;
  /** The scrape targets with their health (`up`, `down`, `unknown`). */
  targets(): Promise<Array<{ scrapeUrl: string; health: string; lastError: string }>>;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

/** Starts prometheus scraping `targets` (`HOST:PORT`, path /metrics) as job `job`; resolves once it is ready. */
export async function startPrometheus(job: string, targets: readonly string[]): Promise<PrometheusServer> {
  const dir = tempDir("mesh-prometheus-");
  const config = join(dir, "prometheus.yml");
  writeFileSync(config, `global: {scrape_interval: 1s, evaluation_interval: 1s}\nscrape_configs:\n- job_name: ${job}\n  static_configs:\n  - targets: [${targets.map((t) => JSON.stringify(t)).join(", ")}]\n`);
  const port = await freePort();
  let output = "";
  const proc: ChildProcess = spawnOwned(prometheusProgram("prometheus"), [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`, "--log.level=warn"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  proc.stdout!.on("data", (c: Buffer) => (output += c.toString()));
  proc.stderr!.on("data", (c: Buffer) => (output += c.toString()));
  const url = `http://127.0.0.1:${port}`;
  const spawnError = new Promise<never>((_, reject) => proc.once("error", (e) => reject(new Error(`prometheus could not start (${e.message}): node build/system-tools.mjs unpacks it`))));
  await Promise.race([
    spawnError,
    waitFor("prometheus to be ready", async () => {
      if (proc.exitCode !== null) throw new Error(`prometheus exited with ${proc.exitCode}: ${output.slice(-2000)}`);
      return (await fetch(`${url}/-/ready`)).ok;
    }),
  ]);
  const api = async (path: string) => {
    const body = (await (await fetch(`${url}${path}`)).json()) as { status: string; data: unknown; error?: string };
    if (body.status !== "success") throw new Error(`prometheus ${path}: ${body.error}`);
    return body.data;
  };
  return {
    url,
    query: async (promql) => {
      const data = (await api(`/api/v1/query?query=${encodeURIComponent(promql)}`)) as { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
      return data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    targets: async () => ((await api("/api/v1/targets")) as { activeTargets: Array<{ scrapeUrl: string; health: string; lastError: string }> }).activeTargets,
    stop: async () => {
      await stopOwned(proc, "SIGTERM", 10_000);
    },
  };
}
