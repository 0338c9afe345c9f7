import type { Field } from "../config/decode.ts";
import { INTERCEPTION_MODES, type InjectionSettings, type InterceptionMode } from "./settings.ts";

/**
 * The capture init container's command line, as upstream's injection
 * template writes `istio-iptables`'s (renamed `disco-agent mesh-iptables`,
 * host/capture): the injector's defaults, values' `global.proxy` capture
 * settings, and each pod's annotations over them.
 */

/** The proxy's user and group: the capture rules exclude its own traffic by them. */
export const PROXY_UID = 1337;
export const PROXY_GID = 1337;
/** Ports the proxy serves that inbound capture never redirects (upstream: Envoy's prometheus and readiness listeners). */
export const ENVOY_PROMETHEUS_PORT = 15090;
export const ENVOY_STATUS_PORT = 15021;

export const INTERCEPTION_MODE_ANNOTATION = "sidecar.mesh.io/interceptionMode";
export const STATUS_PORT_ANNOTATION = "status.sidecar.mesh.io/port";
const TRAFFIC = "traffic.sidecar.mesh.io";
export const CAPTURE_ANNOTATIONS = {
  includeInboundPorts: `${TRAFFIC}/includeInboundPorts`,
  excludeInboundPorts: `${TRAFFIC}/excludeInboundPorts`,
  includeOutboundIPRanges: `${TRAFFIC}/includeOutboundIPRanges`,
  excludeOutboundIPRanges: `${TRAFFIC}/excludeOutboundIPRanges`,
  includeOutboundPorts: `${TRAFFIC}/includeOutboundPorts`,
  excludeOutboundPorts: `${TRAFFIC}/excludeOutboundPorts`,
  excludeInterfaces: `${TRAFFIC}/excludeInterfaces`,
  kubevirtInterfaces: `${TRAFFIC}/kubevirtInterfaces`,
} as const;
/** Preferred over the deprecated `traffic.sidecar.mesh.io/kubevirtInterfaces` (upstream's `istio.io/reroute-virtual-interfaces`). */
export const REROUTE_VIRTUAL_INTERFACES_ANNOTATION = "mesh.io/reroute-virtual-interfaces";

/** What the pod's annotations decided, for the init container and the proxy. */
export interface PodCapture {
  mode: InterceptionMode;
  /** Port the agent's status server listens on (`status.sidecar.mesh.io/port`, else the settings'). */
  statusPort: number;
  /** `disco-agent mesh-iptables …` arguments after the program name; empty when the mode is NONE (no init container). */
  args: string[];
}

const PORT_LIST = /^\d{1,5}(,\d{1,5})*$/;
const IPV4_CIDR = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;

function portList(field: Field, value: string, star: boolean): string {
  const v = value.replaceAll(" ", "");
  if (v === "" || (star && v === "*")) return v;
  const ok = PORT_LIST.test(v) && v.split(",").every((p) => Number(p) >= 1 && Number(p) <= 65535);
  if (!ok) field.fail(star ? 'a comma-separated list of ports (1-65535), or "*"' : "a comma-separated list of ports (1-65535)");
  return v;
}

function cidrList(field: Field, value: string, star: boolean): string {
  const v = value.replaceAll(" ", "");
  if (v === "" || (star && v === "*")) return v;
  const ok = v.split(",").every((c) => {
    const m = IPV4_CIDR.exec(c);
    if (m) return m.slice(1, 5).every((o) => Number(o) <= 255) && Number(m[5]) <= 32;
    const [addr, bits, extra] = c.split("/");
    return extra === undefined && addr.includes(":") && /^[0-9a-fA-F:.]+$/.test(addr) && /^\d{1,3}$/.test(bits ?? "") && Number(bits) <= 128;
  });
  if (!ok) field.fail(star ? 'a comma-separated list of CIDRs such as 10.0.0.0/8, or "*"' : "a comma-separated list of CIDRs such as 10.0.0.0/8");
  return v;
}

/** Upstream's `excludeInboundPort`: the status port is appended to the user's list unless it is there already. */
function excludeInboundPorts(statusPort: number, user: string): string {
  if (user === "") return String(statusPort);
  return user.split(",").includes(String(statusPort)) ? user : `${user},${statusPort}`;
}

/**
 * The capture of one pod from its annotations (`annotations` is the decoded
 * map, `field` the annotations' Field for errors naming the annotation).
 * Throws ConfigError for a malformed port list, CIDR list or mode.
 */
export function podCapture(s: InjectionSettings, annotations: Readonly<Record<string, string>>, field: Field): PodCapture {
  // `annotations[<key>]`: the keys carry dots and slashes
  const entries = new Map(field.entries());
  const at = (key: string) => entries.get(key) ?? field.get(key);
  const value = (key: string, fallback: string) => annotations[key] ?? fallback;
  const A = CAPTURE_ANNOTATIONS;
  const modeText = value(INTERCEPTION_MODE_ANNOTATION, s.interceptionMode);
  if (!(INTERCEPTION_MODES as readonly string[]).includes(modeText)) at(INTERCEPTION_MODE_ANNOTATION).fail(`one of ${INTERCEPTION_MODES.join(", ")}`);
  const mode = modeText as InterceptionMode;
  const statusText = annotations[STATUS_PORT_ANNOTATION];
  if (statusText !== undefined && !(/^\d{1,5}$/.test(statusText) && Number(statusText) >= 1 && Number(statusText) <= 65535))
    at(STATUS_PORT_ANNOTATION).fail("a port from 1 to 65535");
  const statusPort = statusText === undefined ? s.statusPort : Number(statusText);
  const c = s.capture;
  const includeInbound = portList(at(A.includeInboundPorts), value(A.includeInboundPorts, c.includeInboundPorts), true);
  const excludeInbound = portList(at(A.excludeInboundPorts), value(A.excludeInboundPorts, c.excludeInboundPorts), false);
  const includeCidrs = cidrList(at(A.includeOutboundIPRanges), value(A.includeOutboundIPRanges, c.includeIPRanges), true);
  const excludeCidrs = cidrList(at(A.excludeOutboundIPRanges), value(A.excludeOutboundIPRanges, c.excludeIPRanges), false);
  const includeOutbound = portList(at(A.includeOutboundPorts), value(A.includeOutboundPorts, c.includeOutboundPorts), false);
  const excludeOutbound = portList(at(A.excludeOutboundPorts), value(A.excludeOutboundPorts, c.excludeOutboundPorts), false);
  const excludeInterfaces = value(A.excludeInterfaces, c.excludeInterfaces).replaceAll(" ", "");
  const virtualInterfaces = (annotations[REROUTE_VIRTUAL_INTERFACES_ANNOTATION] ?? annotations[A.kubevirtInterfaces] ?? "").replaceAll(" ", "");
  if (mode === "NONE") return { mode, statusPort, args: [] };
  const args = [
    "mesh-iptables",
    "-p",
    String(s.outboundPort),
    "-z",
    String(s.inboundPort),
    "-u",
    String(PROXY_UID),
    "-m",
    mode,
    "-i",
    includeCidrs,
    "-x",
    excludeCidrs,
    "-b",
    includeInbound,
    "-d",
    `${ENVOY_PROMETHEUS_PORT},${ENVOY_STATUS_PORT},${excludeInboundPorts(statusPort, excludeInbound)}`,
    ...(includeOutbound ? ["-q", includeOutbound] : []),
    ...(excludeOutbound ? ["-o", excludeOutbound] : []),
    ...(virtualInterfaces ? ["-k", virtualInterfaces] : []),
    ...(excludeInterfaces ? ["-c", excludeInterfaces] : []),
  ];
  return { mode, statusPort, args };
}
