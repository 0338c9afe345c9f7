import { startMeshCa } from "../../../demo/secure_mesh.ts";

/** The certificate authority every sidecar of a trust domain gets its workload certificate from. */
export type SimulateCa = Awaited<ReturnType<typeof startMeshCa>>;

/**
 * Starts the one `mesh_ca` process a simulate run shares among all the
 * scenarios of a trust domain (its start is the slowest step of a run; its
 * `address` is what every sidecar is given as `--caAddress`).
 */
export function startSimulateCa(trustDomain: string): Promise<SimulateCa> {
  return startMeshCa(["--trust-domain", trustDomain]);
}
