// Test support: pods as Linux network namespaces on one bridge.
//
// A `PodNetwork` is a bridge this test file creates, a /24 of pod addresses
// and a /24 of Service (cluster) addresses the file owns, and a network
// namespace per pod: its own `eth0` (a veth whose other end is on the bridge),
// `lo`, a default route through the bridge's address (the host side, where
// disco-discovery and the CA listen) and `/etc/netns/<namespace>/hosts`,
// which `ip netns exec` mounts over /etc/hosts so processes in the pod resolve
// Service names as the orchestrator's DNS would.
//
// Every name carries the owning process's id (`e2m<pid in base 36>-…`): at
// creation the network sweeps what dead owners left (namespaces, their
// processes, links, the bridge, /etc/netns folders), and `remove()` (also
// run from an `after` hook and on exit) removes everything it made. Two runs
// side by side never touch each other's names or addresses.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after } from "node:test";

/** Every name the harness makes starts with this. */
export const NETNS_PREFIX = "e2m";
const ETC_NETNS = "/etc/netns";
const NAME = /^e2m([0-9a-z]+)-/;

/** Runs a command to its end; throws naming it and its stderr. */
export function sh(command: string, args: readonly string[], input?: string): string {
  try {
    return execFileSync(command, args, { encoding: "utf8", input, stdio: ["pipe", "pipe", "pipe"] });
  } catch (e) {
    const err = e as { stderr?: string; status?: number };
    throw new Error(`${command} ${args.join(" ")}: exit ${err.status}: ${(err.stderr ?? String(e)).trim()}`);
  }
}

/** Runs a command whose failure is fine (removing what may be gone already). */
function quietly(command: string, args: readonly string[]): void {
  spawnSync(command, args, { stdio: "ignore" });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The owner pid a harness name carries, or undefined for a name that is not the harness's. */
export function ownerOf(name: string): number | undefined {
  const m = NAME.exec(name);
  return m ? Number.parseInt(m[1], 36) : undefined;
}

function netnsNames(): string[] {
  return sh("ip", ["netns", "list"])
    .split("\n")
    .map((l) => l.split(" ")[0])
    .filter(Boolean);
}

function linkNames(): string[] {
  return sh("ip", ["-o", "link", "show"])
    .split("\n")
    .map((l) => /^\d+:\s+([^:@\s]+)/.exec(l)?.[1])
    .filter((n): n is string => n !== undefined);
}

/** Kills every process running in a namespace (they may outlive a killed test file). */
function killPodProcesses(netns: string): void {
  const pids = spawnSync("ip", ["netns", "pids", netns], { encoding: "utf8" }).stdout ?? "";
  for (const pid of pids.split("\n").filter(Boolean)) {
    try {
      process.kill(Number(pid), "SIGKILL");
    } catch {
      // Gone already.
    }
  }
}

function removeNetns(netns: string): void {
  killPodProcesses(netns);
  quietly("ip", ["netns", "delete", netns]);
  rmSync(join(ETC_NETNS, netns), { recursive: true, force: true });
}

/** The host's FORWARD rules that carry a harness comment (bridged pod traffic let through). */
function forwardRules(): { comment: string; spec: string[] }[] {
  return sh("iptables", ["-S", "FORWARD"])
    .split("\n")
    .map((line) => ({ line, comment: /--comment "?(e2m[0-9a-z]+-[^" ]*)"?/.exec(line)?.[1] }))
    .filter((r): r is { line: string; comment: string } => r.comment !== undefined && r.line.startsWith("-A FORWARD "))
    .map((r) => ({ comment: r.comment, spec: r.line.slice("-A FORWARD ".length).replaceAll('"', "").split(" ") }));
}

/** Bridged frames go through the host's FORWARD chain when br_netfilter is loaded; a host whose policy drops (Docker's) would cut the pods off. */
function forwardSpec(bridge: string): string[] {
  return ["-i", bridge, "-o", bridge, "-m", "comment", "--comment", bridge, "-j", "ACCEPT"];
}

/**
 * Removes what harness owners no longer running left behind: namespaces
 * (with their processes), links and bridges, /etc/netns folders. Names of a
 * live owner (another test file, another run) are left alone. Returns what
 * was removed.
 */
export function sweepLeftovers(): string[] {
  const dead = (name: string) => {
    const owner = ownerOf(name);
    return owner !== undefined && owner !== process.pid && !alive(owner);
  };
  const removed: string[] = [];
  for (const ns of netnsNames().filter(dead)) {
    removeNetns(ns);
    removed.push(`netns ${ns}`);
  }
  for (const link of linkNames().filter(dead)) {
    quietly("ip", ["link", "delete", link]);
    removed.push(`link ${link}`);
  }
  for (const rule of forwardRules().filter((r) => dead(r.comment))) {
    quietly("iptables", ["-D", "FORWARD", ...rule.spec]);
    removed.push(`iptables FORWARD ${rule.comment}`);
  }
  if (existsSync(ETC_NETNS))
    for (const dir of readdirSync(ETC_NETNS).filter(dead)) {
      rmSync(join(ETC_NETNS, dir), { recursive: true, force: true });
      removed.push(`${ETC_NETNS}/${dir}`);
    }
  return removed;
}

/** One pod: its network namespace and address. */
export interface Pod {
  readonly name: string;
  readonly namespace: string;
  /** The Linux network namespace (`ip netns exec <netns> …`). */
  readonly netns: string;
  readonly ip: string;
}

/** A name → address entry of the pods' /etc/hosts. */
export interface HostEntry {
  ip: string;
  names: string[];
}

function subnetFree(prefix: string): boolean {
  return !sh("ip", ["-4", "route", "show"]).includes(`${prefix}.`) && !sh("ip", ["-4", "addr", "show"]).includes(`${prefix}.`);
}

/**
 * Pod addresses 10.254.K.0/24, Service addresses 10.255.K.0/24, K picked from
 * the pid and free on this host, claimed by giving the bridge its .1: when
 * another network took the same K at the same moment, both see two owners
 * and move on.
 */
function claimSubnet(bridge: string): number {
  for (let i = 0; i < 250; i++) {
    const k = (process.pid + i) % 250;
    if (!subnetFree(`10.254.${k}`)) continue;
    sh("ip", ["addr", "add", `10.254.${k}.1/24`, "dev", bridge]);
    const owners = sh("ip", ["-4", "-o", "addr", "show"])
      .split("\n")
      .filter((l) => l.includes(` 10.254.${k}.`));
    if (owners.length === 1) return k;
    quietly("ip", ["addr", "del", `10.254.${k}.1/24`, "dev", bridge]);
  }
  throw new Error("no free 10.254.K.0/24 for the pod network");
}

const networks = new Set<PodNetwork>();
let hooked = false;
function hookCleanup(): void {
  if (hooked) return;
  hooked = true;
  if (process.env.NODE_TEST_CONTEXT !== undefined) after(() => removeAllNetworks());
  process.on("exit", () => removeAllNetworks());
}

/** Removes every network this process made (idempotent). */
export function removeAllNetworks(): void {
  for (const n of networks) n.remove();
}

export class PodNetwork {
  readonly tag = `${NETNS_PREFIX}${process.pid.toString(36)}`;
  readonly bridge: string;
  /** The host side's address on the bridge: where host daemons listen for the pods. */
  readonly gateway: string;
  private readonly subnet: number;
  private readonly pods = new Map<string, Pod>();
  private hosts: (pod: Pod) => HostEntry[] = () => [];
  private nextPod = 10;
  private nextService = 10;
  private removed = false;

  /** Creates the bridge (after sweeping dead owners' leftovers). */
  constructor(readonly id = 0) {
    hookCleanup();
    sweepLeftovers();
    this.bridge = `${this.tag}-b${id}`;
    if (this.bridge.length > 15) throw new Error(`bridge name ${this.bridge} longer than 15 characters`);
    networks.add(this);
    sh("ip", ["link", "add", this.bridge, "type", "bridge"]);
    this.subnet = claimSubnet(this.bridge);
    this.gateway = `10.254.${this.subnet}.1`;
    sh("ip", ["link", "set", this.bridge, "up"]);
    sh("iptables", ["-I", "FORWARD", ...forwardSpec(this.bridge)]);
  }

  /** The next free Service (cluster) address. */
  allocateServiceIp(): string {
    if (this.nextService > 254) throw new Error("Service addresses exhausted");
    return `10.255.${this.subnet}.${this.nextService++}`;
  }

  /** The Service address range (what a pod's capture and kube-proxy stand-in treat as cluster IPs). */
  get serviceCidr(): string {
    return `10.255.${this.subnet}.0/24`;
  }

  get podCidr(): string {
    return `10.254.${this.subnet}.0/24`;
  }

  /** Creates a pod: namespace, veth on the bridge, address, default route, hosts file. */
  addPod(name: string, namespace: string): Pod {
    if (this.removed) throw new Error("the pod network was removed");
    const key = `${name}.${namespace}`;
    if (this.pods.has(key)) throw new Error(`pod ${key} exists already`);
    if (this.nextPod > 254) throw new Error("pod addresses exhausted");
    const index = this.nextPod++;
    const pod: Pod = { name, namespace, netns: `${this.tag}-${key}`, ip: `10.254.${this.subnet}.${index}` };
    const hostSide = `${this.tag}-h${this.id}-${index}`;
    const podSide = `${this.tag}-p${this.id}-${index}`;
    this.pods.set(key, pod);
    sh("ip", ["netns", "add", pod.netns]);
    sh("ip", ["link", "add", hostSide, "type", "veth", "peer", "name", podSide]);
    sh("ip", ["link", "set", podSide, "netns", pod.netns]);
    sh("ip", ["link", "set", hostSide, "master", this.bridge]);
    sh("ip", ["link", "set", hostSide, "up"]);
    const inPod = (...args: string[]) => sh("ip", ["-n", pod.netns, ...args]);
    inPod("link", "set", podSide, "name", "eth0");
    inPod("addr", "add", `${pod.ip}/24`, "dev", "eth0");
    inPod("link", "set", "eth0", "up");
    inPod("link", "set", "lo", "up");
    inPod("route", "add", "default", "via", this.gateway);
    this.writeHosts(pod);
    return pod;
  }

  pod(name: string, namespace: string): Pod {
    const pod = this.pods.get(`${name}.${namespace}`);
    if (!pod) throw new Error(`no pod ${name}.${namespace}`);
    return pod;
  }

  allPods(): Pod[] {
    return [...this.pods.values()];
  }

  /** Sets the names pods resolve (the same for all, or per pod; a pod's own name is always added) and rewrites every pod's hosts file. */
  setHosts(entries: HostEntry[] | ((pod: Pod) => HostEntry[])): void {
    this.hosts = typeof entries === "function" ? entries : () => entries;
    for (const pod of this.pods.values()) this.writeHosts(pod);
  }

  private writeHosts(pod: Pod): void {
    const dir = join(ETC_NETNS, pod.netns);
    mkdirSync(dir, { recursive: true });
    const lines = ["127.0.0.1 localhost", "::1 localhost ip6-localhost ip6-loopback", `${pod.ip} ${pod.name}`];
    for (const e of this.hosts(pod)) lines.push(`${e.ip} ${e.names.join(" ")}`);
    writeFileSync(join(dir, "hosts"), `${lines.join("\n")}\n`);
  }

  /** Removes every pod (killing what runs in it), link, the bridge and the hosts folders. */
  remove(): void {
    if (this.removed) return;
    this.removed = true;
    networks.delete(this);
    for (const pod of this.pods.values()) removeNetns(pod.netns);
    quietly("ip", ["link", "delete", this.bridge]);
    quietly("iptables", ["-D", "FORWARD", ...forwardSpec(this.bridge)]);
  }
}

/** What the harness has on this host now (for a test that checks it left nothing). */
export function harnessLeftovers(owner = process.pid): string[] {
  const mine = (name: string) => ownerOf(name) === owner;
  return [
    ...netnsNames().filter(mine),
    ...linkNames().filter(mine),
    ...forwardRules()
      .filter((r) => mine(r.comment))
      .map((r) => `iptables FORWARD ${r.comment}`),
    ...(existsSync(ETC_NETNS)
      ? readdirSync(ETC_NETNS)
          .filter(mine)
          .map((d) => `${ETC_NETNS}/${d}`)
      : []),
  ];
}

/** A Service address and port and the pod endpoints behind it, for the kube-proxy stand-in. */
export interface ServiceRoute {
  clusterIp: string;
  port: number;
  endpoints: { ip: string; port: number }[];
}

/**
 * The orchestrator's kube-proxy, inside one pod: nat OUTPUT rules that send a
 * connection to a Service address:port to one of its endpoints (at random, as
 * kube-proxy's iptables mode). Installed after the pod's capture rules, so an
 * app's connection is captured first and the proxy's own (uid 1337, returned
 * by the capture chain) is the one translated. The chain lives in the pod's
 * namespace and goes with it.
 */
export function installServiceRoutes(pod: Pod, routes: ServiceRoute[]): void {
  const chain = "E2M-SERVICES";
  const lines = ["*nat", `:${chain} - [0:0]`, `-F ${chain}`];
  for (const r of routes)
    r.endpoints.forEach((e, i) => {
      const left = r.endpoints.length - i;
      const pick = left > 1 ? ` -m statistic --mode random --probability ${(1 / left).toFixed(5)}` : "";
      lines.push(`-A ${chain} -d ${r.clusterIp}/32 -p tcp --dport ${r.port}${pick} -j DNAT --to-destination ${e.ip}:${e.port}`);
    });
  lines.push("COMMIT", "");
  sh("ip", ["netns", "exec", pod.netns, "iptables-restore", "--noflush"], lines.join("\n"));
  const jump = ["-t", "nat", "-C", "OUTPUT", "-j", chain];
  if (spawnSync("ip", ["netns", "exec", pod.netns, "iptables", ...jump], { stdio: "ignore" }).status !== 0)
    sh("ip", ["netns", "exec", pod.netns, "iptables", "-t", "nat", "-A", "OUTPUT", "-j", chain]);
}
