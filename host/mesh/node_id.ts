/**
 * Upstream's proxy node id, `<type>~<ip>~<pod>.<namespace>~<namespace>.svc.<domain>`
 * (`type` is `sidecar`, or `router` for a gateway): the one place it is
 * written (the agent, Envoy's bootstrap) and read (the control plane, which
 * finds the proxy's workload by it).
 */

export interface NodeIdParts {
  /** `sidecar` or `router`. */
  readonly type: string;
  readonly ip: string;
  /** `<pod>.<namespace>` (upstream's proxy id; the agent's `--id` may give another). */
  readonly proxyId: string;
  /** The proxy's DNS domain, `<namespace>.svc.<mesh domain>`. */
  readonly dnsDomain: string;
}

export function buildNodeId(p: NodeIdParts): string {
  return `${p.type}~${p.ip}~${p.proxyId}~${p.dnsDomain}`;
}

/** The node id of a workload's proxy: `sidecar~10.0.0.7~reviews-v1-abc.default~default.svc.cluster.local`. */
export function workloadNodeId(w: { type?: string; ip: string; pod: string; namespace: string; domain: string }): string {
  return buildNodeId({ type: w.type ?? "sidecar", ip: w.ip, proxyId: `${w.pod}.${w.namespace}`, dnsDomain: `${w.namespace}.svc.${w.domain}` });
}

export interface ParsedNodeId extends NodeIdParts {
  /** The proxy id up to its first dot. */
  readonly pod: string;
  /** After the proxy id's first dot; without one, the DNS domain's first label. */
  readonly namespace: string;
}

/** The parts of a node id; undefined when it is not upstream's four `~`-separated parts. */
export function parseNodeId(id: string): ParsedNodeId | undefined {
  const parts = id.split("~");
  if (parts.length !== 4) return undefined;
  const [type, ip, proxyId, dnsDomain] = parts;
  const dot = proxyId.indexOf(".");
  return {
    type,
    ip,
    proxyId,
    dnsDomain,
    pod: dot < 0 ? proxyId : proxyId.slice(0, dot),
    namespace: dot < 0 ? dnsDomain.split(".")[0] : proxyId.slice(dot + 1),
  };
}
