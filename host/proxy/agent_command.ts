import { existsSync } from "node:fs";
import { DEFAULT_DOMAIN, splitProxyDnsDomain } from "../mesh/hosts.ts";
import { buildNodeId } from "../mesh/node_id.ts";
import type { CertificateTransport } from "../anchor/client.ts";
import { announceListening, handleSignals } from "../daemon/lifecycle.ts";
import { EXIT_BAD_CONFIG, EXIT_FAILURE } from "../daemon/exit_codes.ts";
import { ListenerBindError } from "../daemon/bind.ts";
import { formatGoDuration } from "../daemon/duration.ts";
import type { Logger } from "../telemetry/logger.ts";
import { FilterModule, RELEASE_WASM } from "../wasm/filter_module.ts";
import { parseClusters } from "../hub/clusters.ts";
import { DEFAULT_JWKS_COOLDOWN_MS, JwksCache } from "../security/jwt/jwks.ts";
import { DEFAULT_LISTENER_LIMITS, type ListenerLimits } from "./listener_limits.ts";
import { spiffeId } from "../security/workload.ts";
import { type ControlPlaneAuth, WorkloadTls, type WorkloadTlsOptions } from "./workload_tls.ts";
import type { SidecarSecurityOptions } from "./sidecar.ts";
import { HubTransport } from "../hub/transport.ts";
import { LISTENING_LINE_PREFIX, Sidecar, type SidecarAddresses } from "./sidecar.ts";
import type { AgentEnvironment, AgentOptions } from "./agent_options.ts";
import { AgentMetrics } from "./agent_metrics.ts";
import { DEFAULT_TOKEN_MANAGER_PLUGIN, startStsServer } from "./sts_server.ts";
export { SIDECAR_LOG_SCOPES } from "./defaults.ts";
import { parseStatsdAddress, STATSD_FLUSH_INTERVAL_MS, StatsdSink } from "../telemetry/statsd_sink.ts";
import { OutlierEventLog } from "./outlier_event_log.ts";
import { ACCESS_LOG_FLUSH_INTERVAL_MS, AccessLogServiceClient } from "./access_log_service.ts";
import { MetricsServiceClient } from "./metrics_service.ts";
import { parseRemoteService } from "./remote_service.ts";
import { SafetyNet } from "../daemon/safety_net.ts";
import { installPlainAsyncResourceBind } from "../daemon/async_resource_bind.ts";
import { listenerAddresses } from "./listener_addresses.ts";
import { hubChannel } from "./hub_channel.ts";
import {
  type CertificateSource,
  certificateSource,
  controlPlaneAuth,
  controlPlaneChannelCredentials,
  controlPlaneIdentityCheck,
  hubTlsOptions,
} from "./control_plane_auth.ts";
import { securitySettings } from "./security_settings.ts";
import { firstCertificate, workloadCertificate } from "./certificate_source.ts";
import { appProbeRoute } from "./app_probers.ts";
import { startStatusPorts } from "./status_ports.ts";
import { originalDestination, originalDestinationUnavailable } from "../capture/original_destination.ts";

/** The parsed flags as /server_info's `command_line_options` (JSON values only). */
function commandLineOptions(opts: AgentOptions): Record<string, unknown> {
  return Object.fromEntries(Object.entries(opts).filter(([, v]) => ["string", "number", "boolean"].includes(typeof v) || Array.isArray(v)));
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
 * `disco-agent proxy`: starts the sidecar, prints the listening line, and on
 * SIGTERM/SIGINT stops accepting, drains requests in flight and exits 0.
 */
export async function runProxyCommand(opts: AgentOptions, logger: Logger, env: AgentEnvironment): Promise<number> {
  const log = logger.scope("default");
  // This process serves requests: an error escaping one request's work ends that request, not the agent.
  const safetyNet = new SafetyNet(log);
  safetyNet.install();
  // Hub calls bind an AsyncResource per request: without this, each one's objects reach V8's old generation.
  installPlainAsyncResourceBind();
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
  let source: CertificateSource | undefined;
  let statsdAddress: { host: string; port: number } | undefined;
  let transport: HubTransport | undefined;
  let outlierLog: OutlierEventLog | undefined;
  let accessLogService: { address: string } | undefined;
  let metricsService: { address: string } | undefined;
  try {
    if (opts.proxyAccessLogService) accessLogService = parseRemoteService("--proxyAccessLogService", opts.proxyAccessLogService);
    if (opts.proxyMetricsService) metricsService = parseRemoteService("--proxyMetricsService", opts.proxyMetricsService);
    if (opts.metricsdUdpAddress) statsdAddress = parseStatsdAddress(opts.metricsdUdpAddress);
    if (opts.outlierLogPath) {
      try {
        outlierLog = new OutlierEventLog(opts.outlierLogPath, (e) => log.warn(`--outlierLogPath: writing an event failed: ${e.message}`));
      } catch (e) {
        throw new Error(`--outlierLogPath ${JSON.stringify(opts.outlierLogPath)}: cannot open the file for appending: ${(e as Error).message}`);
      }
    }
    source = certificateSource(opts);
    auth = controlPlaneAuth(opts, env, source);
    const settings = securitySettings({ ...opts, caAddress: source?.address }, env, namespace);
    if (auth.policy === "MUTUAL_TLS" && !settings)
      throw new Error(
        "--controlPlaneAuthPolicy MUTUAL_TLS needs --caAddress (mesh_ca) or --discoveryAddress (the control plane as the CA): the hub and the CA are reached with the workload certificate",
      );
    if (settings && source) {
      // disco-discovery as the CA proves its SPIFFE identity (--discoIdentity), not the name mesh-ca.
      if (source.controlPlane) auth = { ...auth, caServerIdentity: controlPlaneIdentityCheck(settings.trustDomain, opts.discoIdentity ?? "", "discovery") };
      workloadTls = workloadCertificate(
        opts,
        { ...settings, identity: spiffeId({ namespace, serviceAccount: settings.serviceAccount }, settings.trustDomain) },
        source,
        auth,
        env,
        logger,
        { metrics, onRotated: () => transport?.renewCredentials() },
        shared,
      );
      jwks = new JwksCache({ cooldownMs: opts.jwksRefetchCooldown ?? DEFAULT_JWKS_COOLDOWN_MS });
      security = { ...settings, tls: workloadTls, jwks };
    }
  } catch (e) {
    log.error((e as Error).message);
    return { exitCode: EXIT_BAD_CONFIG };
  }
  if (workloadTls && !(await firstCertificate(workloadTls, source!, auth, log))) return { exitCode: EXIT_FAILURE };
  const identity = {
    id: opts.id || `${env.POD_NAME ?? "sidecar"}.${namespace}`,
    ip: opts.ip || (env.INSTANCE_IP ?? ""),
    domain: dnsDomain,
    serviceCluster: opts.serviceCluster,
  };
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
  const channel = hubChannel(clusters, mtls ? () => hubTlsOptions(mtls, opts.hubIdentity ?? "") : undefined, logger.scope("hub"));
  transport = channel.transport;
  const { hub, stats: transportStats } = channel;
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
