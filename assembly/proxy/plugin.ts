import { AttributeBag } from "../attributes/bag";
import { FORWARDED_HEADER } from "../attributes/forwarded";
import { CheckCache } from "../client/check_cache";
import { ClientCounters, COUNTER_COUNT, TransportOutcome, transportOutcome } from "../client/counters";
import { PrefetchRequest, QuotaCache } from "../client/quota_cache";
import { ReportBatch } from "../client/report_batch";
import { ClientConfig, NetworkFailPolicy, TransportConfig } from "../config/client_config";
import { compileConfig } from "../config/compile";
import { GLOBAL_WORD_COUNT } from "../hub/global_words";
import { encodeReportRequest } from "../hub/report_request";
import { encodePairs } from "../pairs";
import { LogLevel } from "../abi/enums";
import * as host from "../abi/host";
import { TcpClient } from "./tcp_client";

export const HUB_SERVICE = "mesh.hub.v1.Hub";
/** Per-attempt deadline of a hub call (upstream's gRPC timeout). */
export const HUB_CALL_TIMEOUT_MS: u32 = 5000;
/**
 * gRPC metadata carrying the NetworkFailPolicy's retry settings to the host,
 * which executes the retries: `max-retry=N;base-retry-wait-ms=N;max-retry-wait-ms=N`.
 */
export const RETRY_POLICY_METADATA = "x-mesh-retry-policy";
const COUNTER_PREFIX = "hub_client.";

export const enum CallKind {
  Check,
  Prefetch,
  Report,
  /** The calls of a TCP connection's client (TcpClient). */
  ConnectionCheck,
  ConnectionPrefetch,
  ConnectionReport,
}

/** A hub call in flight, filed under its token. */
export class PendingCall {
  constructor(
    public kind: CallKind,
    public streamId: u32,
    public prefetch: PrefetchRequest | null,
  ) {}
}

/**
 * The state of one root context: the compiled configuration and the hub
 * client (caches, report batch, counters, calls in flight). A new
 * configuration replaces it only when it compiles.
 */
export class Plugin {
  config: ClientConfig | null = null;
  checkCache: CheckCache = new CheckCache(0);
  quotaCache: QuotaCache = new QuotaCache(0);
  reports: ReportBatch = new ReportBatch(1, 1_000_000_000);
  counters: ClientCounters = new ClientCounters();
  pending: Map<u32, PendingCall> = new Map();
  /** The hub client of TCP connections; null when the configuration has no tcpClientConfig. */
  tcp: TcpClient | null = null;
  private metricIds: Array<i64> = [];
  private lastStatsNanos: i64 = 0;
  private deduplicationPrefix: string = "";
  private deduplicationCounter: u64 = 0;

  constructor(public readonly rootId: u32) {}

  /** Compiles and applies a plugin configuration; on failure logs why and keeps the old one. */
  configure(json: string): bool {
    const result = compileConfig(json);
    if (result.config === null) {
      host.log(LogLevel.Error, "hub client configuration rejected: " + result.error);
      return false;
    }
    for (let i = 0; i < result.warnings.length; i++) host.log(LogLevel.Warn, "hub client configuration: " + result.warnings[i]);
    const config = result.config as ClientConfig;
    const t = config.transport;
    this.flushReports();
    this.flushTcpReports();
    this.config = config;
    this.checkCache = new CheckCache(t.disableCheckCache ? 0 : 10000);
    this.quotaCache = new QuotaCache(t.disableQuotaCache ? 0 : 10000);
    this.reports = new ReportBatch(t.disableReportBatch ? 1 : <i32>t.reportBatchMaxEntries, t.reportBatchMaxTimeNanos);
    const now = host.nowNanos();
    // Unique per client start, as upstream's uuid prefix: root id and start time.
    this.deduplicationPrefix = this.rootId.toString() + "-" + now.toString(16) + "-";
    this.lastStatsNanos = now;
    if (this.metricIds.length == 0) {
      const names = this.counters.names();
      for (let i = 0; i < COUNTER_COUNT; i++) this.metricIds.push(host.defineCounter(COUNTER_PREFIX + names[i]));
    }
    let tick = t.reportBatchMaxTimeNanos < t.statsUpdateIntervalNanos ? t.reportBatchMaxTimeNanos : t.statsUpdateIntervalNanos;
    const previousTcp = this.tcp;
    this.tcp = null;
    if (config.tcp !== null) {
      const tcp = new TcpClient(config.tcp!, this.rootId, now);
      tcp.adopt(previousTcp);
      this.tcp = tcp;
      // One tick serves both clients: the shorter period of the two.
      tick = min<i64>(tick, tcp.tickNanos());
    }
    host.setTickPeriodMs(<u32>max<i64>(10, tick / 1_000_000));
    host.log(LogLevel.Info, "hub client configured: " + config.serviceNames.length.toString() + " service(s)");
    return true;
  }

  nextDeduplicationId(): string {
    return this.deduplicationPrefix + (this.deduplicationCounter++).toString();
  }

  /** Sends a hub call with the fail policy's retry settings; returns the token, or -1. */
  call(kind: CallKind, method: string, message: Uint8Array, policy: NetworkFailPolicy, streamId: u32, prefetch: PrefetchRequest | null): i64 {
    const config = this.config as ClientConfig;
    const cluster = kind == CallKind.Report ? config.transport.reportCluster : config.transport.checkCluster;
    return this.callCluster(cluster, kind, method, message, policy, streamId, prefetch);
  }

  /** Same, to a named cluster (the TCP client has its own transport). */
  callCluster(cluster: string, kind: CallKind, method: string, message: Uint8Array, policy: NetworkFailPolicy, streamId: u32, prefetch: PrefetchRequest | null): i64 {
    const names: Array<string> = [RETRY_POLICY_METADATA];
    const values: Array<string> = [
      "max-retry=" + policy.maxRetry.toString() +
        ";base-retry-wait-ms=" + (policy.baseRetryWaitNanos / 1_000_000).toString() +
        ";max-retry-wait-ms=" + (policy.maxRetryWaitNanos / 1_000_000).toString(),
    ];
    const hubProxyHeader = this.transportFor(kind).hubProxyHeader;
    if (hubProxyHeader.length > 0) {
      names.push(FORWARDED_HEADER);
      values.push(hubProxyHeader);
    }
    const metadata = encodePairs(names, values);
    const token = host.grpcCall(cluster, HUB_SERVICE, method, metadata, message, HUB_CALL_TIMEOUT_MS);
    if (token >= 0) this.pending.set(<u32>token, new PendingCall(kind, streamId, prefetch));
    return token;
  }

  // The transport a call belongs to: the TCP client's for connection calls.
  private transportFor(kind: CallKind): TransportConfig {
    const tcp = this.tcp;
    const connectionCall = kind == CallKind.ConnectionCheck || kind == CallKind.ConnectionPrefetch || kind == CallKind.ConnectionReport;
    if (connectionCall && tcp !== null) return tcp.config.transport;
    const config = this.config;
    return config !== null ? config.transport : new TransportConfig();
  }

  addReport(bag: AttributeBag, now: i64): void {
    this.counters.recordReportCall();
    if (this.reports.add(bag, now)) this.flushReports();
  }

  flushReports(): void {
    if (this.config === null) return;
    const batch = this.reports.take();
    if (batch.length == 0) return;
    this.counters.recordRemoteReportCall();
    // Reports are fire-and-forget: no retries (upstream), so a zero-retry policy.
    const token = this.call(CallKind.Report, "Report", encodeReportRequest(batch, GLOBAL_WORD_COUNT), new NetworkFailPolicy(), 0, null);
    if (token < 0) this.counters.recordRemoteReportDone(TransportOutcome.Other);
  }

  /** Sends what the TCP client's report batch holds (fire-and-forget, as HTTP reports). */
  flushTcpReports(): void {
    const tcp = this.tcp;
    if (tcp === null) return;
    const message = tcp.takeReportRequest();
    if (message === null) return;
    tcp.counters.recordRemoteReportCall();
    const token = this.callCluster(tcp.config.transport.reportCluster, CallKind.ConnectionReport, "Report", message, new NetworkFailPolicy(), 0, null);
    if (token < 0) tcp.counters.recordRemoteReportDone(TransportOutcome.Other);
  }

  onReportDone(code: i32, message: string): void {
    const outcome = transportOutcome(code, message);
    this.counters.recordRemoteReportDone(outcome);
    if (outcome != TransportOutcome.Success) host.log(LogLevel.Warn, "hub report failed: " + code.toString() + " " + message);
  }

  onTick(): void {
    if (this.config === null) return;
    const now = host.nowNanos();
    if (this.reports.isDue(now)) this.flushReports();
    this.quotaCache.removeIdle(now);
    if (now - this.lastStatsNanos >= (this.config as ClientConfig).transport.statsUpdateIntervalNanos) this.publishCounters(now);
  }

  /** Copies the counters' growth since the last publication to the proxy's metrics. */
  publishCounters(now: i64): void {
    for (let i = 0; i < COUNTER_COUNT; i++) {
      const id = this.metricIds[i];
      const delta = this.counters.takeDelta(i);
      if (id >= 0) host.incrementCounter(<u32>id, delta);
    }
    this.lastStatsNanos = now;
  }
}
