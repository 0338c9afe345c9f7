import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";

/**
 * Child processes this process owns: each runs in its own process group
 * (spawned detached), and every group still alive is killed when this
 * process exits or is told to stop (SIGINT, SIGTERM, SIGHUP) — also when the
 * code that started it failed before it could stop it. Temporary folders
 * made with `ownedTempDir` go at the same moments. `npm start`,
 * `meshctl x simulate` and the tests start their daemons through here.
 */
const owned = new Map<number, ChildProcess>();
const ownedDirs = new Set<string>();

/** How long `startDaemon` waits for the listening line by default: a loaded machine is slow, an idle one never waits this long. */
export const DEFAULT_READY_TIMEOUT_MS = 120_000;
/** How long `stop` lets a process exit on its own signal before it kills the process group. */
export const DEFAULT_STOP_GRACE_MS = 60_000;

let hooksInstalled = false;
function installExitHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on("exit", () => {
    killOwnedProcesses("SIGKILL");
    removeOwnedTempDirs();
  });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    const onSignal = () => {
      killOwnedProcesses("SIGTERM");
      // Another handler (a daemon's graceful stop) decides when to exit; alone, behave as the default would.
      if (process.listenerCount(signal) === 1) {
        removeOwnedTempDirs();
        process.off(signal, onSignal);
        process.kill(process.pid, signal);
      }
    };
    process.on(signal, onSignal);
  }
}

/** Sends a signal to the process group of every owned child still running (SIGKILL: synchronous and final). */
export function killOwnedProcesses(signal: NodeJS.Signals = "SIGKILL"): void {
  for (const proc of owned.values()) signalGroup(proc, signal);
}

/**
 * Stops every owned child: SIGTERM to each process group (a child that owns
 * processes of its own stops them), then SIGKILL to the groups still running
 * after `graceMs`.
 */
export async function stopOwnedProcesses(graceMs = 10_000): Promise<void> {
  await Promise.all([...owned.values()].map((proc) => stopOwned(proc, "SIGTERM", graceMs)));
}

/** A new folder under the system's temporary folder, removed (with its contents) when this process exits. */
export function ownedTempDir(prefix: string): string {
  installExitHooks();
  const dir = mkdtempSync(join(tmpdir(), prefix));
  ownedDirs.add(dir);
  return dir;
}

/** Removes one folder from `ownedTempDir` now. */
export function removeOwnedTempDir(dir: string): void {
  ownedDirs.delete(dir);
  rmSync(dir, { recursive: true, force: true });
}

function removeOwnedTempDirs(): void {
  for (const dir of ownedDirs) removeOwnedTempDir(dir);
}

function signalGroup(proc: ChildProcess, signal: NodeJS.Signals): void {
  if (proc.pid === undefined) return;
  try {
    process.kill(-proc.pid, signal);
  } catch {
    try {
      proc.kill(signal);
    } catch {
      // Already gone.
    }
  }
}

/** `spawn`, in a process group of its own that this process owns (see above). */
export function spawnOwned(command: string, args: readonly string[], options: SpawnOptions = {}): ChildProcess {
  installExitHooks();
  const proc = spawn(command, args, { ...options, detached: true });
  if (proc.pid !== undefined) {
    const pid = proc.pid;
    owned.set(pid, proc);
    // The group may hold grandchildren: it goes when its leader goes.
    proc.once("exit", () => {
      owned.delete(pid);
      signalGroup(proc, "SIGKILL");
    });
  }
  return proc;
}

const running = (proc: ChildProcess) => proc.exitCode === null && proc.signalCode === null;

/**
 * Sends `signal` to the child's process group and waits for the child to
 * exit; a child still running after `graceMs` is killed with its group.
 * Resolves with the exit code (null after a signal).
 */
export function stopOwned(proc: ChildProcess, signal: NodeJS.Signals = "SIGTERM", graceMs = DEFAULT_STOP_GRACE_MS): Promise<number | null> {
  if (!running(proc)) return Promise.resolve(proc.exitCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => signalGroup(proc, "SIGKILL"), graceMs);
    proc.once("exit", (code) => {
      clearTimeout(timer);
      resolve(code);
    });
    signalGroup(proc, signal);
  });
}

/** The last lines of a log, for an error message. */
export function lastLines(text: string, n = 20): string {
  const lines = text.trimEnd().split("\n");
  return (lines.length > n ? [`… (${lines.length - n} earlier lines)`, ...lines.slice(-n)] : lines).join("\n");
}

/** A daemon started as a child process, with the JSON of its listening line. */
export interface Daemon<T> {
  proc: ChildProcess;
  listening: T;
  output(): string;
  /** SIGTERM (or another signal) to its process group, and wait for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `node <script> <args>` as an owned child and waits for the line
 * `<prefix>{json}` on stdout, which the project's daemons print once every
 * listener is bound. When it does not come (the process exits, or
 * `timeoutMs` passes: it is then killed), the error names the program, its
 * pid and its last log lines.
 */
export function startDaemon<T>(
  script: string,
  args: string[],
  prefix: string,
  timeoutMs = DEFAULT_READY_TIMEOUT_MS,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Daemon<T>> {
  const name = `${basename(script)}${args[0] && !args[0].startsWith("-") ? ` ${args[0]}` : ""}`;
  return startProgram<T>({ name, command: process.execPath, args: [script, ...args], prefix, timeoutMs, env });
}

/** What startProgram runs and waits for. */
export interface ProgramLaunch {
  /** Names the program in errors. */
  name: string;
  command: string;
  args: readonly string[];
  /** The start of the line `<prefix>{json}` it prints on stdout once it listens. */
  prefix: string;
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

/**
 * startDaemon for any command: a daemon run under another program (a
 * profiler, valgrind) is waited for the same way.
 */
export function startProgram<T>(launch: ProgramLaunch): Promise<Daemon<T>> {
  const { name, prefix, timeoutMs = DEFAULT_READY_TIMEOUT_MS, env = process.env } = launch;
  const proc = spawnOwned(launch.command, launch.args, { stdio: ["ignore", "pipe", "pipe"], env });
  let out = "";
  proc.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  proc.stderr!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      proc.stdout!.off("data", onData);
      reject(new Error(`${name} (pid ${proc.pid ?? "none"}) ${why}; its last log lines:\n${lastLines(out) || "(none)"}`));
    };
    const timer = setTimeout(() => {
      signalGroup(proc, "SIGKILL");
      fail(`did not print "${prefix.trim()}" within ${Math.round(timeoutMs / 1000)} s`);
    }, timeoutMs);
    const onData = () => {
      // Complete lines only: a chunk may end inside the JSON.
      const line = out
        .split("\n")
        .slice(0, -1)
        .find((l) => l.startsWith(prefix));
      if (line === undefined) return;
      clearTimeout(timer);
      proc.stdout!.off("data", onData);
      proc.off("exit", onExit);
      resolve({
        proc,
        listening: JSON.parse(line.slice(prefix.length)) as T,
        output: () => out,
        stop: (signal = "SIGTERM") => stopOwned(proc, signal).then(() => exited),
      });
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => fail(`exited with ${code ?? signal} before listening`);
    proc.stdout!.on("data", onData);
    proc.once("exit", onExit);
    proc.once("error", (e) => fail(`could not start: ${e.message}`));
  });
}
