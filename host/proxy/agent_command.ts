import { createPrivateKey } from "node:crypto";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { WorkloadCertificate } from "../anchor/client.ts";
import type { ScopedLogger } from "../telemetry/logger.ts";
import { announceListening, handleSignals } from "../cli/daemon.ts";
import { EXIT_BAD_CONFIG, EXIT_FAILURE } from "../cli/exit_codes.ts";
import type { Logger } from "../telemetry/logger.ts";
import { FilterModule, RELEASE_WASM } from "../wasm/filter_module.ts";
import { parseClusters, parseServiceEndpoints } from "../hub/clusters.ts";
import { JwksCache } from "../security/jwt/jwks.ts";
import { spiffeId } from "../security/workload.ts";
import { DEFAULT_MESH_SETTINGS, type MeshSettings, loadMeshConfig, parseMeshConfig } from "./mesh_config.ts";
import { WorkloadTls } from "./workload_tls.ts";
import type { SidecarSecurityOptions } from "./sidecar.ts";
import { HubTransport } from "../hub/transport.ts";
import type { GrpcCall } from "../wasm/abi_types.ts";
import { LISTENING_LINE_PREFIX, Sidecar } from "./sidecar.ts";

/**
 * The agent's log scopes: spec 2's list for disco-agent, then the sidecar's
 * own (`filter`: the filter's messages; `hub`: hub transport; `config`).
 */
export const SIDECAR_LOG_SCOPES = [
  "all", "authn", "cache", "anchorclient", "configmapcontroller", "default", "cloudca", "model", "rbac", "sds", "secretfetcher",
  "stsclient", "stsserver", "token", "validation", "vault", "filter", "hub", "config",
] as const;

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
  /** Mesh settings YAML when --meshConfigFile is not given. */
  MESH_CONFIG?: string;
  /** `true`/`false`: overrides the mesh settings' enableAutoMtls. */
  MESH_AUTO_MTLS_ENABLED?: string;
  /** Directory that receives key.pem, cert-chain.pem and root-cert.pem on each rotation. */
  OUTPUT_KEY_CERT_TO_DIRECTORY?: string;
  /** `true`: keys written to OUTPUT_KEY_CERT_TO_DIRECTORY are PKCS#8. */
  PKCS8_KEY?: string;
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
    for (const name of ["MESH_CONFIG", "MESH_AUTO_MTLS_ENABLED", "OUTPUT_KEY_CERT_TO_DIRECTORY", "PKCS8_KEY"] as const) {
      if (env[name]) throw new Error(`${name} needs --caAddress or CA_ADDR (the security path runs with workload certificates)`);
    }
    return undefined;
  }
  if (!/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):[0-9]{1,5}$/.test(caAddress)) throw new Error(`--caAddress: expected HOST:PORT, got ${JSON.stringify(caAddress)}`);
  let mesh: MeshSettings = DEFAULT_MESH_SETTINGS;
  if (opts.meshConfigFile !== undefined) mesh = loadMeshConfig(opts.meshConfigFile as string);
  else if (env.MESH_CONFIG) mesh = parseMeshConfig(env.MESH_CONFIG, "MESH_CONFIG");
  const autoMtls = env.MESH_AUTO_MTLS_ENABLED;
  if (autoMtls) {
    if (autoMtls !== "true" && autoMtls !== "false") throw new Error(`MESH_AUTO_MTLS_ENABLED: expected true or false, got ${JSON.stringify(autoMtls)}`);
    mesh = Object.freeze({ ...mesh, enableAutoMtls: autoMtls === "true" });
  }
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
 * OUTPUT_KEY_CERT_TO_DIRECTORY (spec 2): the workload key, certificate chain
 * and roots as files (`key.pem`, `cert-chain.pem`, `root-cert.pem`, the key
 * mode 0600), rewritten on each rotation. Keys are PKCS#1 (RSA) or SEC1 (EC)
 * unless PKCS8_KEY is true. A failed write is logged; serving goes on.
 */
export function writeKeyAndCertificates(dir: string, c: WorkloadCertificate, pkcs8: boolean, log: ScopedLogger): void {
  try {
    mkdirSync(dir, { recursive: true });
    const key = createPrivateKey(c.keyPem);
    const keyPem = pkcs8 ? c.keyPem : (key.export({ format: "pem", type: key.asymmetricKeyType === "ec" ? "sec1" : "pkcs1" }) as string);
    writeFileSync(join(dir, "key.pem"), keyPem, { mode: 0o600 });
    writeFileSync(join(dir, "cert-chain.pem"), c.certChainPem);
    writeFileSync(join(dir, "root-cert.pem"), c.rootPem);
  } catch (e) {
    log.error(`OUTPUT_KEY_CERT_TO_DIRECTORY ${dir}: ${(e as Error).message}`);
  }
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
        ...(typeof opts.connectTimeout === "number" ? { timeoutMs: opts.connectTimeout } : {}),
        onError: (e, retryInMs) => logger.scope("anchorclient").warn(`workload certificate renewal failed: ${e.message}; retrying in ${retryInMs} ms`),
        ...(env.OUTPUT_KEY_CERT_TO_DIRECTORY
          ? { onRotated: (c: WorkloadCertificate) => writeKeyAndCertificates(env.OUTPUT_KEY_CERT_TO_DIRECTORY!, c, env.PKCS8_KEY === "true", log) }
          : {}),
      });
      security = { ...settings, tls: workloadTls, jwks: new JwksCache() };
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
  const drainSeconds = Number(env.TERMINATION_DRAIN_DURATION_SECONDS);
  const drainMs = Number.isFinite(drainSeconds) && drainSeconds >= 0 && env.TERMINATION_DRAIN_DURATION_SECONDS !== undefined ? drainSeconds * 1000 : (opts.drainDuration as number);
  const stopped = handleSignals(
    {
      stop: async (signal) => {
        log.info(`${signal}: draining for up to ${drainMs} ms`);
        const hardLimit = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("drain did not finish within --parentShutdownDuration")), Math.max(drainMs, opts.parentShutdownDuration as number) + 5000).unref());
        await Promise.race([sidecar.drain(drainMs), hardLimit]);
        transport.close();
        workloadTls?.stop();
        log.info("drained; exiting");
      },
      // The configuration directory is watched anyway; SIGHUP rereads it at once.
      reload: () => sidecar.reloadConfiguration(),
    },
    log,
  );
  // After the handlers: a signal sent as soon as the listening line is read must find them.
  announceListening(LISTENING_LINE_PREFIX, addresses, logger);
  return await stopped;
}
