// Test support: processes inside a pod's network namespace.
//
// `ip netns exec <netns>` enters the namespace (and mounts /etc/netns/<netns>/hosts
// over /etc/hosts), then `setpriv` drops to the container's user when one is
// given (the proxy runs as uid/gid 1337, which its capture rules exclude).
// Both exec, so the process started is the program itself, in a process group
// the test owns (test/support/processes.ts kills it in every outcome; the pod
// network kills whatever is still in the namespace when it is removed).
import type { ChildProcess } from "node:child_process";
import type { Pod } from "./netns.ts";
import { type ProcessRun, runProcess, spawnOwned, stopOwned, tail, waitFor } from "./processes.ts";

export interface PodProcessOptions {
  /** Run as this uid and gid (the container's runAsUser/runAsGroup); root when absent. */
  user?: { uid: number; gid: number };
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** The argv that runs `command` in the pod as the given user. */
export function podArgv(pod: Pod, command: readonly string[], user?: { uid: number; gid: number }): string[] {
  const drop = user ? ["setpriv", `--reuid=${user.uid}`, `--regid=${user.gid}`, "--clear-groups", "--"] : [];
  return ["netns", "exec", pod.netns, ...drop, ...command];
}

/** Runs a command in the pod to its end. */
export function runInPod(pod: Pod, command: readonly string[], options: PodProcessOptions & { input?: string } = {}): Promise<ProcessRun> {
  return runProcess("ip", podArgv(pod, command, options.user), { env: options.env ?? process.env, cwd: options.cwd, input: options.input });
}

/** A long-running process in a pod (an app, a sidecar). */
export interface PodProcess {
  readonly pod: Pod;
  readonly name: string;
  readonly proc: ChildProcess;
  output(): string;
  running(): boolean;
  stop(): Promise<number | null>;
}

/** Starts a long-running process in the pod; its output is kept for assertion messages. */
export function startInPod(pod: Pod, name: string, command: readonly string[], options: PodProcessOptions = {}): PodProcess {
  const proc = spawnOwned("ip", podArgv(pod, command, options.user), {
    env: options.env ?? process.env,
    cwd: options.cwd,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  proc.stdout!.setEncoding("utf8").on("data", (c: string) => (out += c));
  proc.stderr!.setEncoding("utf8").on("data", (c: string) => (out += c));
  return {
    pod,
    name,
    proc,
    output: () => out,
    running: () => proc.exitCode === null && proc.signalCode === null,
    stop: () => stopOwned(proc, "SIGTERM", 10_000),
  };
}

/**
 * Waits until `probe` succeeds; fails as soon as the process exits, not at
 * the deadline, and either way with the process's last lines.
 */
export function waitForPodProcess<T>(p: PodProcess, what: string, probe: () => Promise<T | undefined | false>, timeoutMs?: number): Promise<T> {
  const where = `${p.name} in ${p.pod.name}.${p.pod.namespace}`;
  let onExit: (() => void) | undefined;
  const exited = new Promise<never>((_, reject) => {
    onExit = () => reject(new Error(`${where} exited with ${p.proc.exitCode ?? p.proc.signalCode} while waiting for ${what}:\n${tail(p.output())}`));
    if (!p.running()) onExit();
    else p.proc.once("exit", onExit);
  });
  exited.catch(() => undefined);
  const ready = waitFor(`${what} (${where})`, probe, timeoutMs, 200).catch((e: Error) => {
    throw new Error(`${e.message}; its last lines:\n${tail(p.output()) || "(none)"}`);
  });
  return Promise.race([ready, exited]).finally(() => {
    if (onExit) p.proc.off("exit", onExit);
  });
}

/** `curl` in the pod: the status code and body of one request (curl's own failure as status 0 with its message). */
export async function curlInPod(pod: Pod, url: string, extra: readonly string[] = []): Promise<{ status: number; body: string; stderr: string }> {
  const marker = "\n__e2m_status__:";
  const r = await runInPod(pod, ["curl", "-sS", "--max-time", "20", "-w", `${marker}%{http_code}`, ...extra, url]);
  const at = r.stdout.lastIndexOf(marker);
  if (at < 0) return { status: 0, body: r.stdout, stderr: r.stderr };
  return { status: Number(r.stdout.slice(at + marker.length)), body: r.stdout.slice(0, at), stderr: r.stderr };
}
