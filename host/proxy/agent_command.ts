import { existsSync } from "node:fs";
import { EXIT_BAD_CONFIG, EXIT_FAILURE, EXIT_OK } from "../cli/exit_codes.ts";
import type { Logger } from "../telemetry/logger.ts";
import { FilterModule, RELEASE_WASM } from "../wasm/filter_module.ts";
import { parseClusters, parseServiceEndpoints } from "../hub/clusters.ts";
import { DEFAULT_JWKS_COOLDOWN_MS, JwksCache } from "../security/jwt/jwks.ts";
import { DEFAULT_LISTENER_LIMITS, type ListenerLimits } from "./listener_limits.ts";
import { spiffeId } from "../security/workload.ts";
import { DEFAULT_MESH_SETTINGS, type MeshSettings, loadMeshConfig } from "./mesh_config.ts";
import { WorkloadTls } from "./workload_tls.ts";
import type { SidecarSecurityOptions } from "./sidecar.ts";
import { HubTransport } from "../hub/transport.ts";
import type { GrpcCall } from "../wasm/abi_types.ts";
import { LISTENING_LINE_PREFIX, Sidecar } from "./sidecar.ts";

export const SIDECAR_LOG_SCOPES = ["default", "filter", "hub", "config"] as const;

/** Environment variables of the seed that apply to the sidecar. */
export interface AgentEnvironment {
  POD_NAME?: string;
  POD_NAMESPACE?: string;
  INSTANCE_IP?: string;
  /** Overrides --drainDuration (seconds). */
  TERMINATION_DRAIN_DURATION_SECONDS?: string;
  /** Workload labels `k=v,k=v` when --labels is not given. */
  POD_LABELS?: string;
  /** `true`/`false`: overrides the mesh config's enableFallthroughRoute. */
  DISCO_ENABLE_FALLTHROUGH_ROUTE?: string;
}

/** `k=v,k=v` → labels; throws naming the bad entry. */
export function parseLabels(text: string, flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text.split(",").map((p) => p.trim()).filter(Boolean)) {
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
export function securitySettings(opts: Record<string, unknown>, env: AgentEnvironment, namespace: string): (Omit<SidecarSecurityOptions, "tls" | "jwks"> & { caAddress: string; trustDomain: string; ttlMs: number; keyAlgorithm: "RSA" | "ECDSA" }) | undefined {
  const caAddress = opts.caAddress as string | undefined;
  const anySecurityFlag = opts.meshConfigFile !== undefined || opts.gateway === true || ((opts.endpoint as string[] | undefined) ?? []).length > 0;
  if (!caAddress) {
    if (anySecurityFlag) throw new Error("--meshConfigFile, --gateway and --endpoint need --caAddress (the security path runs with workload certificates)");
    return undefined;
  }
  if (!/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):[0-9]{1,5}$/.test(caAddress)) throw new Error(`--caAddress: expected HOST:PORT, got ${JSON.stringify(caAddress)}`);
  let mesh: MeshSettings = DEFAULT_MESH_SETTINGS;
  if (opts.meshConfigFile !== undefined) mesh = loadMeshConfig(opts.meshConfigFile as string);
  const fallthrough = env.DISCO_ENABLE_FALLTHROUGH_ROUTE;
  if (fallthrough !== undefined) {
    if (fallthrough !== "true" && fallthrough !== "false") throw new Error(`DISCO_ENABLE_FALLTHROUGH_ROUTE: expected true or false, got ${JSON.stringify(fallthrough)}`);
    mesh = Object.freeze({ ...mesh, enableFallthroughRoute: fallthrough === "true" });
  }
  if (opts.trustDomain) mesh = Object.freeze({ ...mesh, trustDomain: opts.trustDomain as string });
  const labelsText = (opts.labels as string | undefined) ?? env.POD_LABELS;
  const labels = labelsText !== undefined ? parseLabels(labelsText, opts.labels !== undefined ? "--labels" : "POD_LABELS") : undefined;
  const serviceAccount = (opts.serviceAccount as string) || "default";
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(serviceAccount)) throw new Error(`--serviceAccount: ${JSON.stringify(serviceAccount)} is not a service account name`);
  const clockSkew = Number(opts.jwtClockSkewSeconds ?? 0);
  if (!Number.isInteger(clockSkew) || clockSkew < 0) throw new Error(`--jwtClockSkewSeconds: expected a non-negative integer, got ${JSON.stringify(opts.jwtClockSkewSeconds)}`);
  const keyAlgorithm = ((opts.workloadKeyAlgorithm as string | undefined) ?? "RSA") as "RSA" | "ECDSA";
  return {
    caAddress,
    trustDomain: mesh.trustDomain,
    ttlMs: (opts.workloadCertTtl as number | undefined) ?? 0,
    keyAlgorithm,
    mesh,
    endpoints: parseServiceEndpoints((opts.endpoint as string[] | undefined) ?? []),
    gateway: opts.gateway === true,
    containerPort: (opts.containerPort as number | undefined) ?? (opts.appPort as number),
    name: env.POD_NAME ?? "sidecar",
    namespace,
    serviceAccount,
    labels,
    clockSkewSeconds: clockSkew,
  };
}

/**
 * `disco-agent proxy`: starts the sidecar, prints the listening line, and on
 * SIGTERM/SIGINT stops accepting, drains requests in flight and exits 0.
 */
export async function runProxyCommand(opts: Record<string, unknown>, logger: Logger, env: AgentEnvironment): Promise<number> {
  const log = logger.scope("default");
  const configDir = opts.configDir as string | undefined;
  if (!configDir || !existsSync(configDir)) {
    log.error(`--configDir: expected an existing directory, got ${JSON.stringify(configDir ?? "")}`);
    return EXIT_BAD_CONFIG;
  }
  let clusters;
  try {
    clusters = parseClusters(opts.cluster as string[]);
  } catch (e) {
    log.error((e as Error).message);
    return EXIT_BAD_CONFIG;
  }
  const namespace = env.POD_NAMESPACE ?? "default";
  let security: SidecarSecurityOptions | undefined;
  let workloadTls: WorkloadTls | undefined;
  try {
    const settings = securitySettings(opts, env, namespace);
    if (settings) {
      const identity = spiffeId({ namespace, serviceAccount: settings.serviceAccount }, settings.trustDomain);
      workloadTls = new WorkloadTls({
        caAddress: settings.caAddress,
        identity,
        trustDomain: settings.trustDomain,
        ttlMs: settings.ttlMs,
        keyAlgorithm: settings.keyAlgorithm,
        onError: (e, retryInMs) => log.warn(`workload certificate renewal failed: ${e.message}; retrying in ${retryInMs} ms`),
      });
      security = { ...settings, tls: workloadTls, jwks: new JwksCache({ cooldownMs: (opts.jwksRefetchCooldown as number | undefined) ?? DEFAULT_JWKS_COOLDOWN_MS }) };
    }
  } catch (e) {
    log.error((e as Error).message);
    return EXIT_BAD_CONFIG;
  }
  if (workloadTls) {
    try {
      await workloadTls.start();
      log.info(`workload certificate for ${workloadTls.options.identity} from ${workloadTls.options.caAddress}: expires ${workloadTls.current.expiresAt.toISOString()}, renewal at ${workloadTls.current.rotateAt.toISOString()}`);
    } catch (e) {
      log.error(`--caAddress ${workloadTls.options.caAddress}: no workload certificate: ${(e as Error).message}`);
      workloadTls.stop();
      return EXIT_FAILURE;
    }
  }
  const identity = {
    id: (opts.id as string) || `${env.POD_NAME ?? "sidecar"}.${namespace}`,
    ip: (opts.ip as string) || (env.INSTANCE_IP ?? ""),
    domain: (opts.domain as string) || `${namespace}.svc.cluster.local`,
    serviceCluster: opts.serviceCluster as string,
  };
  const hubLog = logger.scope("hub");
  const transportStats = new Map<string, number>([
    ["hub_transport.calls", 0],
    ["hub_transport.failed_attempts", 0],
    ["hub_transport.retries", 0],
    ["hub_transport.failed_calls", 0],
  ]);
  const bump = (name: string) => transportStats.set(name, (transportStats.get(name) ?? 0) + 1);
  const transport = new HubTransport({
    clusters,
    onAttemptFailed: (a) => {
      bump("hub_transport.failed_attempts");
      if (a.retryInMs !== undefined) bump("hub_transport.retries");
      hubLog.warn(`${a.cluster} ${a.method} attempt ${a.attempt} failed: ${a.status.code} ${a.status.message}${a.retryInMs !== undefined ? `; retrying in ${a.retryInMs} ms` : ""}`);
    },
  });
  const hub = {
    async call(call: GrpcCall) {
      bump("hub_transport.calls");
      const result = await transport.call(call);
      if (!result.ok) bump("hub_transport.failed_calls");
      return result;
    },
  };
  const limits: ListenerLimits = Object.freeze({
    headerReadTimeoutMs: (opts.headerReadTimeout as number | undefined) ?? DEFAULT_LISTENER_LIMITS.headerReadTimeoutMs,
    idleTimeoutMs: (opts.idleTimeout as number | undefined) ?? DEFAULT_LISTENER_LIMITS.idleTimeoutMs,
    maxConnections: (opts.maxConnections as number | undefined) ?? DEFAULT_LISTENER_LIMITS.maxConnections,
    maxConcurrentRequests: (opts.maxConcurrentRequests as number | undefined) ?? DEFAULT_LISTENER_LIMITS.maxConcurrentRequests,
  });
  const wasm = (opts.wasm as string | undefined) ?? RELEASE_WASM;
  const checks = FilterModule.load(wasm);
  const sidecar = new Sidecar({
    wasm,
    configDir,
    bindAddress: opts.bindAddress as string,
    inboundPort: opts.inboundPort as number,
    outboundPort: opts.outboundPort as number,
    adminPort: opts.proxyAdminPort as number,
    statusPort: opts.statusPort as number,
    tcpPort: opts.tcpPort === undefined ? -1 : (opts.tcpPort as number),
    tcpAppPort: (opts.tcpAppPort as number | undefined) ?? (opts.appPort as number),
    appHost: opts.appHost as string,
    appPort: opts.appPort as number,
    clusters: new Map(
      [...clusters.values()].flatMap((c) => (c.address.kind === "tcp" ? [[c.name, { host: c.address.host, port: c.address.port }] as const] : [])),
    ),
    inboundService: opts.inboundService as string,
    hub,
    extraStats: () => transportStats,
    checks: { template: (t) => checks.checkTemplate(t), regex: (p) => checks.checkRegex(p) },
    logger,
    identity: security ? { ...identity, spiffeId: workloadTls!.options.identity, serviceAccount: security.serviceAccount, ...(security.labels ? { labels: security.labels } : {}) } as typeof identity : identity,
    security,
    limits,
  });
  let addresses;
  try {
    addresses = await sidecar.start();
  } catch (e) {
    log.error((e as Error).message);
    transport.close();
    workloadTls?.stop();
    return EXIT_BAD_CONFIG;
  }
  process.stdout.write(`${LISTENING_LINE_PREFIX}${JSON.stringify(addresses)}\n`);
  const drainSeconds = Number(env.TERMINATION_DRAIN_DURATION_SECONDS);
  const drainMs = Number.isFinite(drainSeconds) && drainSeconds >= 0 && env.TERMINATION_DRAIN_DURATION_SECONDS !== undefined ? drainSeconds * 1000 : (opts.drainDuration as number);
  return await new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info(`${signal}: draining for up to ${drainMs} ms`);
      const hardStop = setTimeout(() => resolve(EXIT_FAILURE), Math.max(drainMs, opts.parentShutdownDuration as number) + 5000);
      hardStop.unref();
      sidecar.drain(drainMs).then(
        () => {
          transport.close();
          workloadTls?.stop();
          log.info("drained; exiting");
          resolve(EXIT_OK);
        },
        (e) => {
          log.error(`shutdown failed: ${(e as Error).message}`);
          resolve(EXIT_FAILURE);
        },
      );
    };
    process.on("SIGTERM", () => stop("SIGTERM"));
    process.on("SIGINT", () => stop("SIGINT"));
  });
}
