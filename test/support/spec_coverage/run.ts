// Running the built programs for the coverage probes: a command to its end,
// or a daemon until its listening line (then stopped). Every process is
// owned (host/demo/processes.ts): killed with its group if the run ends first.
import type { ChildProcess } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnOwned, stopOwned } from "../../../host/demo/processes.ts";

export const OUT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "build", "out");
export const program = (name: string) => join(OUT, `${name}.mjs`);

export interface Finished {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A probe must end; a program that hangs fails the whole generation rather than being classified by a timer. */
const RUN_LIMIT_MS = 120_000;

/** The environment every probe starts from: no variable of the caller's that a program reads. */
export function baseEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const keep = ["PATH", "HOME", "TMPDIR", "LANG", "MESH_TEST_RUN"];
  const env: NodeJS.ProcessEnv = { NO_COLOR: "1", TERM: "dumb" };
  for (const k of keep) if (process.env[k] !== undefined) env[k] = process.env[k];
  return { ...env, ...extra };
}

function collect(proc: ChildProcess) {
  const out = { stdout: "", stderr: "" };
  proc.stdout!.setEncoding("utf8").on("data", (c: string) => (out.stdout += c));
  proc.stderr!.setEncoding("utf8").on("data", (c: string) => (out.stderr += c));
  return out;
}

let probeCwd: string | undefined;
/** The folder programs run in (a command that writes relative paths writes there, never in the repository). */
export function setProbeCwd(dir: string | undefined): void {
  probeCwd = dir;
}

/** Programs run so far, by name (main.ts reports them: the cost of a generation is its runs). */
export const RUNS = new Map<string, number>();
const counted = (name: string) => RUNS.set(name, (RUNS.get(name) ?? 0) + 1);

/** Runs `node <program>.mjs args…` to its end. */
export function runProgram(name: string, args: readonly string[], env: NodeJS.ProcessEnv = baseEnv(), input = ""): Promise<Finished> {
  counted(name);
  return new Promise((resolve, reject) => {
    const proc = spawnOwned(process.execPath, [program(name), ...args], { stdio: ["pipe", "pipe", "pipe"], env, cwd: probeCwd });
    const out = collect(proc);
    const timer = setTimeout(() => {
      void stopOwned(proc, "SIGKILL", 0);
      reject(new Error(`${name} ${args.join(" ")}: no end within ${RUN_LIMIT_MS / 1000} s`));
    }, RUN_LIMIT_MS);
    proc.on("error", reject);
    proc.on("close", (status) => {
      clearTimeout(timer);
      resolve({ status, ...out });
    });
    proc.stdin!.on("error", () => undefined);
    proc.stdin!.end(input);
  });
}

export type Attempt =
  | { readonly started: true; readonly listening: Record<string, unknown>; readonly stderr: string; stop(): Promise<void> }
  | ({ readonly started: false } & Finished);

/**
 * Starts a daemon and waits for the line starting with `prefix` on stdout
 * (its listening line, JSON after the prefix), or for its exit.
 */
export function attemptStart(name: string, args: readonly string[], prefix: string, env: NodeJS.ProcessEnv): Promise<Attempt> {
  counted(name);
  return new Promise((resolve, reject) => {
    const proc = spawnOwned(process.execPath, [program(name), ...args], { stdio: ["ignore", "pipe", "pipe"], env, cwd: probeCwd });
    const out = collect(proc);
    let done = false;
    const timer = setTimeout(() => {
      done = true;
      void stopOwned(proc, "SIGKILL", 0);
      reject(new Error(`${name} ${args.join(" ")}: neither listening nor exited within ${RUN_LIMIT_MS / 1000} s; stderr:\n${out.stderr.slice(-2000)}`));
    }, RUN_LIMIT_MS);
    proc.stdout!.on("data", () => {
      if (done) return;
      const line = out.stdout
        .split("\n")
        .slice(0, -1)
        .find((l) => l.startsWith(prefix));
      if (line === undefined) return;
      done = true;
      clearTimeout(timer);
      resolve({
        started: true,
        listening: JSON.parse(line.slice(prefix.length)) as Record<string, unknown>,
        get stderr() {
          return out.stderr;
        },
        stop: async () => {
          await stopOwned(proc, "SIGKILL", 0);
        },
      });
    });
    proc.on("error", reject);
    proc.on("close", (status) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({ started: false, status, ...out });
    });
  });
}

/** Runs `tasks` at most `limit` at a time, keeping their order in the result. */
export async function pool<T>(limit: number, tasks: ReadonlyArray<() => Promise<T>>): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}

/** The first line of a program's complaint, without its program prefix, temp paths or ports (the table must not change between runs). */
export function firstLine(text: string, scrub: readonly string[] = []): string {
  const line =
    text
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l && !/deprecated and will be removed/.test(l)) ?? "";
  // Log lines: without their timestamp.
  let out = line.replace(/^\d{4}-\d\d-\d\dT[\d:.]+Z\s+/, "").replace(/\t/g, " ");
  for (const s of scrub) out = out.split(s).join("<tmp>");
  return out.replace(/127\.0\.0\.1:\d+/g, "127.0.0.1:<port>").replace(/\s+/g, " ");
}
