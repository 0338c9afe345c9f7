// Test support for the capture tests: network namespaces this test file
// creates and removes in every outcome (an `after` hook and process exit),
// named `cap<owner pid in base 36>-<label>`; namespaces (and links) of owners
// no longer running are swept at the first creation.
import { type ChildProcess, execFileSync, spawnSync } from "node:child_process";
import { after } from "node:test";
import { readyTimeout, spawnOwned, stopOwned, tail } from "../support/processes.ts";

const PREFIX = "cap";
const NAME = /^cap([0-9a-z]+)-/;
const made = new Set<string>();
let swept = false;

/** Runs a command to its end; throws naming it, its status and stderr. */
export function sh(command: string, args: readonly string[], input?: string): string {
  try {
    return execFileSync(command, args, { encoding: "utf8", input, stdio: ["pipe", "pipe", "pipe"] });
  } catch (e) {
    const err = e as { stderr?: string; status?: number };
    throw new Error(`${command} ${args.join(" ")}: exit ${err.status}: ${(err.stderr ?? String(e)).trim()}`);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

function deadOwner(name: string): boolean {
  const m = NAME.exec(name);
  if (!m) return false;
  const owner = Number.parseInt(m[1], 36);
  return owner !== process.pid && !alive(owner);
}

function removeNamespace(name: string): void {
  const pids = spawnSync("ip", ["netns", "pids", name], { encoding: "utf8" }).stdout ?? "";
  for (const pid of pids.split("\n").filter(Boolean)) {
    try {
      process.kill(Number(pid), "SIGKILL");
    } catch {
      // Gone already.
    }
  }
  spawnSync("ip", ["netns", "delete", name], { stdio: "ignore" });
}

function sweep(): void {
  swept = true;
  const names = sh("ip", ["netns", "list"])
    .split("\n")
    .map((l) => l.split(" ")[0])
    .filter(Boolean);
  for (const name of names.filter(deadOwner)) removeNamespace(name);
  const links = sh("ip", ["-o", "link", "show"])
    .split("\n")
    .map((l) => /^\d+:\s+([^:@\s]+)/.exec(l)?.[1])
    .filter((n): n is string => n !== undefined);
  for (const link of links.filter(deadOwner)) spawnSync("ip", ["link", "delete", link], { stdio: "ignore" });
}

/** A name of this file's process: `cap<pid>-<label>` (at most 15 characters, so it also fits a link name). */
export function ownedName(label: string): string {
  const name = `${PREFIX}${process.pid.toString(36)}-${label}`;
  if (name.length > 15) throw new Error(`name ${name} is longer than 15 characters`);
  return name;
}

/** Creates a network namespace (its loopback up); removed when the file ends. */
export function createNamespace(label: string): string {
  if (!swept) sweep();
  const name = ownedName(label);
  removeNamespace(name);
  sh("ip", ["netns", "add", name]);
  made.add(name);
  sh("ip", ["-n", name, "link", "set", "lo", "up"]);
  return name;
}

/** Removes a namespace made here (and kills what still runs in it). */
export function deleteNamespace(name: string): void {
  removeNamespace(name);
  made.delete(name);
}

/** Runs a command inside a namespace. */
export function inNamespace(name: string, command: string, args: readonly string[], input?: string): string {
  return sh("ip", ["netns", "exec", name, command, ...args], input);
}

/** Whether a namespace of that name exists. */
export function namespaceExists(name: string): boolean {
  return sh("ip", ["netns", "list"])
    .split("\n")
    .some((l) => l.split(" ")[0] === name);
}

function removeAll(): void {
  for (const name of made) removeNamespace(name);
  made.clear();
}

if (process.env.NODE_TEST_CONTEXT !== undefined) after(removeAll);
process.once("exit", removeAll);
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => {
    removeAll();
    process.exit(1);
  });

export interface NamespaceProcess<T> {
  readonly proc: ChildProcess;
  /** The JSON after the readiness prefix. */
  readonly ready: T;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `command args` inside a namespace (optionally as another user, with
 * setpriv) as an owned process, and waits for the stdout line starting with
 * `prefix` (JSON follows it).
 */
export function startInNamespace<T>(
  ns: string,
  command: readonly string[],
  prefix: string,
  options: { asUser?: number; env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<NamespaceProcess<T>> {
  const user = options.asUser === undefined ? [] : ["setpriv", `--reuid=${options.asUser}`, `--regid=${options.asUser}`, "--clear-groups"];
  const proc = spawnOwned("ip", ["netns", "exec", ns, ...user, ...command], {
    stdio: ["ignore", "pipe", "pipe"],
    env: options.env ?? process.env,
    cwd: options.cwd,
  });
  let out = "";
  proc.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  proc.stderr!.on("data", (c: Buffer) => (out += c.toString()));
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  const limit = readyTimeout();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(`did not print "${prefix}" within ${limit / 1000} s`), limit);
    const fail = (why: string) => {
      clearTimeout(timer);
      proc.stdout!.off("data", onData);
      void stopOwned(proc, "SIGKILL");
      reject(new Error(`${command.join(" ")} in ${ns}: ${why}; its output:\n${tail(out) || "(none)"}`));
    };
    const onExit = (code: number | null, signal: string | null) => fail(`exited with ${code ?? signal}`);
    const onData = () => {
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
        ready: JSON.parse(line.slice(prefix.length) || "null") as T,
        output: () => out,
        stop: () => stopOwned(proc, "SIGTERM").then(() => exited),
      });
    };
    proc.stdout!.on("data", onData);
    proc.once("exit", onExit);
  });
}

/** A veth pair between two namespaces, each end with its address (CIDR) and up; `route` adds a default route through the peer on `a`'s side too. */
export function linkNamespaces(a: { ns: string; address: string }, b: { ns: string; address: string }): void {
  const [endA, endB] = [ownedName("va"), ownedName("vb")];
  sh("ip", ["link", "add", endA, "netns", a.ns, "type", "veth", "peer", "name", endB, "netns", b.ns]);
  for (const [side, end] of [
    [a, endA],
    [b, endB],
  ] as const) {
    sh("ip", ["-n", side.ns, "addr", "add", side.address, "dev", end]);
    sh("ip", ["-n", side.ns, "link", "set", end, "up"]);
  }
}

/** A default route in `ns` through `via` (so any destination is routable, as in a pod). */
export function defaultRoute(ns: string, via: string): void {
  sh("ip", ["-n", ns, "route", "add", "default", "via", via]);
}
