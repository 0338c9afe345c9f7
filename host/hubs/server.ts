import { bindNamed } from "../daemon/bind.ts";
import type * as grpc from "@grpc/grpc-js";
import { shutdownGrpcServer } from "../wire/raw_grpc.ts";
import { addGrpcIntrospection } from "../wire/grpc_introspection.ts";
import { buildInfo } from "../daemon/version.ts";
import { startCtrlz, type CtrlzServer } from "../telemetry/ctrlz.ts";
import type { Logger } from "../telemetry/logger.ts";
import { startMonitoring, type MonitoringServer } from "../telemetry/monitoring_server.ts";
import { GlobalDictionary } from "../wire/compressed.ts";
import { GLOBAL_WORDS } from "../wire/global_words.ts";
import { AccessLogWriter } from "./access_log.ts";
import { FsConfigStore, fsStoreDir, type LoadedConfig } from "./config_store.ts";
import { bindGrpc, createHubGrpcServer, grpcBindAddress, HUB_SERVICE } from "./grpc_server.ts";
import { hubMethods } from "./hub_methods.ts";
import { clientSanProblem, hubServerCredentials, loadHubTls } from "./mutual_tls.ts";
import { emptyHubConfig } from "./hub_config.ts";
import { LoadShedder } from "./load_shedder.ts";
import { HubMetrics } from "./metrics.ts";
import { DEFAULT_REQUEST_METRICS_MAX_SERIES, SHUTDOWN_GRACE_MS, type HubServerOptions } from "./options.ts";
import { RequestMetrics } from "./request_metrics.ts";
import { ProbeFile } from "../daemon/probes.ts";
import { MemQuotaStore, type QuotaStore } from "./quota_store.ts";
import { DEFAULT_QUOTA_STORE_FAILURE_MODE, DEFAULT_QUOTA_STORE_TIMEOUT_MS } from "./quota_failure.ts";
import { QuotaStoreMetrics } from "./quota_store_metrics.ts";
import { compileRegex, type CompileRegex } from "../regex/engine.ts";

/** How long start-up waits for a shared quota store before serving without it (its failure mode answers meanwhile). */
const QUOTA_STORE_START_WAIT_MS = 5000;

/** The prefix of the one stdout line that tells where every listener is bound (see docs/hubs.md). */
export const LISTENING_LINE_PREFIX = "hubs listening ";

export interface HubListeners {
  /** `HOST:PORT` or `unix:PATH`. */
  grpc: string;
  grpcPort: number;
  /** true when gRPC is mutual TLS. */
  grpcTls: boolean;
  monitoring: string;
  monitoringPort: number;
  ctrlz: string;
  ctrlzPort: number;
}

export interface HubServer {
  listeners: HubListeners;
  metrics: HubMetrics;
  /** Stops accepting calls, lets calls in flight finish (up to SHUTDOWN_GRACE_MS), closes every listener and file. */
  close(): Promise<void>;
  /** Rescans the --configStoreURL directory now (SIGHUP); a bad file keeps the last good configuration. False without a store. */
  reload(): boolean;
}

export interface HubServerDeps {
  logger: Logger;
  /** Wall clock in ms (access-log times, quota windows). */
  now?: () => number;
  compileRegex?: CompileRegex;
}

/** Re-exported for the tests and benches that import them from here. */
export { decodeReportBytes, decodeReportGeneral } from "./hub_messages.ts";

/** Starts `hubs server`: monitoring and ControlZ first, then the initial configuration, then gRPC. */
export async function startHubServer(options: HubServerOptions, deps: HubServerDeps): Promise<HubServer> {
  const { logger } = deps;
  const now = deps.now ?? Date.now;
  const log = logger.scope("default");
  const apiLog = logger.scope("api");
  const adaptersLog = logger.scope("adapters");
  const validationLog = logger.scope("validation");
  const dictionary = new GlobalDictionary(GLOBAL_WORDS);
  const metrics = new HubMetrics();
  metrics.attributes.set(dictionary.size);
  let quotas: QuotaStore = new MemQuotaStore(now);
  const requestMetrics = new RequestMetrics(metrics.registry, options.requestMetricsMaxSeries ?? DEFAULT_REQUEST_METRICS_MAX_SERIES);
  const accessLogs = new AccessLogWriter(adaptersLog, (path) => metrics.handlerFailed(path));
  let loaded: LoadedConfig = { config: emptyHubConfig(options.configDefaultNamespace), resources: [], errors: [], matchErrors: 0 };
  let serving = false;
  let closing = false;

  if (options.singleThreaded) log.info("--singleThreaded has no effect: JavaScript runs every request on one thread");

  const apply = (next: LoadedConfig) => {
    loaded = next;
    metrics.configApplied(next);
    accessLogs.retain(new Set(next.config.accessLogs.map((a) => a.path)));
    quotas.retain((name) => next.config.quotas.has(name));
    requestMetrics.configure(next.config.metrics);
    validationLog.info("configuration applied", {
      rules: next.config.rules.length,
      quotas: next.config.quotas.size,
      accessLogs: next.config.accessLogs.length,
      errors: next.errors.length,
    });
  };

  const closers: Array<() => Promise<void> | void> = [];
  const closeAll = async () => {
    for (const c of closers.reverse()) await c();
  };
  try {
    if (options.quotaStore?.kind === "redis") {
      // Loaded only when used: the client library is not needed by a hub with memory quotas.
      const { RedisQuotaStore } = await import("./redis_quota_store.ts");
      const store = new RedisQuotaStore({
        location: options.quotaStore,
        timeoutMs: options.quotaStoreTimeoutMs ?? DEFAULT_QUOTA_STORE_TIMEOUT_MS,
        failureMode: options.quotaStoreFailureMode ?? DEFAULT_QUOTA_STORE_FAILURE_MODE,
        metrics: new QuotaStoreMetrics(metrics.registry),
        log: adaptersLog,
        now,
      });
      quotas = store;
      closers.push(() => store.close());
      if (!(await store.waitUntilReady(QUOTA_STORE_START_WAIT_MS)))
        adaptersLog.warn(`${store.problem() ?? `quota store ${store.description}: not connected yet`}; serving anyway, reconnecting`);
    }
    const monitoring: MonitoringServer = await bindNamed(
      "--monitoringPort",
      options.monitoringPort,
      startMonitoring({
        port: options.monitoringPort,
        registry: metrics.registry,
        info: buildInfo,
        healthy: () => serving && !closing,
        healthDetail: () => [quotas.problem() ?? `quota store ${quotas.description}: ok`],
        profiling: options.profile,
      }),
    );
    closers.push(() => monitoring.close());

    const ctrlz: CtrlzServer = await bindNamed(
      "--ctrlz_port",
      `${options.ctrlzAddress}:${options.ctrlzPort}`,
      startCtrlz({
        address: options.ctrlzAddress,
        port: options.ctrlzPort,
        component: "hubs",
        info: buildInfo,
        logger,
        now,
        sections: {
          rules: () =>
            loaded.config.rules.map((r) => ({
              id: r.id,
              file: r.file,
              match: r.match.map((m) => m.clauses.map((c) => `${c.attribute.text} ${c.match.kind}`)),
              actions: r.actions.map((a) => a.kind),
            })),
          quotas: () =>
            [...loaded.config.quotas.values()].map((q) => ({
              id: q.id,
              name: q.quotaName,
              maxAmount: q.maxAmount,
              validDurationMs: q.validDurationMs,
              rateLimitAlgorithm: q.rateLimitAlgorithm,
              bucketDurationMs: q.bucketDurationMs,
              overrides: q.overrides.length,
            })),
          quotaStore: () => ({ store: quotas.description, problem: quotas.problem() ?? null }),
          quotaUsage: () => quotas.usage(),
          accessLogs: () => loaded.config.accessLogs.map((a) => ({ id: a.id, path: a.path })),
          configErrors: () => loaded.errors,
        },
      }),
    );
    closers.push(() => ctrlz.close());

    if (options.livenessProbePath && options.livenessProbeIntervalMs > 0) {
      const liveness = new ProbeFile(options.livenessProbePath, options.livenessProbeIntervalMs, () => !closing, now);
      liveness.start();
      closers.push(() => liveness.stop());
    }

    let rescan: (() => void) | undefined;
    if (options.configStoreURL) {
      const dir = fsStoreDir(options.configStoreURL);
      if (dir === undefined) throw new Error(`--configStoreURL ${options.configStoreURL}: this hub supports fs://DIR only`);
      const store = new FsConfigStore({
        dir,
        defaultNamespace: options.configDefaultNamespace,
        compileRegex: deps.compileRegex ?? compileRegex,
        log: validationLog,
        onChange: apply,
      });
      await store.waitForDir(options.configWaitTimeoutMs);
      store.scan();
      store.watch();
      closers.push(() => store.close());
      rescan = () => store.scan();
    } else {
      apply(loaded);
    }

    const tlsIdentity = options.tls ? loadHubTls(options.tls) : undefined;
    if (tlsIdentity) {
      log.info("gRPC is mutual TLS", {
        ...options.tls,
        identity: tlsIdentity.uris.join(" "),
        clientTrustDomain: options.bypassSanVerification ? "(any: BYPASS_OOP_MTLS_SAN_VERIFICATION)" : (tlsIdentity.trustDomain ?? "(any SPIFFE identity)"),
      });
    } else {
      log.warn(
        "gRPC is plain text: no --caCertFile/--certFile/--keyFile given and no certificates at /etc/certs; callers are not authenticated (local development only)",
      );
    }

    const shedder = new LoadShedder(options.loadShedding);
    const ls = options.loadShedding;
    logger.scope("loadshedding").debug(`load shedding ${ls.mode}`, {
      maxRequestsPerSecond: ls.maxRequestsPerSecond,
      burstSize: ls.burstSize,
      averageLatencyThresholdMs: ls.averageLatencyThresholdMs,
    });
    for (const flag of shedder.inertThresholds)
      logger.scope("loadshedding").warn(`${flag} has no effect: --loadsheddingMode is disabled (the default); give --loadsheddingMode enforce (or logonly)`);
    const server: grpc.Server = createHubGrpcServer({
      maxMessageSize: options.maxMessageSize,
      maxConcurrentStreams: options.maxConcurrentStreams,
      shedder,
      metrics,
      log: apiLog,
      sheddingLog: logger.scope("loadshedding"),
      peerProblem: tlsIdentity && !options.bypassSanVerification ? (san) => clientSanProblem(san, tlsIdentity) : undefined,
      handlers: hubMethods({
        config: () => loaded.config,
        quotas: () => quotas,
        dictionary,
        metrics,
        requestMetrics,
        accessLogs,
        now,
        logger,
      }),
    });
    const health = addGrpcIntrospection(server, { services: [HUB_SERVICE], protoFiles: ["mesh/hub/v1/hub.proto"] });
    const bindAddress = grpcBindAddress(options.address, options.port);
    const grpcPort = await bindNamed(
      options.address ? "--address" : "--port",
      options.address || options.port,
      bindGrpc(server, bindAddress, options.tls ? await hubServerCredentials(options.tls) : undefined),
    );
    closers.push(() => accessLogs.close()); // runs after the gRPC drain below (closers run in reverse)
    closers.push(() => {
      health.setServing(false);
      return shutdownGrpcServer(server, SHUTDOWN_GRACE_MS);
    });
    serving = true;
    health.setServing(true);

    if (options.readinessProbePath && options.readinessProbeIntervalMs > 0) {
      const readiness = new ProbeFile(options.readinessProbePath, options.readinessProbeIntervalMs, () => serving && !closing, now);
      readiness.start();
      closers.push(() => readiness.stop());
    }

    const grpcAddress = bindAddress.startsWith("unix:") ? bindAddress : bindAddress.replace(/:\d+$/, `:${grpcPort}`);
    const listeners: HubListeners = {
      grpc: grpcAddress,
      grpcPort,
      grpcTls: tlsIdentity !== undefined,
      monitoring: monitoring.address,
      monitoringPort: monitoring.port,
      ctrlz: ctrlz.address,
      ctrlzPort: ctrlz.port,
    };
    log.info("hubs serving", { ...listeners });
    return {
      listeners,
      metrics,
      reload: () => {
        if (!rescan || closing) return false;
        rescan();
        return true;
      },
      close: async () => {
        if (closing) return;
        closing = true;
        serving = false;
        await closeAll();
      },
    };
  } catch (e) {
    closing = true;
    await closeAll();
    throw e;
  }
}
