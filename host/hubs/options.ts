import type { LoadSheddingOptions } from "./load_shedder.ts";
import type { QuotaStoreFailureMode } from "./quota_failure.ts";
import type { QuotaStoreLocation } from "./quota_store_url.ts";
import type { HubTlsFiles } from "./mutual_tls.ts";
import { DEFAULT_ROOT_NAMESPACE } from "../config/mesh_config.ts";

/** Defaults of `hubs server` (spec 2: hubs, Listeners and ports, Limits). */
export const DEFAULT_GRPC_PORT = 9091;
export const DEFAULT_MONITORING_PORT = 15014;
export const DEFAULT_MAX_MESSAGE_SIZE_BYTES = 1_048_576;
export const DEFAULT_MAX_CONCURRENT_STREAMS = 1024;
export const DEFAULT_API_WORKER_POOL_SIZE = 1024;
export const DEFAULT_NUM_CHECK_CACHE_ENTRIES = 1_500_000;
export const DEFAULT_CONFIG_NAMESPACE = DEFAULT_ROOT_NAMESPACE;
export const DEFAULT_CONFIG_WAIT_TIMEOUT_MS = 120_000;
/** Label sets per request metric before reports are counted as overflow (--requestMetricsMaxSeries). */
export const DEFAULT_REQUEST_METRICS_MAX_SERIES = 10_000;
/** How long a graceful shutdown waits for calls in flight before closing connections. */
export const SHUTDOWN_GRACE_MS = 5000;

/** Log scopes of the hub (spec 2, "Log scopes per daemon"). */
export const HUB_LOG_SCOPES = ["adapters", "all", "api", "attributes", "default", "grpcAdapter", "loadshedding", "mcp", "validation"] as const;

/** Everything `hubs server` was told, typed. */
export interface HubServerOptions {
  /** Mutual TLS files (mutual_tls.ts `chooseHubTls`); undefined = plain text. */
  tls?: HubTlsFiles;
  /** BYPASS_OOP_MTLS_SAN_VERIFICATION: accept any client certificate that chains to the roots. */
  bypassSanVerification?: boolean;
  port: number;
  /** `tcp://HOST:PORT` or `unix://PATH`; overrides `port` when set. */
  address: string;
  monitoringPort: number;
  maxMessageSize: number;
  maxConcurrentStreams: number;
  /** Accepted for compatibility; see docs/hubs.md. */
  apiWorkerPoolSize: number;
  /** Accepted for compatibility; see docs/hubs.md. */
  numCheckCacheEntries: number;
  /** --loadsheddingMode and its evaluators' thresholds (load_shedder.ts). */
  loadShedding: LoadSheddingOptions;
  /** `fs://DIR` or empty (no rules: every check passes, quotas are unlimited). */
  configStoreURL: string;
  configDefaultNamespace: string;
  configWaitTimeoutMs: number;
  livenessProbePath: string;
  livenessProbeIntervalMs: number;
  readinessProbePath: string;
  readinessProbeIntervalMs: number;
  /** Accepted for compatibility; see docs/hubs.md. */
  singleThreaded: boolean;
  /** Accepted for compatibility; see docs/hubs.md. */
  profile: boolean;
  ctrlzPort: number;
  ctrlzAddress: string;
  /** --quotaStoreURL (quota_store_url.ts); default memory. */
  quotaStore?: QuotaStoreLocation;
  /** --quotaStoreTimeout: longest wait for one allocation in a shared store. */
  quotaStoreTimeoutMs?: number;
  /** --quotaStoreFailureMode: the answer when the shared store cannot give one. */
  quotaStoreFailureMode?: QuotaStoreFailureMode;
  /** --requestMetricsMaxSeries: label sets per request metric before overflow (request_metrics.ts). */
  requestMetricsMaxSeries?: number;
}
