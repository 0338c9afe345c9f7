import { CheckCache } from "../client/check_cache";
import { ClientCounters, COUNTER_COUNT } from "../client/counters";
import { QuotaCache } from "../client/quota_cache";
import { ReportBatch } from "../client/report_batch";
import { TcpClientConfig } from "../config/tcp_client_config";
import * as host from "../abi/host";
import { ReportChannel } from "./report_channel";
import { TcpConnection } from "./tcp_connection";

/** Metric names of the TCP client: the HTTP client's names under their own prefix (upstream: tcp_mixer_filter.). */
export const TCP_COUNTER_PREFIX = "hub_client.tcp.";

/**
 * The hub client of a plugin's TCP connections: its own transport (caches,
 * report batch, clusters, fail policy) and counters, as upstream ran one
 * client per TCP filter. Replaced on reconfiguration; the replacement adopts
 * the counters and the open connections.
 */
export class TcpClient {
  checkCache: CheckCache;
  quotaCache: QuotaCache;
  reports: ReportBatch;
  counters: ClientCounters = new ClientCounters();
  /** Where the report batches go, with the retry buffer of those the hub could not take. */
  reportChannel: ReportChannel = new ReportChannel("", new ClientCounters(), true);
  /** Allowed connections still open: the tick sends their `continue` reports. */
  open: Map<u32, TcpConnection> = new Map();
  /** connection.id prefix, drawn once per configuration (upstream: a uuid). */
  readonly connectionIdPrefix: string;
  private metricIds: Array<i64> = [];
  private lastStatsNanos: i64;

  constructor(
    public readonly config: TcpClientConfig,
    rootId: u32,
    nowNanos: i64,
  ) {
    const t = config.transport;
    this.checkCache = new CheckCache(t.disableCheckCache ? 0 : 10000);
    this.quotaCache = new QuotaCache(t.disableQuotaCache ? 0 : 10000);
    this.reports = new ReportBatch(t.disableReportBatch ? 1 : <i32>t.reportBatchMaxEntries, t.reportBatchMaxTimeNanos);
    // No random source in the module: root id and configuration time are unique per proxy worker.
    this.connectionIdPrefix = "tcp-" + rootId.toString() + "-" + nowNanos.toString(16);
    this.lastStatsNanos = nowNanos;
    this.reportChannel.cluster = t.reportCluster;
    this.reportChannel.counters = this.counters;
  }

  /** Takes over what must survive a reconfiguration from the client it replaces. */
  adopt(previous: TcpClient | null): void {
    if (previous !== null) {
      this.counters = previous.counters;
      this.metricIds = previous.metricIds;
      this.lastStatsNanos = previous.lastStatsNanos;
      this.open = previous.open;
      const channel = previous.reportChannel;
      channel.cluster = this.config.transport.reportCluster;
      this.reportChannel = channel;
    }
    const t = this.config.transport;
    this.counters.recordReportsDropped(this.reportChannel.buffer.resize(t.reportBufferMaxEntries, t.reportBufferMaxBytes));
    if (this.metricIds.length == 0) {
      const names = this.counters.names();
      for (let i = 0; i < COUNTER_COUNT; i++) this.metricIds.push(host.defineCounter(TCP_COUNTER_PREFIX + names[i]));
    }
  }

  connectionId(contextId: u32): string {
    return this.connectionIdPrefix + "-" + contextId.toString();
  }

  /** Shortest period the tick must run at for this client (report batch, stats, continue reports). */
  tickNanos(): i64 {
    const t = this.config.transport;
    return min<i64>(min<i64>(t.reportBatchMaxTimeNanos, t.statsUpdateIntervalNanos), this.config.reportIntervalNanos);
  }

  publishCountersIfDue(now: i64): void {
    if (now - this.lastStatsNanos >= this.config.transport.statsUpdateIntervalNanos) this.publishCounters(now);
  }

  publishCounters(now: i64): void {
    for (let i = 0; i < COUNTER_COUNT; i++) {
      const id = this.metricIds[i];
      const delta = this.counters.takeDelta(i);
      if (id >= 0) host.incrementCounter(<u32>id, delta);
    }
    this.lastStatsNanos = now;
  }
}
