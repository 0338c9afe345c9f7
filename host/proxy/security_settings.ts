import { parseServiceEndpoints } from "../hub/clusters.ts";
import type { AgentEnvironment, AgentOptions } from "./agent_options.ts";
import { DEFAULT_MESH_SETTINGS, type MeshSettings, loadMeshConfig, parseMeshConfig } from "./mesh_config.ts";
import type { SidecarSecurityOptions } from "./sidecar.ts";

/** `k=v,k=v` → labels; throws naming the bad entry. */
export function parseLabels(text: string, flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const eq = part.indexOf("=");
    if (eq <= 0) throw new Error(`${flag}: expected k=v[,k=v…], got ${JSON.stringify(part)}`);
    out[part.slice(0, eq)] = part.slice(eq + 1);
  }
  return out;
}

/**
 * The security path's settings from the flags (docs/sidecar.md "Security");
 * undefined when `--caAddress` is not given (the sidecar as before). Throws
 * with the flag's name for a bad value.
 */
export function securitySettings(
  opts: Partial<AgentOptions> & Pick<AgentOptions, "appPort">,
  env: AgentEnvironment,
  namespace: string,
): (Omit<SidecarSecurityOptions, "tls" | "jwks"> & { caAddress: string; trustDomain: string; ttlMs: number; keyAlgorithm: "RSA" | "ECDSA" }) | undefined {
  const caAddress = opts.caAddress;
  const anySecurityFlag = opts.meshConfigFile !== undefined || opts.gateway === true || (opts.endpoint ?? []).length > 0;
  if (!caAddress) {
    if (anySecurityFlag)
      throw new Error(
        "--meshConfigFile, --gateway and --endpoint need --caAddress or --discoveryAddress without --controlPlaneAuthPolicy NONE (the security path runs with workload certificates)",
      );
    for (const name of ["MESH_CONFIG", "MESH_AUTO_MTLS_ENABLED", "OUTPUT_KEY_CERT_TO_DIRECTORY", "PKCS8_KEY"] as const) {
      if (env[name])
        throw new Error(
          `${name} needs --caAddress, CA_ADDR or --discoveryAddress without --controlPlaneAuthPolicy NONE (the security path runs with workload certificates)`,
        );
    }
    return undefined;
  }
  if (!/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):[0-9]{1,5}$/.test(caAddress)) throw new Error(`--caAddress: expected HOST:PORT, got ${JSON.stringify(caAddress)}`);
  let mesh: MeshSettings = DEFAULT_MESH_SETTINGS;
  if (opts.meshConfigFile !== undefined) mesh = loadMeshConfig(opts.meshConfigFile);
  else if (env.MESH_CONFIG) mesh = parseMeshConfig(env.MESH_CONFIG, "MESH_CONFIG");
  const autoMtls = env.MESH_AUTO_MTLS_ENABLED;
  if (autoMtls) {
    if (autoMtls !== "true" && autoMtls !== "false") throw new Error(`MESH_AUTO_MTLS_ENABLED: expected true or false, got ${JSON.stringify(autoMtls)}`);
    mesh = Object.freeze({ ...mesh, enableAutoMtls: autoMtls === "true" });
  }
  const fallthrough = env.DISCO_ENABLE_FALLTHROUGH_ROUTE;
  if (fallthrough !== undefined) {
    if (fallthrough !== "true" && fallthrough !== "false")
      throw new Error(`DISCO_ENABLE_FALLTHROUGH_ROUTE: expected true or false, got ${JSON.stringify(fallthrough)}`);
    mesh = Object.freeze({ ...mesh, enableFallthroughRoute: fallthrough === "true" });
  }
  if (opts.trustDomain) mesh = Object.freeze({ ...mesh, trustDomain: opts.trustDomain });
  const labelsText = opts.labels ?? env.POD_LABELS;
  const labels = labelsText !== undefined ? parseLabels(labelsText, opts.labels !== undefined ? "--labels" : "POD_LABELS") : undefined;
  const serviceAccount = opts.serviceAccount || "default";
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(serviceAccount))
    throw new Error(`--serviceAccount: ${JSON.stringify(serviceAccount)} is not a service account name`);
  const clockSkew = Number(opts.jwtClockSkewSeconds ?? 0);
  if (!Number.isInteger(clockSkew) || clockSkew < 0)
    throw new Error(`--jwtClockSkewSeconds: expected a non-negative integer, got ${JSON.stringify(opts.jwtClockSkewSeconds)}`);
  const keyAlgorithm = opts.workloadKeyAlgorithm ?? "RSA";
  return {
    caAddress,
    trustDomain: mesh.trustDomain,
    ttlMs: opts.workloadCertTtl ?? 0,
    keyAlgorithm,
    mesh,
    endpoints: parseServiceEndpoints(opts.endpoint ?? []),
    gateway: opts.gateway === true,
    containerPort: opts.containerPort ?? opts.appPort,
    name: env.POD_NAME ?? "sidecar",
    namespace,
    serviceAccount,
    labels,
    clockSkewSeconds: clockSkew,
  };
}
