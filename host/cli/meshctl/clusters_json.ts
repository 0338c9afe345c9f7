import { readFileSync } from "node:fs";
import { DumpError, type DumpCluster } from "./sidecar_admin.ts";

/**
 * The proxy admin's `/clusters?format=json` (Envoy's ClusterStatuses, what
 * spec 3 names for `proxy-config endpoints --file`): each cluster's hosts as
 * the endpoints table shows them. The health is Envoy's `eds_health_status`,
 * else UNHEALTHY when an active health check or outlier detection failed,
 * else HEALTHY.
 */
export function isClustersJson(json: unknown): boolean {
  return typeof json === "object" && json !== null && Array.isArray((json as Record<string, unknown>).cluster_statuses);
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Obj) : {});

export function clustersFromJson(json: unknown, file: string): DumpCluster[] {
  const statuses = (json as Obj).cluster_statuses as unknown[];
  return statuses.map((raw, i) => {
    const c = obj(raw);
    if (typeof c.name !== "string") throw new DumpError(`${file}: cluster_statuses[${i}].name: expected a cluster name, got ${JSON.stringify(c.name)}`);
    const hosts = Array.isArray(c.host_statuses) ? c.host_statuses : [];
    return {
      cluster: c.name,
      endpoints: hosts.map((h, j) => {
        const host = obj(h);
        const address = obj(host.address);
        const socket = obj(address.socket_address);
        const pipe = obj(address.pipe);
        if (typeof socket.address !== "string" && typeof pipe.path !== "string") {
          throw new DumpError(`${file}: cluster_statuses[${i}].host_statuses[${j}].address: expected socket_address or pipe`);
        }
        const health = obj(host.health_status);
        const status =
          typeof health.eds_health_status === "string"
            ? health.eds_health_status
            : health.failed_active_health_check === true || health.failed_outlier_check === true
              ? "UNHEALTHY"
              : "HEALTHY";
        return typeof socket.address === "string"
          ? { address: socket.address, port: Number(socket.port_value ?? 0), health: status }
          : { address: `unix://${String(pipe.path)}`, port: 0, health: status };
      }),
    };
  });
}

/** The endpoints of a `--file` that holds `/clusters?format=json`, or undefined when it holds something else (a /config_dump). */
export function readClustersFile(file: string): DumpCluster[] | undefined {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return undefined; // readDumpFile reports it
  }
  return isClustersJson(json) ? clustersFromJson(json, file) : undefined;
}
