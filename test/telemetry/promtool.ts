// Prometheus's own linter, `promtool check metrics`, run on exposition text.
// Debian's `prometheus` package provides it (.ci/run installs it). Without it
// a test is skipped with the reason, except in CI (CI=true), where a missing
// promtool is a failure: the lint must never pass by not running.
import { spawnSync } from "node:child_process";
import type { TestContext } from "node:test";

export function promtoolAvailable(): boolean {
  const r = spawnSync("promtool", ["--version"], { stdio: "ignore" });
  return r.error === undefined && r.status === 0;
}

/**
 * True when promtool can run; otherwise skips the test (or, in CI, throws).
 * Use: `if (!needPromtool(t)) return;`.
 */
export function needPromtool(t: TestContext): boolean {
  if (promtoolAvailable()) return true;
  if (process.env.CI === "true") throw new Error("promtool is not installed: CI must install Debian's prometheus package (see .ci/run)");
  t.skip("promtool is not installed (apt-get install prometheus); the metrics lint did not run");
  return false;
}

/** promtool's findings on `text` (empty: clean), and its exit code. */
export function promtoolCheck(text: string): { status: number | null; problems: string } {
  const r = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
  if (r.error) throw r.error;
  return { status: r.status, problems: `${r.stdout}${r.stderr}`.trim() };
}
