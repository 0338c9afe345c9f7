import { parseNodeId } from "../mesh/node_id.ts";
import type { ProxyNode } from "./ads_server.ts";

/**
 * Who is on the other end of an ADS stream, from its Node message, by
 * upstream's conventions:
 *
 * - **proxyless gRPC**: node metadata `GENERATOR: grpc` (the key upstream's
 *   gRPC bootstrap sets) or a `user_agent_name` starting with `gRPC` (what
 *   every gRPC library reports). Served API listeners `<host>:<port>`.
 * - **our sidecar**: `user_agent_name: disco-agent` (`disco-agent proxy
 *   --discoveryAddress`). It subscribes to the configuration documents.
 * - **Envoy**: everything else (Envoy reports `user_agent_name: envoy`).
 *   Served listeners with real addresses, routes, clusters and the filter's
 *   extension configuration, computed for the workload its node id names.
 *
 * The node id is upstream's `<type>~<ip>~<pod>.<namespace>~<namespace>.svc.<domain>`
 * (`type` is `sidecar`, or `router` for a gateway). Node metadata `NAMESPACE`
 * and `LABELS` (upstream's keys) win over what the id says, so an Envoy whose
 * pod the registry does not list still gets its inbound listeners.
 */
export type ProxyKind = "envoy" | "proxyless" | "disco-agent";

export function proxyKind(node: Pick<ProxyNode, "metadata" | "userAgentName">): ProxyKind {
  if (node.metadata.GENERATOR === "grpc" || node.userAgentName.startsWith("gRPC")) return "proxyless";
  if (node.userAgentName === "disco-agent") return "disco-agent";
  return "envoy";
}

export interface NodeIdentity {
  /** `sidecar` or `router`. */
  readonly type: string;
  readonly ip: string;
  /** The pod's name (the id's third part up to its first dot). */
  readonly pod: string;
  readonly namespace: string;
  /** Node metadata LABELS, when given. */
  readonly labels?: Readonly<Record<string, string>>;
}

/** The workload a node id and metadata describe; undefined when the id is not upstream's four `~`-separated parts. */
export function nodeIdentity(node: Pick<ProxyNode, "id" | "metadata">): NodeIdentity | undefined {
  const parsed = parseNodeId(node.id);
  if (!parsed) return undefined;
  const { type, ip, pod, namespace: idNamespace } = parsed;
  const metaNamespace = node.metadata.NAMESPACE;
  const metaLabels = node.metadata.LABELS;
  const labels =
    metaLabels && typeof metaLabels === "object" && !Array.isArray(metaLabels)
      ? Object.fromEntries(Object.entries(metaLabels).map(([k, v]) => [k, String(v)]))
      : undefined;
  return { type, ip, pod, namespace: typeof metaNamespace === "string" && metaNamespace ? metaNamespace : idNamespace, labels };
}
