import type { ConnectionState, ProxyNode } from "./ads_server.ts";
import { proxyKind } from "./proxy_kind.ts";
import type { Resource } from "./resource_set.ts";
import { ackedResources } from "./ads_subscription.ts";
import { SHORT_TYPE } from "./type_urls.ts";

/**
 * What disco-discovery's debug port says of each connected proxy's sync
 * (`/debug/syncz`, and `/debug/proxy_config` for one proxy), read by
 * `meshctl proxy-status --debugAddress` as istioctl reads istiod's sync
 * status: per proxy and subscribed type the version sent and acknowledged,
 * the refusal if any, when, and who the proxy and the control plane are.
 */

/** One row of `/debug/syncz`: a proxy's subscription to one type. */
export interface SynczRow {
  proxy: string;
  type: string;
  sent: string | null;
  acked: string | null;
  nacked: { version: string; message: string } | null;
  /** Distribution tracking only. */
  sentConfig?: number | null;
  ackedConfig?: number | null;
  /** `envoy`, `proxyless` or `disco-agent` (host/discovery/proxy_kind.ts). */
  proxyType: string;
  /** Node metadata CLUSTER_ID (upstream's), else empty. */
  clusterId: string;
  /** Node metadata MESH_VERSION (upstream's ISTIO_VERSION is read too), else empty. */
  proxyVersion: string;
  sentAt: string | null;
  ackedAt: string | null;
  /** This disco-discovery instance (its POD_NAME, else its host name). */
  controlPlane: string;
}

const text = (v: unknown) => (typeof v === "string" ? v : "");

export function proxyVersion(node: ProxyNode): string {
  return text(node.metadata.MESH_VERSION) || text(node.metadata.ISTIO_VERSION);
}

export function synczRows(connections: readonly ConnectionState[], tracking: boolean, controlPlane: string): SynczRow[] {
  return connections.flatMap((c) =>
    [...c.subscriptions].map(([type, s]) => ({
      proxy: c.node.id,
      type: SHORT_TYPE[type] ?? type,
      sent: s.sentVersion ?? null,
      acked: s.ackedVersion ?? null,
      nacked: s.nacked ?? null,
      ...(tracking ? { sentConfig: s.sentConfig ?? null, ackedConfig: s.ackedConfig ?? null } : {}),
      proxyType: proxyKind(c.node),
      clusterId: text(c.node.metadata.CLUSTER_ID),
      proxyVersion: proxyVersion(c.node),
      sentAt: s.sentAt === undefined ? null : new Date(s.sentAt).toISOString(),
      ackedAt: s.ackedAt === undefined ? null : new Date(s.ackedAt).toISOString(),
      controlPlane,
    })),
  );
}

/** One type of `/debug/proxy_config`: what disco-discovery serves the proxy now, and what the proxy acknowledged. */
export interface ProxyTypeConfig {
  type: string;
  disco: unknown[];
  proxy: unknown[];
}

/**
 * `/debug/proxy_config?proxyID=<node id>`: per subscribed type, the resources
 * disco-discovery would serve the proxy now (`serveNow`) and those the proxy
 * holds as far as it acknowledged, each decoded by `decode` (Secrets redacted),
 * sorted by name. Undefined when no such proxy is connected.
 */
export function proxyConfig(
  connections: readonly ConnectionState[],
  proxyId: string,
  serveNow: (node: ProxyNode, type: string, names: ReadonlySet<string> | "*") => readonly Resource[],
  decode: (r: Resource) => unknown,
): { proxy: string; configs: ProxyTypeConfig[] } | undefined {
  const c = connections.find((x) => x.node.id === proxyId);
  if (!c) return undefined;
  const byName = (list: Iterable<Resource>) => [...list].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map(decode);
  const configs = [...c.subscriptions].map(([type, s]) => ({
    type: SHORT_TYPE[type] ?? type,
    disco: byName(serveNow(c.node, type, s.names)),
    proxy: byName(ackedResources(s)),
  }));
  return { proxy: c.node.id, configs };
}
