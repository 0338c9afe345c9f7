// Test support for the capture tests: network namespaces this test file
// creates and removes in every outcome (an `after` hook and process exit),
// named `cap<owner pid in base 36>-<label>`; namespaces (and links) of owners
// no longer running are swept at the first creation.
import { execFileSync, spawnSync } from "node:child_process";
import { after } from "node:test";

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
