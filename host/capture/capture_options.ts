// The settings of `disco-agent mesh-iptables` (upstream's `pilot-agent
// istio-iptables`, `istio` → `mesh` in the long names), decoded once from
// the flags and their environment variables into a typed value. A bad value
// throws naming the flag (and the variable when the value came from one).
import { GO_FALSE, GO_TRUE } from "../daemon/env_values.ts";

/** An IPv4 range as given (`10.0.0.0/8`); `loopback` when it lies in 127.0.0.0/8. */
export interface Ipv4Range {
  readonly cidr: string;
  readonly loopback: boolean;
}

/** Every port, or the listed ones (none = nothing captured). */
export type PortSelection = "*" | readonly number[];
/** Every destination, or the listed ranges (none = nothing captured). */
export type RangeSelection = "*" | readonly Ipv4Range[];

export interface CaptureOptions {
  /** -p: the outbound listener every captured outbound connection is redirected to. */
  readonly proxyPort: number;
  /** -z: the inbound listener every captured inbound connection is redirected to. */
  readonly inboundCapturePort: number;
  /** -e: the tunnel port, never captured. */
  readonly inboundTunnelPort: number;
  /** -u: the users whose traffic is never captured (the proxy's). */
  readonly proxyUids: readonly string[];
  /** -g: the groups whose traffic is never captured (default: the uids). */
  readonly proxyGids: readonly string[];
  /** -b */
  readonly inboundPorts: PortSelection;
  /** -d: inbound ports left alone when -b is `*`. */
  readonly inboundPortsExclude: readonly number[];
  /** -i */
  readonly outboundRanges: RangeSelection;
  /** -x */
  readonly outboundRangesExclude: readonly Ipv4Range[];
  /** -q: outbound ports captured whatever the destination. */
  readonly outboundPorts: readonly number[];
  /** -o: outbound ports never captured. */
  readonly outboundPortsExclude: readonly number[];
  /** -k: interfaces whose inbound traffic (a VM's) is treated as outbound. */
  readonly kubeVirtInterfaces: readonly string[];
  /** -c: interfaces whose traffic is never captured. */
  readonly excludeInterfaces: readonly string[];
  /** MESH_OUTBOUND_IPV4_LOOPBACK_CIDR: the explicit localhost range left alone (127.0.0.1/32). */
  readonly hostLoopbackCidr: string;
  /** -n: print the iptables-restore input, apply nothing. */
  readonly dryRun: boolean;
  /** --cleanup-only: remove the rules and chains instead of adding them. */
  readonly cleanupOnly: boolean;
}

/** One flag of the subcommand: its short and long names, and its variable (upstream: the long name upper-cased, `-` → `_`; none for -p). */
export interface CaptureFlag {
  readonly short?: string;
  readonly long: string;
  readonly help: string;
  readonly env?: string;
}

const flag = (short: string | undefined, long: string, help: string, env = true): CaptureFlag => ({
  ...(short ? { short } : {}),
  long,
  help,
  ...(env ? { env: long.toUpperCase().replaceAll("-", "_") } : {}),
});

/** The flags, keyed by the option name commander gives them. */
export const CAPTURE_FLAGS = {
  envoyPort: flag("p", "envoy-port", "port every captured outbound TCP connection is redirected to (the sidecar's outbound listener)", false),
  inboundCapturePort: flag("z", "inbound-capture-port", "port every captured inbound TCP connection is redirected to (the sidecar's inbound listener)"),
  inboundTunnelPort: flag("e", "inbound-tunnel-port", "tunnel port, never captured"),
  proxyUid: flag("u", "proxy-uid", "comma list of user ids whose traffic is not captured (the proxy's; default: the uid of $ENVOY_USER, else 1337)"),
  proxyGid: flag("g", "proxy-gid", "comma list of group ids whose traffic is not captured (default: the -u ids)"),
  meshInboundInterceptionMode: flag("m", "mesh-inbound-interception-mode", "REDIRECT (TPROXY is refused: the sidecar cannot accept transparent connections)"),
  meshInboundPorts: flag("b", "mesh-inbound-ports", "comma list of inbound ports to capture, or * for every port; empty = no inbound capture"),
  meshLocalExcludePorts: flag("d", "mesh-local-exclude-ports", "comma list of inbound ports not captured when -b is *"),
  meshServiceCidr: flag(
    "i",
    "mesh-service-cidr",
    "comma list of IPv4 CIDRs whose outbound traffic is captured, or * for every destination; empty = no outbound capture",
  ),
  meshServiceExcludeCidr: flag("x", "mesh-service-exclude-cidr", "comma list of IPv4 CIDRs never captured"),
  meshOutboundPorts: flag("q", "mesh-outbound-ports", "comma list of outbound ports captured whatever the destination"),
  meshLocalOutboundPortsExclude: flag("o", "mesh-local-outbound-ports-exclude", "comma list of outbound ports never captured"),
  kubeVirtInterfaces: flag("k", "kube-virt-interfaces", "comma list of virtual interfaces whose inbound traffic (from a VM) is treated as outbound"),
  meshExcludeInterfaces: flag("c", "mesh-exclude-interfaces", "comma list of interfaces whose traffic is never captured"),
  dryRun: flag("n", "dry-run", "print the iptables-restore input and apply nothing"),
  cleanupOnly: flag(undefined, "cleanup-only", "remove every rule and chain the capture made (give the same -c and -k as when applying)"),
} as const satisfies Record<string, CaptureFlag>;

export type CaptureFlagName = keyof typeof CAPTURE_FLAGS;

/** The text of each flag as given on the command line (undefined = not given). */
export type RawCaptureFlags = Partial<Record<CaptureFlagName, string | boolean>>;

export const DEFAULT_PROXY_PORT = 15001;
export const DEFAULT_INBOUND_CAPTURE_PORT = 15006;
export const DEFAULT_INBOUND_TUNNEL_PORT = 15008;
export const DEFAULT_PROXY_UID = "1337";
export const DEFAULT_HOST_LOOPBACK_CIDR = "127.0.0.1/32";

/** A bad flag or variable value; the message names it. */
export class CaptureFlagError extends Error {}

export const flagLabel = (f: CaptureFlag): string => (f.short ? `-${f.short}/--${f.long}` : `--${f.long}`);

/**
 * Decodes the flags; a flag not given takes its variable, else upstream's
 * default. `proxyUidOf(user)` finds a user's uid (the default -u is the uid
 * of $ENVOY_USER, `mesh-proxy`, else 1337).
 */
export function decodeCaptureOptions(raw: RawCaptureFlags, env: NodeJS.ProcessEnv, proxyUidOf: (user: string) => string | undefined): CaptureOptions {
  const read = (name: CaptureFlagName): { text: string; from: string } | undefined => {
    const f = CAPTURE_FLAGS[name];
    const given = raw[name];
    if (given !== undefined) return { text: String(given), from: flagLabel(f) };
    if (f.env !== undefined && env[f.env] !== undefined && env[f.env] !== "") return { text: env[f.env]!, from: `${flagLabel(f)} (from ${f.env})` };
    return undefined;
  };
  const bad = (from: string, text: string, expected: string) => new CaptureFlagError(`${from} ${JSON.stringify(text)}: ${expected}`);

  const port = (name: CaptureFlagName, fallback: number): number => {
    const v = read(name);
    if (!v) return fallback;
    return parsePort(v.text.trim(), () => bad(v.from, v.text, "expected a port from 1 to 65535"));
  };
  const ports = (name: CaptureFlagName): number[] => {
    const v = read(name);
    if (!v) return [];
    return items(v.text).map((p) =>
      parsePort(p, () => bad(v.from, v.text, `${JSON.stringify(p)} is not a port from 1 to 65535 (expected a comma list of ports)`)),
    );
  };
  const ranges = (name: CaptureFlagName, wildcard: boolean): RangeSelection => {
    const v = read(name);
    if (!v) return [];
    if (v.text.trim() === "*") {
      if (!wildcard) throw bad(v.from, v.text, "the wildcard is not allowed here (it would exclude every destination); expected a comma list of IPv4 CIDRs");
      return "*";
    }
    return items(v.text).map((cidr) => {
      const range = parseIpv4Range(cidr);
      if (range === "ipv6") throw bad(v.from, v.text, `${cidr} is an IPv6 range: only IPv4 is captured (no ip6tables rules are written); list IPv4 CIDRs`);
      if (!range) throw bad(v.from, v.text, `${JSON.stringify(cidr)} is not an IPv4 CIDR such as 10.0.0.0/8`);
      return range;
    });
  };
  const interfaces = (name: CaptureFlagName): string[] => {
    const v = read(name);
    if (!v) return [];
    return items(v.text).map((i) => {
      if (!/^[A-Za-z0-9_.:@-]{1,15}$/.test(i)) throw bad(v.from, v.text, `${JSON.stringify(i)} is not an interface name (1 to 15 letters, digits, _ . : @ -)`);
      return i;
    });
  };
  const ids = (name: CaptureFlagName): string[] | undefined => {
    const v = read(name);
    if (!v) return undefined;
    const list = items(v.text);
    for (const id of list) if (!/^\d{1,10}$/.test(id)) throw bad(v.from, v.text, `${JSON.stringify(id)} is not a numeric id (expected a comma list of ids)`);
    // Empty, as upstream: the default.
    return list.length === 0 ? undefined : list;
  };
  const bool = (name: CaptureFlagName): boolean => {
    const v = read(name);
    if (!v) return false;
    if (GO_TRUE.includes(v.text)) return true;
    if (GO_FALSE.includes(v.text)) return false;
    throw bad(v.from, v.text, "expected true or false");
  };

  const mode = read("meshInboundInterceptionMode");
  if (mode && mode.text !== "REDIRECT") {
    if (mode.text === "TPROXY")
      throw bad(
        mode.from,
        mode.text,
        "TPROXY is not supported: the sidecar would have to accept connections addressed to other hosts (IP_TRANSPARENT, run as root with NET_ADMIN), which Node's sockets do not offer; use REDIRECT",
      );
    throw bad(mode.from, mode.text, "expected REDIRECT or TPROXY");
  }

  const inbound = read("meshInboundPorts");
  let inboundPorts: PortSelection = [];
  if (inbound && inbound.text.trim() === "*") inboundPorts = "*";
  else if (inbound) inboundPorts = ports("meshInboundPorts");

  const outboundRanges = ranges("meshServiceCidr", true);
  const proxyUids = ids("proxyUid") ?? [proxyUidOf(env.ENVOY_USER || "mesh-proxy") ?? DEFAULT_PROXY_UID];
  const loopback = env.MESH_OUTBOUND_IPV4_LOOPBACK_CIDR;
  let hostLoopbackCidr = DEFAULT_HOST_LOOPBACK_CIDR;
  if (loopback !== undefined && loopback !== "") {
    const range = parseIpv4Range(loopback);
    if (!range || range === "ipv6" || !range.loopback)
      throw new CaptureFlagError(`MESH_OUTBOUND_IPV4_LOOPBACK_CIDR=${JSON.stringify(loopback)}: expected an IPv4 CIDR within 127.0.0.0/8`);
    hostLoopbackCidr = range.cidr;
  }
  return {
    proxyPort: port("envoyPort", DEFAULT_PROXY_PORT),
    inboundCapturePort: port("inboundCapturePort", DEFAULT_INBOUND_CAPTURE_PORT),
    inboundTunnelPort: port("inboundTunnelPort", DEFAULT_INBOUND_TUNNEL_PORT),
    proxyUids,
    proxyGids: ids("proxyGid") ?? proxyUids,
    inboundPorts,
    inboundPortsExclude: ports("meshLocalExcludePorts"),
    outboundRanges,
    outboundRangesExclude: ranges("meshServiceExcludeCidr", false) as readonly Ipv4Range[],
    outboundPorts: ports("meshOutboundPorts"),
    outboundPortsExclude: ports("meshLocalOutboundPortsExclude"),
    kubeVirtInterfaces: interfaces("kubeVirtInterfaces"),
    excludeInterfaces: interfaces("meshExcludeInterfaces"),
    hostLoopbackCidr,
    dryRun: bool("dryRun"),
    cleanupOnly: bool("cleanupOnly"),
  };
}

/** A comma list's entries, trimmed, empty ones dropped (`-x ''` is no range). */
function items(text: string): string[] {
  return text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

function parsePort(text: string, error: () => Error): number {
  if (!/^\d{1,5}$/.test(text)) throw error();
  const n = Number(text);
  if (n < 1 || n > 65535) throw error();
  return n;
}

/** `a.b.c.d/n`, or "ipv6" for an IPv6 range, or undefined. */
export function parseIpv4Range(text: string): Ipv4Range | "ipv6" | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(text);
  if (!m) return /^[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*\/\d{1,3}$/.test(text) ? "ipv6" : undefined;
  const octets = m.slice(1, 5).map(Number);
  const bits = Number(m[5]);
  if (octets.some((o) => o > 255) || bits > 32) return undefined;
  return { cidr: text, loopback: octets[0] === 127 };
}
