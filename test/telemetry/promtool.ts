// Prometheus's own linter, `promtool check metrics`, run on exposition text.
// Debian's `prometheus` package provides it; `npm test` unpacks it into
// build/out/tools when it is not installed (build/system-tools.mjs). The lint
// never passes by not running: without promtool the test fails, naming the fix.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import type { TestContext } from "node:test";
import { fileURLToPath } from "node:url";

const unpacked = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "build", "out", "tools", "prometheus", "usr", "bin");

/** The prometheus package's program `name` (promtool, prometheus): on PATH, or where `npm test` unpacked it. */
export function prometheusProgram(name: string): string {
  const local = join(unpacked, name);
  return existsSync(local) ? local : name;
}

export function promtoolAvailable(): boolean {
  const r = spawnSync(prometheusProgram("promtool"), ["--version"], { stdio: "ignore" });
  return r.error === undefined && r.status === 0;
}

/** True when promtool can run; otherwise throws naming how to get it. Use: `needPromtool(t);`. */
export function needPromtool(_t?: TestContext): true {
  if (promtoolAvailable()) return true;
  throw new Error("promtool is not installed: run `node build/system-tools.mjs` (npm test does), or apt-get install prometheus");
}

/** promtool's findings on `text` (empty: clean), and its exit code. */
export function promtoolCheck(text: string): { status: number | null; problems: string } {
  const r = spawnSync(prometheusProgram("promtool"), ["check", "metrics"], { input: text, encoding: "utf8" });
  if (r.error) throw r.error;
  return { status: r.status, problems: `${r.stdout}${r.stderr}`.trim() };
}
