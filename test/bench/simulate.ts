// `meshctl x simulate` on a file of 50 scenarios: the fixtures of rules 1–13
// (test/cli/fixtures/simulate: mtls, jwt, authz_gateway; 46 scenarios) and
// the first 4 of them again, through the built CLI. Prints the wall time of
// the whole run, per scenario, and the load average around it.
//   npm run build && node --import tsx test/bench/simulate.ts
import { readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { ownedTempDir, removeOwnedTempDir, spawnOwned } from "../../host/demo/processes.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const MESHCTL = join(ROOT, "build", "out", "meshctl.mjs");
const FIXTURES = join(ROOT, "test", "cli", "fixtures", "simulate");
export const SIMULATE_BENCH_SCENARIOS = 50;

/** 50 scenarios with distinct ids, from the rule fixtures. */
export function benchScenarios(): unknown[] {
  const all = ["mtls.json", "jwt.json", "authz_gateway.json"].flatMap(
    (f) => (JSON.parse(readFileSync(join(FIXTURES, f), "utf8")) as { scenarios: Array<{ id: string }> }).scenarios,
  );
  const out = [...all];
  for (let i = 0; out.length < SIMULATE_BENCH_SCENARIOS; i++) out.push({ ...all[i], id: `${all[i].id}-again` });
  return out;
}

export async function runSimulateBench(): Promise<string[]> {
  const dir = ownedTempDir("mesh-bench-simulate-");
  try {
    const file = join(dir, "fifty.json");
    writeFileSync(file, JSON.stringify({ scenarios: benchScenarios() }));
    const loadBefore = loadavg()[0];
    const started = performance.now();
    const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawnOwned(process.execPath, [MESHCTL, "x", "simulate", "-f", file], { stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout!.on("data", (c) => (stdout += c));
      child.stderr!.on("data", (c) => (stderr += c));
      child.on("close", (status) => resolve({ status, stdout, stderr }));
    });
    const seconds = (performance.now() - started) / 1000;
    const lines = run.stdout.trim().split("\n").filter(Boolean).length;
    if (run.status !== 0 || lines !== SIMULATE_BENCH_SCENARIOS) throw new Error(`meshctl x simulate exited ${run.status} with ${lines} lines:\n${run.stderr}`);
    return [
      `meshctl x simulate, ${SIMULATE_BENCH_SCENARIOS} scenarios (--parallel 8): ${seconds.toFixed(1)} s, ${((seconds * 1000) / SIMULATE_BENCH_SCENARIOS).toFixed(0)} ms per scenario`,
      `load average (1 min) before ${loadBefore.toFixed(2)}, after ${loadavg()[0].toFixed(2)}`,
    ];
  } finally {
    removeOwnedTempDir(dir);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) for (const line of await runSimulateBench()) console.log(line);
