import { createPrivateKey } from "node:crypto";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_DOMAIN, splitProxyDnsDomain } from "../mesh/hosts.ts";
import { buildNodeId } from "../mesh/node_id.ts";
import type { CertificateTransport, WorkloadCertificate } from "../anchor/client.ts";
import type { ScopedLogger } from "../telemetry/logger.ts";
import { announceListening, handleSignals } from "../daemon/lifecycle.ts";
import { EXIT_BAD_CONFIG, EXIT_FAILURE } from "../daemon/exit_codes.ts";
import { ListenerBindError } from "../daemon/bind.ts";
import { formatGoDuration } from "../daemon/duration.ts";
import type { Logger } from "../telemetry/logger.ts";
import { FilterModule, RELEASE_WASM } from "../wasm/filter_module.ts";
import { parseClusters, parseServiceEndpoints } from "../hub/clusters.ts";
import { DEFAULT_JWKS_COOLDOWN_MS, JwksCache } from "../security/jwt/jwks.ts";
import { DEFAULT_LISTENER_LIMITS, type ListenerLimits } from "./listener_limits.ts";
import { spiffeId } from "../security/workload.ts";
import { DEFAULT_MESH_SETTINGS, type MeshSettings, loadMeshConfig, parseMeshConfig } from "./mesh_config.ts";
import * as grpc from "@grpc/grpc-js";
import { type ControlPlaneAuth, type ControlPlaneAuthPolicy, WorkloadTls, type WorkloadTlsOptions, uriSans } from "./workload_tls.ts";
import type { SidecarSecurityOptions } from "./sidecar.ts";
import { HubTransport } from "../hub/transport.ts";
import type { GrpcCall } from "../wasm/abi_types.ts";
import { LISTENING_LINE_PREFIX, Sidecar, type SidecarAddresses } from "./sidecar.ts";
import type { AgentOptions } from "./agent_options.ts";
import { AgentMetrics } from "./agent_metrics.ts";
import { DEFAULT_TOKEN_MANAGER_PLUGIN, startStsServer } from "./sts_server.ts";
export { SIDECAR_LOG_SCOPES } from "./defaults.ts";
import { parseStatsdAddress, STATSD_FLUSH_INTERVAL_MS, StatsdSink } from "../telemetry/statsd_sink.ts";
import { OutlierEventLog } from "./outlier_event_log.ts";
import { ACCESS_LOG_FLUSH_INTERVAL_MS, AccessLogServiceClient } from "./access_log_service.ts";
import { MetricsServiceClient } from "./metrics_service.ts";
import { parseRemoteService } from "./remote_service.ts";
import { SafetyNet } from "../daemon/safety_net.ts";
import { listenerAddresses } from "./listener_addresses.ts";
import { appProbeRoute } from "./app_probers.ts";
import { startStatusPorts } from "./status_ports.ts";
import { originalDestination, originalDestinationUnavailable } from "../capture/original_destination.ts";

/** The parsed flags as /server_info's `command_line_options` (JSON values only). */
function commandLineOptions(opts: AgentOptions): Record<string, unknown> {
  return Object.fromEntries(Object.entries(opts).filter(([, v]) => ["string", "number", "boolean"].includes(typeof v) || Array.isArray(v)));
}

/** Environment variables of the seed that apply to the sidecar. */
export interface AgentEnvironment {
  POD_NAME?: string;
  POD_NAMESPACE?: string;
  INSTANCE_IP?: string;
  /** Workload labels `k=v,k=v` when --labels is not given. */
  POD_LABELS?: string;
  /** `true`/`false`: overrides the mesh config's enableFallthroughRoute. */
  DISCO_ENABLE_FALLTHROUGH_ROUTE?: string;
  /** `third-party-jwt` (default) or `first-party-jwt`: picks the default --tokenPath. */
  JWT_POLICY?: string;
  /** Mesh settings YAML when --meshConfigFile is not given. */
  MESH_CONFIG?: string;
  /** `true`/`false`: overrides the mesh settings' enableAutoMtls. */
  MESH_AUTO_MTLS_ENABLED?: string;
  /** Directory that receives key.pem, cert-chain.pem and root-cert.pem on each rotation. */
  OUTPUT_KEY_CERT_TO_DIRECTORY?: string;
  /** `true`: keys written to OUTPUT_KEY_CERT_TO_DIRECTORY are PKCS#8. */
  PKCS8_KEY?: string;
}

/** Upstream's token paths per JWT_POLICY (renamed): a projected token, or the legacy service-account token. */
export const DEFAULT_TOKEN_PATHS = {
  "third-party-jwt": "./var/run/secrets/tokens/mesh-token",
  "first-party-jwt": "/var/run/secrets/orch.io/serviceaccount/token",
} as const;
/** Spec 2, "Authentication": the root certificate path of disco-agent. */
export const DEFAULT_CA_ROOT_CERT = "/etc/certs/root-cert.pem";

/**
 * `--controlPlaneAuthPolicy`, `--tokenPath`, `--caRootCert` (docs/sidecar.md
 * "Control-plane authentication"); throws naming the flag or variable.
 */
export function controlPlaneAuth(opts: Pick<AgentOptions, "controlPlaneAuthPolicy" | "tokenPath" | "caRootCert">, env: AgentEnvironment): ControlPlaneAuth {
  const policy = (opts.controlPlaneAuthPolicy ?? "NONE") as ControlPlaneAuthPolicy;
  if (policy !== "NONE" && policy !== "MUTUAL_TLS") throw new Error(`--controlPlaneAuthPolicy: expected NONE or MUTUAL_TLS, got ${JSON.stringify(policy)}`);
  const jwtPolicy = env.JWT_POLICY || "third-party-jwt";
  if (jwtPolicy !== "third-party-jwt" && jwtPolicy !== "first-party-jwt")
    throw new Error(`JWT_POLICY: expected third-party-jwt or first-party-jwt, got ${JSON.stringify(jwtPolicy)}`);
  return {
    policy,
    tokenPath: opts.tokenPath || DEFAULT_TOKEN_PATHS[jwtPolicy],
    caRootCertFile: opts.caRootCert || DEFAULT_CA_ROOT_CERT,
  };
}

/** `--hubIdentity` is a suffix of the hub's SPIFFE ID on a path boundary (`mesh-hub-service-account`, `sa/hub`, `/ns/mesh-system/sa/hub`) or the whole ID. */
export function hubIdentityMatches(uri: string, suffix: string): boolean {
  return uri === suffix || uri.endsWith(`/${suffix.replace(/^\/+/, "")}`);
}

/**
 * Credentials of a control-plane channel under MUTUAL_TLS (the hub, disco-discovery):
 * the current workload certificate, the mesh roots as the only trust
 * anchors, and the peer's URI SAN checked instead of its host name: it must
 * end with `identitySuffix` (`--hubIdentity`, `--discoIdentity`) when given,
 * else be any identity of the trust domain. `peer` names it in errors.
 */
export function controlPlaneChannelCredentials(tls: WorkloadTls, identitySuffix: string, peer: "hub" | "discovery"): grpc.ChannelCredentials {
  const c = tls.current;
  const td = tls.options.trustDomain;
  return grpc.credentials.createSsl(Buffer.from(c.rootPem), Buffer.from(c.keyPem), Buffer.from(c.certChainPem), {
    checkServerIdentity: (_host, cert) => {
      const uris = uriSans(cert.subjectaltname);
      const ok = uris.some((u) => u.startsWith(`spiffe://${td}/`) && (!identitySuffix || hubIdentityMatches(u, identitySuffix)));
      return ok
        ? undefined
        : new Error(
            `${peer} identity: the ${peer} presented ${uris.join(" ") || "no URI SAN"}, expected ${identitySuffix ? `an identity of ${td} ending with ${identitySuffix}` : `an identity of trust domain ${td}`}`,
          );
    },
  });
}

/** The hub channels' credentials under MUTUAL_TLS (`--hubIdentity`). */
export function hubChannelCredentials(tls: WorkloadTls, hubIdentity: string): grpc.ChannelCredentials {
  return controlPlaneChannelCredentials(tls, hubIdentity, "hub");
}

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
    if (anySecurityFlag) throw new Error("--meshConfigFile, --gateway and --endpoint need --caAddress (the security path runs with workload certificates)");
    for (const name of ["MESH_CONFIG", "MESH_AUTO_MTLS_ENABLED", "OUTPUT_KEY_CERT_TO_DIRECTORY", "PKCS8_KEY"] as const) {
      if (env[name]) throw new Error(`${name} needs --caAddress or CA_ADDR (the security path runs with workload certificates)`);
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

/** A sidecar started by `startProxy`, in this process. */
export interface RunningProxy {
  addresses: SidecarAddresses;
  /** Stops accepting, drains requests in flight (up to `drainMs`), closes the hub transport and the certificate rotation. */
  stop(drainMs: number): Promise<void>;
  /** What the admin port's `/quitquitquit` does (by default nothing). */
  onQuit(handler: () => void): void;
  /** Rereads the configuration directory now (SIGHUP); false when it did not apply. */
  reload(): boolean;
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
export async function runProxyCommand(opts: AgentOptions, logger: Logger, env: AgentEnvironment): Promise<number> {
  const log = logger.scope("default");
  // This process serves requests: an error escaping one request's work ends that request, not the agent.
  const safetyNet = new SafetyNet(log);
  safetyNet.install();
  const proxy = await startProxy(opts, logger, env, { safetyNet });
  if ("exitCode" in proxy) return proxy.exitCode;
  // TERMINATION_DRAIN_DURATION_SECONDS (decoded by the command: a bad value exits 2) overrides --drainDuration.
  const drainMs = typeof opts.terminationDrainMs === "number" ? opts.terminationDrainMs : opts.drainDuration;
  // --parentShutdownDuration bounds the whole shutdown: the drain is cut there, and so is whatever closing is left.
  const limitMs = opts.parentShutdownDuration;
  const stopped = handleSignals(
    {
      stop: async (signal) => {
        const windowMs = Math.min(drainMs, limitMs);
        log.info(
          `${signal}: draining for up to ${formatGoDuration(windowMs)}${windowMs < drainMs ? ` (--parentShutdownDuration ${formatGoDuration(limitMs)} cuts the drain of ${formatGoDuration(drainMs)})` : ""}`,
        );
        let timer: NodeJS.Timeout | undefined;
        const limit = new Promise<"limit">((resolve) => (timer = setTimeout(() => resolve("limit"), limitMs)));
        const outcome = await Promise.race([proxy.stop(windowMs).then(() => "drained" as const), limit]);
        clearTimeout(timer);
        if (outcome === "limit") log.warn(`--parentShutdownDuration ${formatGoDuration(limitMs)} reached before the shutdown finished: exiting now`);
        else log.info("drained; exiting");
      },
      // The configuration directory is watched anyway; SIGHUP rereads it at once.
      reload: () => proxy.reload(),
    },
    log,
  );
  // /quitquitquit drains and exits as SIGTERM does.
  proxy.onQuit(() => process.kill(process.pid, "SIGTERM"));
  // After the handlers: a signal sent as soon as the listening line is read must find them.
  announceListening(LISTENING_LINE_PREFIX, proxy.addresses, logger);
  return await stopped;
}

/**
 * Starts the sidecar `disco-agent proxy` would run, from the same options
 * (commander's values), in this process; `meshctl x simulate` runs its
 * sidecars this way. Problems are logged and answered with the exit code
 * the command would have. `shared.checks`: the filter module a caller
 * running many sidecars already loaded (it only checks templates and
 * patterns), instead of one more instance per sidecar. `shared.caTransport`:
 * how certificate requests reach a CA running in the same process (default:
 * gRPC to `--caAddress`). `shared.requestCertificate`: how the workload
 * certificate is obtained (default: a key and CSR of this sidecar's own).
 */
export async function startProxy(
  opts: AgentOptions,
  logger: Logger,
  env: AgentEnvironment,
  shared: { checks?: FilterModule; caTransport?: CertificateTransport; requestCertificate?: WorkloadTlsOptions["request"]; safetyNet?: SafetyNet } = {},
): Promise<RunningProxy | { exitCode: number }> {
  const log = logger.scope("default");
  const configDir = opts.configDir;
  const discoveryAddress = opts.discoveryAddress || undefined;
  if (discoveryAddress && configDir) {
    log.error("--discoveryAddress and --configDir: give one (the control plane, or a directory for standalone use)");
    return { exitCode: EXIT_BAD_CONFIG };
  }
  if (!discoveryAddress && (!configDir || !existsSync(configDir))) {
    log.error(`--configDir: expected an existing directory (or --discoveryAddress), got ${JSON.stringify(configDir ?? "")}`);
    return { exitCode: EXIT_BAD_CONFIG };
  }
  let clusters;
  try {
    clusters = parseClusters(opts.cluster);
  } catch (e) {
    log.error((e as Error).message);
    return { exitCode: EXIT_BAD_CONFIG };
  }
  const namespace = env.POD_NAMESPACE ?? "default";
  // Upstream's proxy DNS domain `<namespace>.svc.<mesh domain>`: the mesh's DNS domain is its tail.
  const dnsDomain = opts.domain || `${namespace}.svc.${DEFAULT_DOMAIN}`;
  const meshDomain = splitProxyDnsDomain(dnsDomain)?.domain;
  if (meshDomain === undefined) {
    log.error(
      `--domain: expected the proxy's DNS domain <namespace>.svc.<mesh domain> (e.g. ${namespace}.svc.cluster.local), got ${JSON.stringify(opts.domain)}`,
    );
    return { exitCode: EXIT_BAD_CONFIG };
  }
  let sidecar: Sidecar | undefined;
  let jwks: JwksCache | undefined;
  const metrics = new AgentMetrics({
    rejectedConfigs: () => sidecar?.rejectedConfigs ?? 0,
    virtualServices: () => sidecar?.virtualServices ?? 0,
    jwksFetches: () => jwks?.fetchStats() ?? { successes: 0, failures: 0 },
  });
  let security: SidecarSecurityOptions | undefined;
  let workloadTls: WorkloadTls | undefined;
  let auth: ControlPlaneAuth;
  let statsdAddress: { host: string; port: number } | undefined;
  let transport: HubTransport | undefined;
  let outlierLog: OutlierEventLog | undefined;
  let accessLogService: { address: string } | undefined;
  let metricsService: { address: string } | undefined;
  try {
    if (opts.proxyAccessLogService) accessLogService = parseRemoteService("--proxyAccessLogService", opts.proxyAccessLogService);
    if (opts.proxyMetricsService) metricsService = parseRemoteService("--proxyMetricsService", opts.proxyMetricsService);
    auth = controlPlaneAuth(opts, env);
    if (opts.metricsdUdpAddress) statsdAddress = parseStatsdAddress(opts.metricsdUdpAddress);
    if (opts.outlierLogPath) {
      try {
        outlierLog = new OutlierEventLog(opts.outlierLogPath, (e) => log.warn(`--outlierLogPath: writing an event failed: ${e.message}`));
      } catch (e) {
        throw new Error(`--outlierLogPath ${JSON.stringify(opts.outlierLogPath)}: cannot open the file for appending: ${(e as Error).message}`);
      }
    }
    const settings = securitySettings(opts, env, namespace);
    if (auth.policy === "MUTUAL_TLS" && !settings)
      throw new Error("--controlPlaneAuthPolicy MUTUAL_TLS needs --caAddress (the hub and mesh_ca are reached with the workload certificate)");
    if (settings) {
      const identity = spiffeId({ namespace, serviceAccount: settings.serviceAccount }, settings.trustDomain);
      workloadTls = new WorkloadTls({
        caAddress: settings.caAddress,
        identity,
        trustDomain: settings.trustDomain,
        ttlMs: settings.ttlMs,
        keyAlgorithm: settings.keyAlgorithm,
        auth,
        transport: shared.caTransport,
        request: shared.requestCertificate,
        ...(typeof opts.connectTimeout === "number" ? { timeoutMs: opts.connectTimeout } : {}),
        ...(typeof opts.secretGraceDuration === "number" ? { graceMs: opts.secretGraceDuration } : {}),
        ...(typeof opts.initialBackoffMs === "number" && opts.initialBackoffMs > 0 ? { initialBackoffMs: opts.initialBackoffMs } : {}),
        onJitter: (ms) => logger.scope("anchorclient").info(`waiting ${ms} ms before the certificate request (INITIAL_BACKOFF_MSEC)`),
        onRotated: (c: WorkloadCertificate) => {
          logger
            .scope("cache")
            .debug(`workload certificate cached: serial ${c.serialNumber}, expires ${c.expiresAt.toISOString()}, renewal at ${c.rotateAt.toISOString()}`);
          transport?.renewCredentials();
          metrics.certificatePushed();
          if (env.OUTPUT_KEY_CERT_TO_DIRECTORY) writeKeyAndCertificates(env.OUTPUT_KEY_CERT_TO_DIRECTORY, c, env.PKCS8_KEY === "true", log);
        },
        onError: (e, retryInMs) => {
          metrics.secretUpdateFailed();
          metrics.outgoingRetry("csr");
          logger.scope("anchorclient").warn(`workload certificate renewal failed: ${e.message}; retrying in ${retryInMs} ms`);
        },
        onRequest: (ok, latencyMs, by) => {
          metrics.outgoingRequest("csr", ok, latencyMs);
          if (by === "token")
            logger.scope("token").debug(`service-account token ${auth.tokenPath} presented to mesh_ca (JWT_POLICY ${env.JWT_POLICY || "third-party-jwt"})`);
          logger
            .scope("anchorclient")
            .debug(
              `CSR for ${identity} to ${settings.caAddress} (authenticated by ${by}): ${ok ? "certificate issued" : "failed"} in ${Math.round(latencyMs)} ms`,
            );
        },
      });
      jwks = new JwksCache({ cooldownMs: opts.jwksRefetchCooldown ?? DEFAULT_JWKS_COOLDOWN_MS });
      security = { ...settings, tls: workloadTls, jwks };
    }
  } catch (e) {
    log.error((e as Error).message);
    return { exitCode: EXIT_BAD_CONFIG };
  }
  if (workloadTls) {
    try {
      await workloadTls.start();
      log.info(
        `workload certificate for ${workloadTls.options.identity} from ${workloadTls.options.caAddress} (${auth.policy === "MUTUAL_TLS" ? "TLS" : "plain text"}, token ${auth.tokenPath}): expires ${workloadTls.current.expiresAt.toISOString()}, renewal at ${workloadTls.current.rotateAt.toISOString()}`,
      );
    } catch (e) {
      const hint =
        auth.policy === "NONE" && (e as { code?: number }).code === grpc.status.UNAVAILABLE
          ? " (with --controlPlaneAuthPolicy NONE the CA is dialled in plain text: mesh_ca serves TLS unless --grpc-plaintext; use MUTUAL_TLS)"
          : "";
      log.error(`--caAddress ${workloadTls.options.caAddress}: no workload certificate: ${(e as Error).message}${hint}`);
      workloadTls.stop();
      return { exitCode: EXIT_FAILURE };
    }
  }
  const identity = {
    id: opts.id || `${env.POD_NAME ?? "sidecar"}.${namespace}`,
    ip: opts.ip || (env.INSTANCE_IP ?? ""),
    domain: dnsDomain,
    serviceCluster: opts.serviceCluster,
  };
  const hubLog = logger.scope("hub");
  const transportStats = new Map<string, number>([
    ["hub_transport.calls", 0],
    ["hub_transport.failed_attempts", 0],
    ["hub_transport.retries", 0],
    ["hub_transport.failed_calls", 0],
  ]);
  const bump = (name: string) => transportStats.set(name, (transportStats.get(name) ?? 0) + 1);
  if (auth.policy === "NONE") {
    log.warn(
      `control plane traffic is plain text (--controlPlaneAuthPolicy NONE)${workloadTls ? ": mesh_ca gets the token on every request" : ""}; hub calls are not authenticated. For local development only; use MUTUAL_TLS otherwise`,
    );
  } else {
    log.info(
      `control plane traffic is mutual TLS with ${workloadTls!.options.identity}${opts.hubIdentity ? `; the hub must prove an identity ending with ${String(opts.hubIdentity)}` : ""}${discoveryAddress && opts.discoIdentity ? `; disco-discovery must prove an identity ending with ${String(opts.discoIdentity)}` : ""}`,
    );
  }
  const mtls = auth.policy === "MUTUAL_TLS" ? workloadTls : undefined;
  transport = new HubTransport({
    clusters,
    credentials: mtls ? () => hubChannelCredentials(mtls, opts.hubIdentity ?? "") : undefined,
    onAttemptFailed: (a) => {
      bump("hub_transport.failed_attempts");
      if (a.retryInMs !== undefined) bump("hub_transport.retries");
      hubLog.warn(
        `${a.cluster} ${a.method} attempt ${a.attempt} failed: ${a.status.code} ${a.status.message}${a.retryInMs !== undefined ? `; retrying in ${a.retryInMs} ms` : ""}`,
      );
    },
  });
  const hub = {
    async call(call: GrpcCall) {
      bump("hub_transport.calls");
      const result = await transport!.call(call);
      if (!result.ok) bump("hub_transport.failed_calls");
      return result;
    },
  };
  const limits: ListenerLimits = Object.freeze({
    headerReadTimeoutMs: opts.headerReadTimeout ?? DEFAULT_LISTENER_LIMITS.headerReadTimeoutMs,
    idleTimeoutMs: opts.idleTimeout ?? DEFAULT_LISTENER_LIMITS.idleTimeoutMs,
    maxConnections: opts.maxConnections ?? DEFAULT_LISTENER_LIMITS.maxConnections,
    maxConcurrentRequests: opts.maxConcurrentRequests ?? DEFAULT_LISTENER_LIMITS.maxConcurrentRequests,
  });
  const wasm = opts.wasm ?? RELEASE_WASM;
  const checks = shared.checks ?? FilterModule.load(wasm);
  let quit: (() => void) | undefined;
  const proxyId = opts.id || `${env.POD_NAME ?? "sidecar"}.${env.POD_NAMESPACE ?? "default"}`;
  // Upstream's node id: sidecar~<ip>~<pod>.<namespace>~<the proxy's DNS domain, <namespace>.svc.<mesh domain>>.
  const node = {
    id: buildNodeId({ type: "sidecar", ip: opts.ip || (env.INSTANCE_IP ?? "127.0.0.1"), proxyId, dnsDomain }),
    cluster: opts.serviceCluster,
    ...(opts.nodeMetadata ? { metadata: { ...opts.nodeMetadata } } : {}),
  };
  const sinkError = (flag: string) => {
    let lastWarnedAt = -Infinity;
    // A service that stays down fails every stream: one warning a minute, the rest at debug.
    return (e: Error) => {
      const now = Date.now();
      if (now - lastWarnedAt >= 60_000) {
        lastWarnedAt = now;
        log.warn(`${flag}: ${e.message}; retrying with the next batch`);
      } else log.debug(`${flag}: ${e.message}`);
    };
  };
  const als = accessLogService
    ? new AccessLogServiceClient({ address: accessLogService.address, node, onError: sinkError("--proxyAccessLogService") })
    : undefined;
  if (als) {
    transportStats.set("access_logs.grpc_access_log.logs_written", 0);
    transportStats.set("access_logs.grpc_access_log.logs_dropped", 0);
  }
  const bound = listenerAddresses(opts.bindAddress, opts.adminBindAddress);
  for (const w of bound.warnings) log.warn(w);
  // Traffic capture (disco-agent mesh-iptables): redirected connections are routed by their original destination.
  const captureUnavailable = originalDestinationUnavailable();
  if (captureUnavailable) log.info(`${captureUnavailable}: every connection is handled as a direct one (no traffic capture)`);
  sidecar = new Sidecar({
    wasm,
    configDir: configDir ?? "",
    ...(discoveryAddress
      ? {
          discovery: {
            address: discoveryAddress,
            node,
            // MUTUAL_TLS: disco-discovery's --secureGrpcAddr, its identity checked (--discoIdentity).
            ...(mtls ? { credentials: () => controlPlaneChannelCredentials(mtls, opts.discoIdentity ?? "", "discovery") } : {}),
          },
        }
      : {}),
    bindAddress: bound.pod,
    outboundBindAddress: bound.outbound,
    adminBindAddress: bound.admin,
    inboundPort: opts.inboundPort,
    outboundPort: opts.outboundPort,
    adminPort: opts.proxyAdminPort,
    statusPort: opts.statusPort,
    ...(opts.appProbers?.size ? { appProbes: appProbeRoute(opts.appProbers, env.INSTANCE_IP || opts.appHost) } : {}),
    tcpPort: opts.tcpPort === undefined ? -1 : opts.tcpPort,
    tcpAppPort: opts.tcpAppPort ?? opts.appPort,
    appHost: opts.appHost,
    appPort: opts.appPort,
    clusters: new Map(
      [...clusters.values()].flatMap((c) => {
        const hosts = c.endpoints.flatMap((e) => (e.address.kind === "tcp" ? [{ host: e.address.host, port: e.address.port }] : []));
        return hosts.length > 0 ? [[c.name, { ...hosts[0], hosts }] as const] : [];
      }),
    ),
    inboundService: opts.inboundService,
    hub,
    extraStats: () => {
      if (als) {
        transportStats.set("access_logs.grpc_access_log.logs_written", als.stats.written);
        transportStats.set("access_logs.grpc_access_log.logs_dropped", als.stats.dropped);
      }
      return transportStats;
    },
    metricsRegistry: metrics.registry,
    commandLineOptions: commandLineOptions(opts),
    onQuit: () => quit?.(),
    checks: { template: (t) => checks.checkTemplate(t), regex: (p) => checks.checkRegex(p) },
    meshDomain,
    logger,
    identity: security
      ? ({
          ...identity,
          spiffeId: workloadTls!.options.identity,
          serviceAccount: security.serviceAccount,
          ...(security.labels ? { labels: security.labels } : {}),
        } as typeof identity)
      : identity,
    security,
    limits,
    ...(outlierLog ? { onOutlierEvent: (e) => outlierLog.write(e) } : {}),
    ...(als ? { onAccess: (r) => als.log(r) } : {}),
    ...(shared.safetyNet ? { safetyNet: shared.safetyNet } : {}),
    ...(captureUnavailable ? {} : { originalDestination }),
  });
  let addresses;
  try {
    addresses = await sidecar.start();
  } catch (e) {
    log.error((e as Error).message);
    await als?.close();
    transport.close();
    workloadTls?.stop();
    outlierLog?.close();
    // A listener that cannot be opened is a failed start (1); an unusable first configuration, a bad one (2).
    return { exitCode: e instanceof ListenerBindError ? EXIT_FAILURE : EXIT_BAD_CONFIG };
  }
  let statusPorts: Awaited<ReturnType<typeof startStatusPorts>> | undefined;
  if (opts.statusPorts?.length && addresses.status > 0) {
    try {
      statusPorts = await startStatusPorts(opts.statusPorts, bound.pod, addresses.status);
    } catch (e) {
      log.error((e as Error).message);
      await sidecar.drain(0);
      await als?.close();
      transport.close();
      workloadTls?.stop();
      outlierLog?.close();
      return { exitCode: EXIT_FAILURE };
    }
  }
  const metricsSink = metricsService
    ? new MetricsServiceClient({ address: metricsService.address, node, snapshot: () => sidecar!.statsSnapshot(), onError: sinkError("--proxyMetricsService") })
    : undefined;
  const statsd = statsdAddress
    ? new StatsdSink({
        ...statsdAddress,
        snapshot: () => sidecar!.statsSnapshot(),
        onError: (e) => logger.scope("default").warn(`--metricsdUdpAddress: sending stats failed: ${e.message}`),
      })
    : undefined;
  let sts: Awaited<ReturnType<typeof startStsServer>> | undefined;
  if (typeof opts.stsPort === "number" && opts.stsPort > 0) {
    try {
      sts = await startStsServer({ port: opts.stsPort, plugin: opts.tokenManagerPlugin ?? DEFAULT_TOKEN_MANAGER_PLUGIN, log: logger.scope("stsserver") });
    } catch (e) {
      log.error(`--stsPort ${opts.stsPort}: ${(e as Error).message}`);
      await sidecar.drain(0);
      await statsd?.close();
      await Promise.all([als?.close(), metricsSink?.close()]);
      transport.close();
      workloadTls?.stop();
      outlierLog?.close();
      return { exitCode: EXIT_FAILURE };
    }
  }
  if (als)
    log.info(
      `access log entries sent to the access log service at ${accessLogService!.address} (envoy.service.accesslog.v3 StreamAccessLogs) every ${ACCESS_LOG_FLUSH_INTERVAL_MS / 1000} s`,
    );
  if (metricsSink)
    log.info(
      `stats sent to the metrics service at ${metricsService!.address} (envoy.service.metrics.v3 StreamMetrics) every ${STATSD_FLUSH_INTERVAL_MS / 1000} s`,
    );
  if (statsd) log.info(`stats sent to the metrics daemon at ${opts.metricsdUdpAddress} (statsd over UDP) every ${STATSD_FLUSH_INTERVAL_MS / 1000} s`);
  return {
    addresses: sts ? { ...addresses, sts: sts.port } : addresses,
    onQuit(handler) {
      quit = handler;
    },
    reload: () => sidecar!.reloadConfiguration(),
    async stop(drainMs) {
      await sts?.close();
      await statusPorts?.close();
      await sidecar!.drain(drainMs);
      await statsd?.close();
      await Promise.all([als?.close(), metricsSink?.close()]);
      transport.close();
      workloadTls?.stop();
      outlierLog?.close();
    },
  };
}
