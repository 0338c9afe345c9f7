import { DebugPortError, debugJson, fetchSyncz, matchesPod, proxySyncs } from "./control_plane_status.ts";
import type { DumpCluster } from "./sidecar_admin.ts";
import { formatTable } from "./table.ts";

/**
 * `meshctl proxy-config listener|route|endpoints <pod> --debugAddress HOST:PORT`:
 * a proxy's configuration as the control plane knows it — the xDS resources
 * the proxy last acknowledged (disco-discovery's `/debug/proxy_config`) —
 * for proxies that speak xDS (Envoy, proxyless gRPC). A Node sidecar is served
 * the mesh's configuration documents and builds its listeners and routes
 * itself: its own admin port (`--admin`) shows them.
 */

export type XdsType = "lds" | "rds" | "eds";

type Obj = Record<string, any>;

/** The resources of `type` the pod's proxy acknowledged; throws DebugPortError when it cannot be told. */
export async function acknowledgedResources(
  targets: ReadonlyArray<{ host: string; port: number }>,
  pod: string,
  namespace: string,
  type: XdsType,
): Promise<{ proxy: string; resources: Obj[] }> {
  const rows = await fetchSyncz(targets);
  const proxy = proxySyncs(rows).find((p) => matchesPod(pod, namespace, p));
  if (!proxy) throw new DebugPortError(`no proxy ${pod.includes(".") ? pod : `${pod}.${namespace}`} is connected to disco-discovery`);
  const from = rows.find((r) => r.proxy === proxy.id)!;
  if (from.proxyType === "disco-agent")
    throw new DebugPortError(
      `${proxy.name} is a disco-agent sidecar: it is served configuration documents and builds its ${type === "lds" ? "listeners" : type === "rds" ? "routes" : "endpoints"} itself; ask its admin port (--admin)`,
    );
  const config = await debugJson<{ configs: Array<{ type: string; proxy: Obj[] }> }>(from.from, `/debug/proxy_config?proxyID=${encodeURIComponent(proxy.id)}`);
  return { proxy: proxy.name, resources: config.configs.find((c) => c.type === type)?.proxy ?? [] };
}

const socket = (address: Obj | undefined) => address?.socket_address ?? {};

/** Listeners: NAME ADDRESS PORT CHAINS (filter chains) DESTINATION (the first chain's route or cluster). */
export function formatXdsListeners(listeners: readonly Obj[], port: number): string {
  const rows = [["NAME", "ADDRESS", "PORT", "CHAINS", "DESTINATION"]];
  for (const l of listeners) {
    const s = socket(l.address);
    if (port !== 0 && s.port_value !== port) continue;
    const chains: Obj[] = l.filter_chains ?? [];
    const destination = chains
      .flatMap((c) => (c.filters ?? []) as Obj[])
      .map((f) => f.typed_config?.rds?.route_config_name ?? f.typed_config?.cluster ?? "")
      .find((d: string) => d) as string | undefined;
    rows.push([
      l.name ?? "",
      s.address ?? "-",
      String(s.port_value ?? "-"),
      String(chains.length),
      destination ? (destination.includes("|") ? `Cluster: ${destination}` : `Route: ${destination}`) : "-",
    ]);
  }
  return formatTable(rows);
}

/** Routes: NAME VIRTUAL HOST DOMAINS MATCH (the first route's prefix or path). */
export function formatXdsRoutes(routes: readonly Obj[], name: string | undefined): string {
  const rows = [["NAME", "VIRTUAL HOST", "DOMAINS", "MATCH"]];
  for (const r of routes) {
    if (name && r.name !== name) continue;
    for (const v of (r.virtual_hosts ?? []) as Obj[]) {
      const m = (v.routes?.[0]?.match ?? {}) as Obj;
      rows.push([r.name ?? "", v.name ?? "", ((v.domains ?? []) as string[]).join(",") || "-", m.prefix ?? m.path ?? m.safe_regex?.regex ?? "-"]);
    }
  }
  return formatTable(rows);
}

/** ClusterLoadAssignments as the endpoint table's clusters (health as the control plane sent it). */
export function xdsEndpoints(assignments: readonly Obj[], name: string | undefined): DumpCluster[] {
  return assignments
    .filter((a) => !name || a.cluster_name === name)
    .map((a) => ({
      cluster: a.cluster_name ?? "",
      endpoints: ((a.endpoints ?? []) as Obj[]).flatMap((locality) =>
        ((locality.lb_endpoints ?? []) as Obj[]).map((e) => {
          const s = socket(e.endpoint?.address);
          return { address: s.address ?? "", port: s.port_value ?? 0, health: typeof e.health_status === "string" ? e.health_status : "HEALTHY" };
        }),
      ),
    }));
}
