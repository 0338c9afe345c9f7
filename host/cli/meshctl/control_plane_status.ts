import { adminRequest } from "../../proxy/admin_client.ts";
import { unifiedDiff } from "./line_diff.ts";
import { formatTable } from "./table.ts";
import type { SynczRow as ServedSynczRow } from "../../discovery/sync_status.ts";

/**
 * `meshctl proxy-status --debugAddress HOST:PORT`: every proxy connected to
 * disco-discovery and the sync state of each xDS type, read from its debug
 * port (`/debug/syncz`) as istioctl reads istiod's, in istioctl's table
 * (`NAME CLUSTER CDS LDS EDS RDS ECDS DISCO VERSION`); with a pod, how the
 * proxy's acknowledged configuration differs from what disco-discovery serves
 * it now (`/debug/proxy_config`).
 *
 * Status of a type, as upstream's: ERROR when the proxy refused the last
 * response, NOT SENT when nothing was sent (or the proxy does not watch the
 * type), SYNCED when the proxy acknowledged what was last sent, else STALE.
 * Our Node sidecars subscribe to the mesh's configuration documents, from
 * which they build their clusters, listeners, endpoints and routes: their
 * CDS, LDS, EDS and RDS columns show that one subscription's state.
 */

export type SyncStatus = "SYNCED" | "NOT SENT" | "STALE" | "ERROR";

/** A row of disco-discovery's /debug/syncz as read: the fields after `nacked` may be missing from an older disco-discovery. */
export type SynczRow = Pick<ServedSynczRow, "proxy" | "type" | "sent" | "acked" | "nacked"> &
  Partial<Pick<ServedSynczRow, "proxyType" | "clusterId" | "proxyVersion" | "controlPlane">>;

export const COLUMNS = ["cds", "lds", "eds", "rds", "ecds"] as const;
/** The types a Node sidecar's configuration documents stand for. */
const DOCUMENT_COLUMNS: ReadonlySet<string> = new Set(["cds", "lds", "eds", "rds"]);

export interface ProxySync {
  /** `<pod>.<namespace>` from an upstream node id, else the id. */
  name: string;
  id: string;
  cluster: string;
  status: Record<(typeof COLUMNS)[number], SyncStatus>;
  /** Why a type is in ERROR (the proxy's NACK). */
  errors: Partial<Record<(typeof COLUMNS)[number], string>>;
  controlPlane: string;
  version: string;
}

/** `<pod>.<namespace>` of `sidecar~<ip>~<pod>.<namespace>~<domain>`; the id itself otherwise. */
export function proxyName(id: string): string {
  const parts = id.split("~");
  return parts.length === 4 ? parts[2] : id;
}

function statusOf(row: SynczRow | undefined): SyncStatus {
  if (!row) return "NOT SENT";
  if (row.nacked) return "ERROR";
  if (row.sent === null) return "NOT SENT";
  return row.sent === row.acked ? "SYNCED" : "STALE";
}

/** One entry per proxy, sorted by name, from the rows of every replica asked. */
export function proxySyncs(rows: readonly SynczRow[]): ProxySync[] {
  const byProxy = new Map<string, SynczRow[]>();
  for (const r of rows) byProxy.set(r.proxy, [...(byProxy.get(r.proxy) ?? []), r]);
  const out = [...byProxy].map(([id, list]): ProxySync => {
    const documents = list.find((r) => r.type === "config");
    const rowFor = (column: string) => list.find((r) => r.type === column) ?? (DOCUMENT_COLUMNS.has(column) ? documents : undefined);
    const status = Object.fromEntries(COLUMNS.map((c) => [c, statusOf(rowFor(c))])) as ProxySync["status"];
    const errors = Object.fromEntries(COLUMNS.flatMap((c) => (rowFor(c)?.nacked ? [[c, rowFor(c)!.nacked!.message]] : [])));
    const first = list[0];
    return {
      name: proxyName(id),
      id,
      cluster: first.clusterId ?? "",
      status,
      errors,
      controlPlane: first.controlPlane ?? "",
      version: first.proxyVersion ?? "",
    };
  });
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export function formatProxySyncs(proxies: readonly ProxySync[]): string {
  const rows = [["NAME", "CLUSTER", "CDS", "LDS", "EDS", "RDS", "ECDS", "DISCO", "VERSION"]];
  for (const p of proxies) rows.push([p.name, p.cluster, ...COLUMNS.map((c) => p.status[c]), p.controlPlane, p.version]);
  return formatTable(rows);
}

/** A failure to ask disco-discovery's debug port. */
export class DebugPortError extends Error {}

export async function debugJson<T>(target: { host: string; port: number }, path: string): Promise<T> {
  let res: { status: number; body: string };
  try {
    res = await adminRequest(target.port, "GET", path, undefined, target.host);
  } catch (e) {
    throw new DebugPortError(`${target.host}:${target.port}${path}: ${(e as Error).message}`);
  }
  if (res.status !== 200) throw new DebugPortError(`${target.host}:${target.port}${path}: HTTP ${res.status}: ${res.body.trim()}`);
  return JSON.parse(res.body) as T;
}

/** The /debug/syncz rows of every replica, each row tagged with the replica that answered. */
export async function fetchSyncz(targets: ReadonlyArray<{ host: string; port: number }>): Promise<Array<SynczRow & { from: { host: string; port: number } }>> {
  const lists = await Promise.all(targets.map(async (t) => (await debugJson<SynczRow[]>(t, "/debug/syncz")).map((r) => ({ ...r, from: t }))));
  return lists.flat();
}

/** A `<pod>[.<namespace>]` argument matched against a proxy's name, as istioctl does (`namespace` when the argument has none). */
export function matchesPod(arg: string, namespace: string, proxy: ProxySync): boolean {
  const wanted = arg.includes(".") ? arg : `${arg}.${namespace}`;
  return proxy.name === wanted || proxy.id === arg;
}

/** Upstream's words for each type in the diff. */
const TYPE_NAMES: Readonly<Record<string, string>> = {
  cds: "Clusters",
  lds: "Listeners",
  rds: "Routes",
  eds: "Endpoints",
  ecds: "Extension Configs",
  sds: "Secrets",
  config: "Configuration Documents",
};

/**
 * istioctl's per-proxy output: `<Type> Match` when the proxy's acknowledged
 * resources are what disco-discovery serves it now, else a unified diff
 * (`--- Disco <Type>`, `+++ Proxy <Type>`). Types in upstream's order.
 */
export function formatProxyDiff(config: { configs: Array<{ type: string; disco: unknown[]; proxy: unknown[] }> }): { text: string; differs: boolean } {
  const order = ["cds", "lds", "rds", "eds", "ecds", "sds", "config"];
  const rank = (t: string) => (order.indexOf(t) < 0 ? order.length : order.indexOf(t));
  let differs = false;
  const out = [...config.configs]
    .sort((a, b) => rank(a.type) - rank(b.type))
    .map((c) => {
      const name = TYPE_NAMES[c.type] ?? c.type;
      const diff = unifiedDiff(JSON.stringify(c.disco, null, 2), JSON.stringify(c.proxy, null, 2), `Disco ${name}`, `Proxy ${name}`);
      if (diff) differs = true;
      return diff || `${name} Match\n`;
    });
  return { text: out.join(""), differs };
}
