// The pod's capture rules as upstream's istio-iptables writes them in
// REDIRECT mode (research mesh-runtime.md §2.2), renamed: a pure function of
// the options, rendered as `iptables-restore` input. Only the nat table, IPv4.
import type { CaptureOptions } from "./capture_options.ts";

export const MESH_INBOUND = "MESH_INBOUND";
export const MESH_REDIRECT = "MESH_REDIRECT";
export const MESH_IN_REDIRECT = "MESH_IN_REDIRECT";
export const MESH_OUTPUT = "MESH_OUTPUT";
/** The chains the rules create, in upstream's order. */
export const MESH_CHAINS = [MESH_INBOUND, MESH_REDIRECT, MESH_IN_REDIRECT, MESH_OUTPUT] as const;

/** The address the inbound delivery dials the app from (upstream's InboundPassthroughBindIpv4): never captured again. */
export const INBOUND_PASSTHROUGH_SOURCE = "127.0.0.6";

/** One rule: appended to its chain, or inserted first (`-I CHAIN 1`), as upstream adds it. */
export interface Rule {
  readonly chain: string;
  readonly spec: readonly string[];
  readonly insertFirst?: boolean;
}

/** The nat rules of the options, in the order upstream emits them. */
export function captureRules(o: CaptureOptions): Rule[] {
  const rules: Rule[] = [];
  const add = (chain: string, ...spec: string[]) => rules.push({ chain, spec });
  const insert = (chain: string, ...spec: string[]) => rules.push({ chain, spec, insertFirst: true });

  // Interfaces left alone, both ways; a VM's interfaces are not inbound.
  for (const nic of o.excludeInterfaces) {
    add("PREROUTING", "-i", nic, "-j", "RETURN");
    add("OUTPUT", "-o", nic, "-j", "RETURN");
  }
  for (const nic of o.kubeVirtInterfaces) insert("PREROUTING", "-i", nic, "-j", "RETURN");

  add(MESH_INBOUND, "-p", "tcp", "--dport", String(o.inboundTunnelPort), "-j", "RETURN");
  add(MESH_REDIRECT, "-p", "tcp", "-j", "REDIRECT", "--to-ports", String(o.proxyPort));
  add(MESH_IN_REDIRECT, "-p", "tcp", "-j", "REDIRECT", "--to-ports", String(o.inboundCapturePort));

  // Inbound: every port but the excluded ones, or the listed ports; none when -b is empty.
  if (o.inboundPorts === "*" || o.inboundPorts.length > 0) {
    add("PREROUTING", "-p", "tcp", "-j", MESH_INBOUND);
    if (o.inboundPorts === "*") {
      for (const port of o.inboundPortsExclude) add(MESH_INBOUND, "-p", "tcp", "--dport", String(port), "-j", "RETURN");
      add(MESH_INBOUND, "-p", "tcp", "-j", MESH_IN_REDIRECT);
    } else {
      for (const port of o.inboundPorts) add(MESH_INBOUND, "-p", "tcp", "--dport", String(port), "-j", MESH_IN_REDIRECT);
    }
  }

  add("OUTPUT", "-j", MESH_OUTPUT);
  // Excluded ports first: before the proxy's own connections back to the pod are sent inbound.
  for (const port of o.outboundPortsExclude) {
    add(MESH_OUTPUT, "-p", "tcp", "--dport", String(port), "-j", "RETURN");
    add(MESH_OUTPUT, "-p", "udp", "--dport", String(port), "-j", "RETURN");
  }
  // The inbound delivery to the app (dialled from 127.0.0.6 over lo).
  add(MESH_OUTPUT, "-o", "lo", "-s", `${INBOUND_PASSTHROUGH_SOURCE}/32`, "-j", "RETURN");
  // With a loopback range to capture, app → app over lo is captured too.
  const loopbackIncluded = o.outboundRanges !== "*" && o.outboundRanges.some((r) => r.loopback);
  for (const [kind, ids] of [
    ["--uid-owner", o.proxyUids],
    ["--gid-owner", o.proxyGids],
  ] as const) {
    for (const id of ids) {
      // The proxy calling its own pod's address (app → service → this pod) goes through the inbound listener.
      add(
        MESH_OUTPUT,
        "-o",
        "lo",
        "!",
        "-d",
        o.hostLoopbackCidr,
        "-p",
        "tcp",
        "!",
        "--dport",
        String(o.inboundTunnelPort),
        "-m",
        "owner",
        kind,
        id,
        "-j",
        MESH_IN_REDIRECT,
      );
      if (!loopbackIncluded) add(MESH_OUTPUT, "-o", "lo", "-m", "owner", "!", kind, id, "-j", "RETURN");
      // The proxy's own connections are never captured.
      add(MESH_OUTPUT, "-m", "owner", kind, id, "-j", "RETURN");
    }
  }
  // Explicit localhost: sidecar-aware apps and container-to-container calls.
  add(MESH_OUTPUT, "-d", o.hostLoopbackCidr, "-j", "RETURN");
  for (const range of o.outboundRangesExclude) add(MESH_OUTPUT, "-d", range.cidr, "-j", "RETURN");
  for (const port of o.outboundPorts) add(MESH_OUTPUT, "-p", "tcp", "--dport", String(port), "-j", MESH_REDIRECT);
  if (o.outboundRanges === "*") {
    add(MESH_OUTPUT, "-j", MESH_REDIRECT);
    for (const nic of o.kubeVirtInterfaces) insert("PREROUTING", "-i", nic, "-j", MESH_REDIRECT);
  } else {
    for (const range of o.outboundRanges) {
      for (const nic of o.kubeVirtInterfaces) insert("PREROUTING", "-i", nic, "-d", range.cidr, "-j", MESH_REDIRECT);
      add(MESH_OUTPUT, "-d", range.cidr, "-j", MESH_REDIRECT);
    }
  }
  return rules;
}

/** One rule as an iptables-restore line. */
export function ruleLine(rule: Rule): string {
  return `${rule.insertFirst ? `-I ${rule.chain} 1` : `-A ${rule.chain}`} ${rule.spec.join(" ")}`;
}

/** The `iptables-restore --noflush` input that creates the chains and adds the rules. */
export function restoreInput(o: CaptureOptions): string {
  return ["* nat", ...MESH_CHAINS.map((c) => `-N ${c}`), ...captureRules(o).map(ruleLine), "COMMIT", ""].join("\n");
}

const isMeshChain = (chain: string) => (MESH_CHAINS as readonly string[]).includes(chain);

/**
 * The `iptables-restore --noflush` input that removes what `restoreInput`
 * added: the rules in the built-in chains (each jump to a mesh chain, and the
 * interface rules of these options), then the mesh chains, flushed and
 * deleted. `saved` (`iptables-save -t nat`) limits it to what is there, so a
 * partial or repeated cleanup succeeds; without it, everything the options
 * would have added (the dry run). Undefined when there is nothing to remove.
 */
export function cleanupInput(o: CaptureOptions, saved?: string): string | undefined {
  const builtIn = captureRules(o).filter((r) => !isMeshChain(r.chain));
  const deletes: string[] = [];
  let chains: string[];
  if (saved === undefined) {
    deletes.push(...builtIn.map((r) => `-D ${r.chain} ${r.spec.join(" ")}`));
    chains = [...MESH_CHAINS];
  } else {
    const lines = natSection(saved);
    chains = MESH_CHAINS.filter((c) => lines.some((l) => l.startsWith(`:${c} `)));
    const appended = lines.filter((l) => l.startsWith("-A "));
    const jumps = appended.filter((l) => {
      const [, chain] = l.split(" ");
      const target = /\s-[jg] (\S+)/.exec(l)?.[1];
      return !isMeshChain(chain) && target !== undefined && isMeshChain(target);
    });
    deletes.push(...jumps.map((l) => `-D ${l.slice(3)}`));
    // The interface rules of the options that are there (one each: one was added).
    const left = appended.filter((l) => !jumps.includes(l));
    for (const r of builtIn.filter((r) => !r.spec.some(isMeshChain))) {
      const at = left.indexOf(`-A ${r.chain} ${r.spec.join(" ")}`);
      if (at < 0) continue;
      left.splice(at, 1);
      deletes.push(`-D ${r.chain} ${r.spec.join(" ")}`);
    }
  }
  if (deletes.length === 0 && chains.length === 0) return undefined;
  return ["* nat", ...deletes, ...chains.map((c) => `-F ${c}`), ...chains.map((c) => `-X ${c}`), "COMMIT", ""].join("\n");
}

/** The lines of the nat table in `iptables-save` output. */
function natSection(saved: string): string[] {
  const lines = saved.split("\n").map((l) => l.trim());
  const start = lines.indexOf("*nat");
  if (start < 0) return [];
  const end = lines.indexOf("COMMIT", start);
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

/** The mesh chains present in `iptables-save -t nat` output. */
export function meshChainsIn(saved: string): string[] {
  const lines = natSection(saved);
  return MESH_CHAINS.filter((c) => lines.some((l) => l.startsWith(`:${c} `)));
}
