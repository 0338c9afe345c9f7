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

async function served(adminUrl: string): Promise<Served[]> {
  try {
    const res = await fetch(`${adminUrl}/config_dump`);
    if (!res.ok) return [];
    const dump = (await res.json()) as { servedRoutes?: Served[] };
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
    for (const [port, s] of w.sidecars) out.set(`${w.spec.id}:${port}`, total(await served(s.adminUrl)));
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
      const list = await served(s.adminUrl);
      if (total(list) <= (before.get(`${w.spec.id}:${port}`) ?? 0) || list.length === 0) continue;
      const last = list[list.length - 1];
      return { by: w.spec.id, virtualService: last.virtualService, routeIndex: last.routeIndex, destination: last.destination };
    }
  }
  return undefined;
}
