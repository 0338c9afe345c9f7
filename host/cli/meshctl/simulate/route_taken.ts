import { adminRequest } from "../../../proxy/admin_client.ts";
import type { ScenarioMesh } from "./scenario_mesh.ts";

/** Which VirtualService, route index and destination served a request: the simulate output's optional `route` field. */
export interface RouteTaken {
  /** The sidecar or gateway that routed (`ns/name` of its workload id). */
  readonly by: string;
  readonly virtualService: string;
  readonly routeIndex: number;
  readonly destination: string;
}

type Served = { virtualService: string; routeIndex: number; destination: string; count: number };

// node:http, not fetch: loading fetch's implementation (undici) costs meshctl a few hundred milliseconds.
async function served(adminPort: number): Promise<Served[]> {
  try {
    const res = await adminRequest(adminPort, "GET", "/config_dump");
    if (res.status !== 200) return [];
    const dump = JSON.parse(res.body) as { servedRoutes?: Served[] };
    return dump.servedRoutes ?? [];
  } catch {
    return [];
  }
}

const total = (list: readonly Served[]) => list.reduce((a, s) => a + s.count, 0);

/** The routing counts of every sidecar of a scenario, before a request. */
export async function snapshotRoutes(mesh: ScenarioMesh): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const w of mesh.workloads.values()) {
    for (const [port, s] of w.sidecars) out.set(`${w.spec.id}:${port}`, total(await served(s.adminPort)));
  }
  return out;
}

/**
 * The route the request took, read from the sidecars' /config_dump: the
 * newest route of the first sidecar whose count moved (client sidecar
 * first, then gateways). Undefined when no VirtualService route served it.
 */
export async function routeTaken(mesh: ScenarioMesh, before: ReadonlyMap<string, number>): Promise<RouteTaken | undefined> {
  for (const w of mesh.workloads.values()) {
    for (const [port, s] of w.sidecars) {
      const list = await served(s.adminPort);
      if (total(list) <= (before.get(`${w.spec.id}:${port}`) ?? 0) || list.length === 0) continue;
      const last = list[list.length - 1];
      return { by: w.spec.id, virtualService: last.virtualService, routeIndex: last.routeIndex, destination: last.destination };
    }
  }
  return undefined;
}
