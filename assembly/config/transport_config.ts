import { AttributeBag } from "../attributes/bag";

// Defaults of the hub client, named with their units (hub-client.md §8).
export const DEFAULT_CLUSTER = "hub_server";
export const DEFAULT_BASE_RETRY_WAIT_NS: i64 = 80_000_000;
export const DEFAULT_MAX_RETRY_WAIT_NS: i64 = 1_000_000_000;
export const DEFAULT_STATS_UPDATE_INTERVAL_NS: i64 = 10_000_000_000;
export const DEFAULT_REPORT_BATCH_MAX_ENTRIES: u32 = 100;
export const DEFAULT_REPORT_BATCH_MAX_TIME_NS: i64 = 1_000_000_000;
/** Report retry buffer (not upstream: upstream dropped failed reports): reports and encoded bytes kept while the hub is unreachable. */
export const DEFAULT_REPORT_BUFFER_MAX_ENTRIES: u32 = 10_000;
export const DEFAULT_REPORT_BUFFER_MAX_BYTES: u32 = 8 * 1024 * 1024;
export const DEFAULT_MESH_DOMAIN_SUFFIX = "svc.cluster.local";

/** NetworkFailPolicy with defaults applied. */
export class NetworkFailPolicy {
  failClose: bool = false;
  maxRetry: u32 = 0;
  baseRetryWaitNanos: i64 = DEFAULT_BASE_RETRY_WAIT_NS;
  maxRetryWaitNanos: i64 = DEFAULT_MAX_RETRY_WAIT_NS;
}

export class TransportConfig {
  disableCheckCache: bool = false;
  disableQuotaCache: bool = false;
  disableReportBatch: bool = false;
  networkFailPolicy: NetworkFailPolicy = new NetworkFailPolicy();
  statsUpdateIntervalNanos: i64 = DEFAULT_STATS_UPDATE_INTERVAL_NS;
  checkCluster: string = DEFAULT_CLUSTER;
  reportCluster: string = DEFAULT_CLUSTER;
  attributesForHubProxy: AttributeBag = new AttributeBag();
  /**
   * `attributesForHubProxy` as the `x-mesh-attributes` metadata value of every
   * hub call (base64 of mesh.hub.v1.Attributes), for the proxy in front of
   * the hub, as upstream's transport sent them; "" = none.
   */
  hubProxyHeader: string = "";
  reportBatchMaxEntries: u32 = DEFAULT_REPORT_BATCH_MAX_ENTRIES;
  reportBatchMaxTimeNanos: i64 = DEFAULT_REPORT_BATCH_MAX_TIME_NS;
  /** 0 = keep nothing: a failed batch is dropped (and counted) at once. */
  reportBufferMaxEntries: u32 = DEFAULT_REPORT_BUFFER_MAX_ENTRIES;
  reportBufferMaxBytes: u32 = DEFAULT_REPORT_BUFFER_MAX_BYTES;
}
