// `meshctl analyze --use-kube=false -A` on 1 000 documents through the built
// CLI: upstream's bookinfo sample (its Services, Deployments, gateway,
// DestinationRules and VirtualServices, renamed; test/cli/fixtures/upstream/
// samples) copied into as many namespaces as it takes, with 100 documents run
// beside it for the ratio. Prints the CPU seconds of each whole process
// (start-up included, as a user runs it) and the load average around them.
//   npm run build && node --import tsx test/bench/analyze.ts
import { readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { ownedTempDir, removeOwnedTempDir, spawnOwned } from "../../host/demo/processes.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const MESHCTL = join(ROOT, "build", "out", "meshctl.mjs");
const SAMPLES = join(ROOT, "test", "cli", "fixtures", "upstream", "samples", "bookinfo");
const SOURCES = [
  "platform/kube/bookinfo.yaml",
  "networking/bookinfo-gateway.yaml",
  "networking/destination-rule-all.yaml",
  "networking/virtual-service-all-v1.yaml",
];
export const ANALYZE_BENCH_DOCUMENTS = 1000;

/** `count` documents: bookinfo's, in namespaces bench-0, bench-1, … (each copy complete). */
export function benchDocuments(count: number): string {
  const base = SOURCES.flatMap((f) => parseAllDocuments(readFileSync(join(SAMPLES, f), "utf8")).map((d) => d.toJSON() as Record<string, unknown>)).filter(
    Boolean,
  );
  const out: string[] = [];
  for (let n = 0; out.length < count; n++) {
    for (const doc of base) {
      if (out.length === count) break;
      const copy = structuredClone(doc) as { metadata: Record<string, unknown> };
      copy.metadata = { ...copy.metadata, namespace: `bench-${n}` };
      out.push(JSON.stringify(copy));
    }
  }
  return out.join("\n---\n");
}

/** Runs the CLI on a file; resolves with its exit status and the CPU seconds (user + system) the process used. */
function analyzeCpu(file: string, preload: string): Promise<{ status: number | null; cpu: number; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawnOwned(
      process.execPath,
      ["--require", preload, MESHCTL, "analyze", "--use-kube=false", "-A", "-o", "json", "--failure-threshold", "Error", file],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let stderr = "";
    child.stderr!.on("data", (c) => (stderr += c));
    child.on("close", (status) => {
      const m = /^bench-cpu (\d+) (\d+)$/m.exec(stderr);
      resolve({ status, cpu: m ? (Number(m[1]) + Number(m[2])) / 1e6 : Number.NaN, stderr });
    });
  });
}

export async function runAnalyzeBench(): Promise<string[]> {
  const dir = ownedTempDir("mesh-bench-analyze-");
  try {
    // Reports the process's own CPU time as it exits.
    const preload = join(dir, "cpu.cjs");
    writeFileSync(
      preload,
      `process.on("exit", () => { const u = process.cpuUsage(); process.stderr.write("bench-cpu " + u.user + " " + u.system + "\\n"); });\n`,
    );
    const big = join(dir, "thousand.yaml");
    const small = join(dir, "hundred.yaml");
    writeFileSync(big, benchDocuments(ANALYZE_BENCH_DOCUMENTS));
    writeFileSync(small, benchDocuments(ANALYZE_BENCH_DOCUMENTS / 10));
    const loadBefore = loadavg()[0];
    const runs: Array<{ small: number; big: number }> = [];
    for (let i = 0; i < 3; i++) {
      const s = await analyzeCpu(small, preload);
      const b = await analyzeCpu(big, preload);
      // 79: findings (the copies' Gateways conflict with each other on the one ingress gateway), as analyze reports them.
      for (const r of [s, b])
        if ((r.status !== 0 && r.status !== 79) || Number.isNaN(r.cpu)) throw new Error(`meshctl analyze exited ${r.status}:\n${r.stderr}`);
      runs.push({ small: s.cpu, big: b.cpu });
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const big1000 = median(runs.map((r) => r.big));
    const small100 = median(runs.map((r) => r.small));
    return [
      `meshctl analyze --use-kube=false -A, ${ANALYZE_BENCH_DOCUMENTS} documents: ${big1000.toFixed(2)} s CPU (median of 3; budget 3 s)`,
      `meshctl analyze --use-kube=false -A, ${ANALYZE_BENCH_DOCUMENTS / 10} documents: ${small100.toFixed(2)} s CPU; ${ANALYZE_BENCH_DOCUMENTS} / ${ANALYZE_BENCH_DOCUMENTS / 10} documents: ${(big1000 / small100).toFixed(2)}x`,
      `load average (1 min) before ${loadBefore.toFixed(2)}, after ${loadavg()[0].toFixed(2)}`,
    ];
  } finally {
    removeOwnedTempDir(dir);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) for (const line of await runAnalyzeBench()) console.log(line);
