// Test support: the one owner of the processes and temporary folders tests make.
//
// Every process a test starts goes through host/demo/processes.ts (its own
// process group, killed on exit and on signals); importing this module also
// registers a root `after` hook in the test file, so whatever a suite could
// not stop (a failed `before`, a thrown assertion before `stop()`) is killed
// with its group and the file's temporary folders are removed before the
// runner moves on. Readiness is awaited by polling with limits a loaded
// machine can meet.
import type { SpawnOptions } from "node:child_process";
import { appendFileSync, readFileSync } from "node:fs";
import { after } from "node:test";
import {
  type Daemon,
  DEFAULT_READY_TIMEOUT_MS,
  killOwnedProcesses,
  lastLines,
  ownedTempDir,
  spawnOwned,
  startDaemon as startOwnedDaemon,
  stopOwned,
  stopOwnedProcesses,
} from "../../host/demo/processes.ts";

export { type Daemon, killOwnedProcesses, lastLines, spawnOwned, stopOwned, stopOwnedProcesses };

/** No readiness wait in a test is shorter than this, whatever a caller asks: a busy 2-core machine is slow to start a process. */
export const MIN_READY_TIMEOUT_MS = 60_000;

/** A readiness limit of at least MIN_READY_TIMEOUT_MS (default: DEFAULT_READY_TIMEOUT_MS). */
export function readyTimeout(requestedMs?: number): number {
  return Math.max(requestedMs ?? DEFAULT_READY_TIMEOUT_MS, MIN_READY_TIMEOUT_MS);
}

if (process.env.NODE_TEST_CONTEXT !== undefined) {
  // Runs once all suites of the file are done, whatever their outcome.
  after(() => stopOwnedProcesses());
  // The runner ends a test file's process as soon as its tests are done
  // (--test-force-exit). Reports still queued behind a full stdout pipe (the
  // runner busy on a loaded machine) went with it, and the run counted fewer
  // tests than ran (nodejs/node#64833): with blocking writes every report is
  // in the pipe before the process can exit.
  (process.stdout as unknown as { _handle?: { setBlocking?: (blocking: boolean) => number } })._handle?.setBlocking?.(true);
  const cpuLog = process.env.MESH_TEST_CPU_LOG;
  if (cpuLog) process.once("exit", () => recordCpu(cpuLog));
}

/**
 * Appends this test file's CPU seconds to `log` (one JSON line): its own and
 * that of the children it waited for (the programs it ran and the daemons it
 * stopped), from Linux's /proc/self/stat; elsewhere nothing is written. The
 * runner's durations reporter lists the files that cost most CPU: on a shared
 * 2-core machine that, more than wall time, is what makes `npm test` long.
 */
function recordCpu(log: string): void {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // After the command: state is field 3, so utime (14), stime (15), cutime (16) and cstime (17) are at 11–14; clock ticks of 1/100 s.
    const [utime, stime, cutime, cstime] = fields.slice(11, 15).map((f) => Number(f) / 100);
    appendFileSync(log, `${JSON.stringify({ file: process.argv[1], own: utime + stime, children: cutime + cstime })}\n`);
  } catch {
    // Not Linux, or the log is gone: the figures are a report, not a result.
  }
}

/** A temporary folder removed when the test file's process exits. */
export function tempDir(prefix = "mesh-test-"): string {
  return ownedTempDir(prefix);
}

/** `startDaemon` with a test's readiness limit (at least MIN_READY_TIMEOUT_MS). */
export function startDaemon<T>(script: string, args: string[], prefix: string, timeoutMs?: number, env: NodeJS.ProcessEnv = process.env): Promise<Daemon<T>> {
  return startOwnedDaemon<T>(script, args, prefix, readyTimeout(timeoutMs), env);
}

/**
 * Polls `probe` until it returns something other than undefined or false,
 * and returns that. A probe that throws is tried again; the error names
 * what was awaited, the limit and the last failure.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs?: number,
  everyMs = 50,
): Promise<T> {
  const limit = readyTimeout(timeoutMs);
  const deadline = Date.now() + limit;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value as T;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${Math.round(limit / 1000)} s waiting for ${what}${last ? `: ${(last as Error).message ?? last}` : ""}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export interface ProcessRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to its end without blocking the event loop (a test may
 * serve something meanwhile), as an owned process: killed with its group if
 * the test file ends first.
 */
export function runProcess(command: string, args: readonly string[], options: SpawnOptions & { input?: string } = {}): Promise<ProcessRun> {
  return new Promise((resolve, reject) => {
    const { input, ...spawnOptions } = options;
    const child = spawnOwned(command, args, { ...spawnOptions, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8").on("data", (c: string) => (stdout += c));
    child.stderr!.setEncoding("utf8").on("data", (c: string) => (stderr += c));
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, stdout, stderr }));
    child.stdin!.on("error", () => undefined);
    child.stdin!.end(input);
  });
}

/** The last lines of a process's output, for an assertion message. */
export function tail(text: string, n = 20): string {
  return lastLines(text, n);
}
