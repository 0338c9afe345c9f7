/**
 * The xDS node metadata the agent sends disco-discovery, as upstream's
 * agent builds it: every `MESH_META_<KEY>` variable as `<KEY>` (the injector
 * sets CLUSTER_ID, INTERCEPTION_MODE, WORKLOAD_NAME, APP_CONTAINERS, …), plus
 * NAMESPACE, and MESH_VERSION (the agent's build). `meshctl proxy-status`
 * shows CLUSTER_ID and MESH_VERSION in its CLUSTER and VERSION columns.
 */
export const META_PREFIX = "MESH_META_";
/** Upstream's CLUSTER_ID default. */
export const DEFAULT_CLUSTER_ID = "Kubernetes";

export function nodeMetadata(env: Readonly<Record<string, string | undefined>>, version: string): Record<string, string> {
  const out: Record<string, string> = { CLUSTER_ID: DEFAULT_CLUSTER_ID };
  for (const [name, value] of Object.entries(env)) {
    // the TLS file variables are spec 2's, refused as not applicable before this runs
    if (name.startsWith(META_PREFIX) && name.length > META_PREFIX.length && value !== undefined) out[name.slice(META_PREFIX.length)] = value;
  }
  if (env.POD_NAMESPACE) out.NAMESPACE = env.POD_NAMESPACE;
  out.MESH_VERSION = version;
  return out;
}
