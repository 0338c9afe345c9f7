import { type ConfigDump, adminRequest, fetchDump, podMatchesIdentity } from "./sidecar_admin.ts";
import { formatTable } from "./table.ts";

/**
 * `meshctl proxy-status`: upstream compares what discovery sent each proxy
 * with what it acknowledged. There is no control plane here, so the xDS
 * columns say so, and the status comes from each sidecar's own `/ready`
 * (SYNCED: a configuration is applied; NOT READY: none yet, or draining)
 * with a summary of its `/config_dump`.
 */

export const NO_CONTROL_PLANE_XDS =
  "no control plane here (no --debugAddress): xDS sync (CDS, LDS, EDS, RDS) is disco-discovery's to report; give its debug address with --debugAddress";

export type SidecarStatus = "SYNCED" | "NOT READY" | "UNREACHABLE";

export interface ProxyStatusRow {
  /** `<pod>.<namespace>`; the admin URL when unreachable. */
  readonly name: string;
  readonly admin: string;
  readonly status: SidecarStatus;
  readonly listeners?: number;
  readonly routes?: number;
  readonly clusters?: number;
  readonly resources?: number;
  readonly files?: number;
  /** Why UNREACHABLE / NOT READY. */
  readonly detail?: string;
  readonly xds: "n/a";
}

function summarize(admin: string, dump: ConfigDump, ready: boolean, readyBody: string): ProxyStatusRow {
  const resources = Object.values(dump.configuration.resources ?? {}).reduce((n, list) => n + list.length, 0);
  return {
    name: dump.identity.id,
    admin,
    status: ready ? "SYNCED" : "NOT READY",
    listeners: Object.keys(dump.listeners).length,
    routes: (dump.routes ?? []).reduce((n, r) => n + r.virtualHosts.length, 0),
    clusters: Object.keys(dump.clusters ?? {}).length,
    resources,
    files: dump.configuration.files.length,
    ...(ready ? {} : { detail: readyBody.trim() || "not ready" }),
    xds: "n/a",
  };
}

/** Asks each admin URL for /ready and /config_dump. */
export async function proxyStatus(admins: readonly string[]): Promise<ProxyStatusRow[]> {
  return Promise.all(
    admins.map(async (admin): Promise<ProxyStatusRow> => {
      try {
        const ready = await adminRequest(admin, "GET", "/ready");
        const dump = await fetchDump(admin);
        return summarize(admin, dump, ready.status === 200, ready.body);
      } catch (e) {
        return { name: admin, admin, status: "UNREACHABLE", detail: (e as Error).message, xds: "n/a" };
      }
    }),
  );
}

/** Keeps the rows of the named pods; returns the pods no sidecar answered for. */
export function selectPods(rows: readonly ProxyStatusRow[], pods: readonly string[]): { rows: ProxyStatusRow[]; missing: string[] } {
  if (pods.length === 0) return { rows: [...rows], missing: [] };
  const missing = pods.filter((p) => !rows.some((r) => r.status !== "UNREACHABLE" && podMatchesIdentity(p, r.name)));
  return { rows: rows.filter((r) => r.status === "UNREACHABLE" || pods.some((p) => podMatchesIdentity(p, r.name))), missing };
}

const count = (n: number | undefined) => (n === undefined ? "-" : String(n));

export function formatProxyStatus(rows: readonly ProxyStatusRow[]): string {
  const table = [["NAME", "STATUS", "LISTENERS", "ROUTES", "CLUSTERS", "RESOURCES", "FILES", "XDS", "ADMIN"]];
  for (const r of rows)
    table.push([r.name, r.status, count(r.listeners), count(r.routes), count(r.clusters), count(r.resources), count(r.files), r.xds, r.admin]);
  const details = rows.filter((r) => r.detail).map((r) => `${r.name}: ${r.detail}\n`);
  return `${formatTable(table)}${details.join("")}\nXDS: ${NO_CONTROL_PLANE_XDS}\n`;
}

export function proxyStatusJson(rows: readonly ProxyStatusRow[]): string {
  return `${JSON.stringify({ proxies: rows, xds: NO_CONTROL_PLANE_XDS }, null, 2)}\n`;
}
