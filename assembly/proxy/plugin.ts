import { AttributeBag } from "../attributes/bag";
import { HeaderMap } from "../attributes/header_map";
import { ResponseView } from "../attributes/report";
import { StreamPool } from "./stream_pool";
import { FORWARDED_HEADER } from "../proto/forwarded";
import { isRetryableStatus, retryDelayNanos } from "../client/backoff";
import { CheckCache } from "../client/check_cache";
import { ClientCounters, COUNTER_COUNT, TransportOutcome, transportOutcome } from "../client/counters";
import { Jitter } from "../client/jitter";
import { PrefetchRequest, QuotaCache } from "../client/quota_cache";
import { BufferedReport } from "../client/report_buffer";
import { ReportBatch } from "../client/report_batch";
import { RetryQueue } from "../client/retry_queue";
import { ClientConfig, NetworkFailPolicy, TransportConfig } from "../config/client_config";
import { compileConfig } from "../config/compile";
import { encodePairs } from "../pairs";
import { LogLevel } from "../abi/enums";
import * as host from "../abi/host";
import { MESH_HOST_RETRIES } from "../abi/properties";
import { ReportChannel } from "./report_channel";
import { TcpClient } from "./tcp_client";

export const HUB_SERVICE = "mesh.hub.v1.Hub";

// Header maps that keep their storage from report to report.
function newResponseView(): ResponseView {
  const view = new ResponseView();
  view.headers = new HeaderMap(16);
  view.trailers = new HeaderMap(0);
  return view;
}
/** Per-attempt deadline of a hub call (upstream's gRPC timeout). */
export const HUB_CALL_TIMEOUT_MS: u32 = 5000;
/**
 * gRPC metadata carrying the NetworkFailPolicy's retry settings to a host
 * that executes the retries itself (see HOST_RETRIES_PROPERTY):
 * `max-retry=N;base-retry-wait-ms=N;max-retry-wait-ms=N`.
 */
export const RETRY_POLICY_METADATA = "x-mesh-retry-policy";
/**
 * The host property by which a host declares that it executes the
 * NetworkFailPolicy's retries (our Node host does). When it is absent or
 * false — Envoy and every other proxy — the module retries itself, on the
 * proxy's timer, and sends no retry metadata: a call is retried by exactly
 * one of the two.
 */
export const HOST_RETRIES_PROPERTY = MESH_HOST_RETRIES;
/** How long a root context going away waits for its last report batches to be answered. */
export const SHUTDOWN_REPORT_WAIT_NANOS: i64 = 5_000_000_000;
const COUNTER_PREFIX = "hub_client.";
const NO_RETRY = new NetworkFailPolicy();
const NO_METADATA = new Uint8Array(0);

export const enum CallKind {
  Check,
  Prefetch,
  Report,
  /** The calls of a TCP connection's client (TcpClient). */
  ConnectionCheck,
  ConnectionPrefetch,
  ConnectionReport,
}

/** A hub call in flight (filed under its token) or waiting to be retried. */
export class PendingCall {
  cluster: string = "";
  method: string = "";
  message: Uint8Array = NO_METADATA;
  policy: NetworkFailPolicy = NO_RETRY;
  /** Retries made so far (the module's own, when the host does not retry). */
  retriesMade: u32 = 0;
  /** The last failure, for when a retry cannot even be sent. */
  lastCode: i32 = 0;
  lastMessage: string = "";
  /** Report calls: the channel of the batch and how many reports it carries. */
  channel: ReportChannel | null = null;
  reportEntries: i32 = 0;
  /** A batch taken from the retry buffer. */
  resend: bool = false;

  constructor(
    public kind: CallKind,
    public streamId: u32,
    public prefetch: PrefetchRequest | null,
  ) {}
}

/**
 * The state of one root context: the compiled configuration and the hub
 * client (caches, report batch and retry buffer, counters, calls in flight
 * and waiting for a retry). A new configuration replaces it only when it
 * compiles.
 */
export class Plugin {
  config: ClientConfig | null = null;
  checkCache: CheckCache = new CheckCache(0);
  quotaCache: QuotaCache = new QuotaCache(0);
  reports: ReportBatch = new ReportBatch(1, 1_000_000_000);
  counters: ClientCounters = new ClientCounters();
  pending: Map<u32, PendingCall> = new Map();
  /** Calls waiting for their backoff before the module sends them again. */
  retries: RetryQueue<PendingCall> = new RetryQueue<PendingCall>();
  /** True when the host declared it executes retries (HOST_RETRIES_PROPERTY). */
  hostRetries: bool = false;
  httpReports: ReportChannel = new ReportChannel("", new ClientCounters(), false);
  /** Objects of finished streams reused by the next requests. */
  streamPool: StreamPool = new StreamPool();
  /** The outcome of the request being reported (one report at a time), refilled each time. */
  responseView: ResponseView = newResponseView();
  /** The hub client of TCP connections; null when the configuration has no tcpClientConfig. */
  tcp: TcpClient | null = null;
  /** proxy_on_done answered false: the last report batches are in flight. */
  draining: bool = false;
  /** proxy_done was called (or proxy_on_done answered true): nothing more is sent. */
  finished: bool = false;
  private drainDeadlineNanos: i64 = 0;
  private jitter: Jitter | null = null;
  private periodicTickMs: u32 = 0;
  private armedTickMs: u32 = 0;
  private metricIds: Array<i64> = [];
  private lastStatsNanos: i64 = 0;
  private deduplicationPrefix: string = "";
  private deduplicationCounter: u64 = 0;

  constructor(public readonly rootId: u32) {
    this.httpReports.counters = this.counters;
  }

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
    this.hostRetries = host.propertyBool(HOST_RETRIES_PROPERTY);
    this.checkCache = new CheckCache(t.disableCheckCache ? 0 : 10000);
    this.quotaCache = new QuotaCache(t.disableQuotaCache ? 0 : 10000);
    this.reports = new ReportBatch(t.disableReportBatch ? 1 : <i32>t.reportBatchMaxEntries, t.reportBatchMaxTimeNanos);
    this.httpReports.cluster = t.reportCluster;
    this.counters.recordReportsDropped(this.httpReports.buffer.resize(t.reportBufferMaxEntries, t.reportBufferMaxBytes));
    const now = host.nowNanos();
    // Seeded once per root context: the clock and the root id differ from proxy to proxy and worker to worker.
    if (this.jitter === null) this.jitter = new Jitter(<u64>now ^ ((<u64>this.rootId) << 40));
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
    } else if (previousTcp !== null) {
      // The TCP client goes away: what its retry buffer holds gets one last try.
      this.resendAll(previousTcp.reportChannel);
    }
    this.periodicTickMs = <u32>max<i64>(10, tick / 1_000_000);
    this.armTimer(now);
    host.log(LogLevel.Info, "hub client configured: " + config.serviceNames.length.toString() + " service(s)" + (this.hostRetries ? "; the host executes retries" : ""));
    return true;
  }

  nextDeduplicationId(): string {
    return this.deduplicationPrefix + (this.deduplicationCounter++).toString();
  }

  /** Sends a hub call under the fail policy; returns the token, or -1. */
  call(kind: CallKind, method: string, message: Uint8Array, policy: NetworkFailPolicy, streamId: u32, prefetch: PrefetchRequest | null): i64 {
    const config = this.config as ClientConfig;
    const cluster = kind == CallKind.Report ? config.transport.reportCluster : config.transport.checkCluster;
    return this.callCluster(cluster, kind, method, message, policy, streamId, prefetch);
  }

  /** Same, to a named cluster (the TCP client has its own transport). */
  callCluster(cluster: string, kind: CallKind, method: string, message: Uint8Array, policy: NetworkFailPolicy, streamId: u32, prefetch: PrefetchRequest | null): i64 {
    const call = new PendingCall(kind, streamId, prefetch);
    call.cluster = cluster;
    call.method = method;
    call.message = message;
    call.policy = policy;
    return this.dispatch(call);
  }

  /** Puts a call on the wire (first attempt or retry); files it under its token, or returns -1. */
  dispatch(call: PendingCall): i64 {
    const policy = call.policy;
    const names = new Array<string>();
    const values = new Array<string>();
    // Retry metadata only for a host that executes it; Envoy would forward it to the hub as a header.
    if (this.hostRetries && policy.maxRetry > 0) {
      names.push(RETRY_POLICY_METADATA);
      values.push(
        "max-retry=" + policy.maxRetry.toString() +
          ";base-retry-wait-ms=" + (policy.baseRetryWaitNanos / 1_000_000).toString() +
          ";max-retry-wait-ms=" + (policy.maxRetryWaitNanos / 1_000_000).toString(),
      );
    }
    const hubProxyHeader = this.transportFor(call.kind).hubProxyHeader;
    if (hubProxyHeader.length > 0) {
      names.push(FORWARDED_HEADER);
      values.push(hubProxyHeader);
    }
    const metadata = names.length > 0 ? encodePairs(names, values) : NO_METADATA;
    const token = host.grpcCall(call.cluster, HUB_SERVICE, call.method, metadata, call.message, HUB_CALL_TIMEOUT_MS);
    if (token >= 0) this.pending.set(<u32>token, call);
    return token;
  }

  /**
   * After a failed attempt: schedules the NetworkFailPolicy's next retry on
   * the proxy's timer (exponential backoff with jitter) and returns true, or
   * false when the failure is final — the host retries itself, the status is
   * not retryable, the retries are spent, or the root is going away.
   */
  retryLater(call: PendingCall, code: i32, message: string): bool {
    call.lastCode = code;
    call.lastMessage = message;
    if (this.hostRetries || this.draining || !isRetryableStatus(code) || call.retriesMade >= call.policy.maxRetry) return false;
    const now = host.nowNanos();
    const delay = retryDelayNanos(call.retriesMade, call.policy.baseRetryWaitNanos, call.policy.maxRetryWaitNanos, this.jitter!.next01());
    call.retriesMade++;
    this.retries.schedule(call, now + delay);
    this.armTimer(now);
    return true;
  }

  /**
   * The proxy's timer (one per root context, proxy_set_tick_period_milliseconds)
   * runs at the periodic period (report batch, stats, TCP reports), shorter
   * while a retry or the shutdown deadline is due sooner. Setting the period
   * re-arms the timer from now, so it is set only when it changes.
   */
  armTimer(now: i64): void {
    // A finished root needs no timer; a proxy deletes it anyway.
    let period = this.finished ? 0 : this.periodicTickMs;
    let next = this.retries.nextDue();
    if (this.draining && (next < 0 || this.drainDeadlineNanos < next)) next = this.drainDeadlineNanos;
    if (next >= 0 && !this.finished) {
      const waitMs = max<i64>(1, (next - now + 999_999) / 1_000_000);
      if (waitMs < <i64>period) period = <u32>waitMs;
    }
    if (period == this.armedTickMs) return;
    this.armedTickMs = period;
    host.setTickPeriodMs(period);
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

  /** Sends what the report batch holds (its messages are already encoded, each within REPORT_MESSAGE_MAX_BYTES). */
  flushReports(): void {
    if (this.config === null) return;
    this.sendReports(this.httpReports, this.reports.take());
  }

  /** Sends what the TCP client's report batch holds. */
  flushTcpReports(): void {
    const tcp = this.tcp;
    if (tcp === null) return;
    this.sendReports(tcp.reportChannel, tcp.reports.take());
  }

  private sendReports(channel: ReportChannel, messages: Array<BufferedReport>): void {
    for (let i = 0; i < messages.length; i++) this.sendReport(channel, messages[i].message, messages[i].entries, false);
  }

  /**
   * One Report call (no per-call retries, as upstream: a batch the hub could
   * not take waits in the channel's retry buffer instead).
   */
  sendReport(channel: ReportChannel, message: Uint8Array, entries: i32, resend: bool): void {
    channel.counters.recordRemoteReportCall();
    const call = new PendingCall(channel.tcp ? CallKind.ConnectionReport : CallKind.Report, 0, null);
    call.cluster = channel.cluster;
    call.method = "Report";
    call.message = message;
    call.channel = channel;
    call.reportEntries = entries;
    call.resend = resend;
    channel.inFlight++;
    if (resend) channel.resending = true;
    if (this.dispatch(call) < 0) this.onReportFailed(call, 14, "hub report could not be sent");
  }

  /** proxy_on_grpc_receive of a Report call. */
  onReportAnswered(call: PendingCall): void {
    const channel = call.channel!;
    channel.inFlight--;
    if (call.resend) channel.resending = false;
    channel.counters.recordRemoteReportDone(TransportOutcome.Success);
    if (this.draining) {
      this.finishDrainIfIdle();
      return;
    }
    this.onHubReachable();
  }

  /** proxy_on_grpc_close of a Report call (or one that could not be sent). */
  onReportFailed(call: PendingCall, code: i32, message: string): void {
    const channel = call.channel!;
    channel.inFlight--;
    const outcome = transportOutcome(code, message);
    channel.counters.recordRemoteReportDone(outcome);
    const batch = new BufferedReport(call.message, call.reportEntries);
    if (call.resend) {
      channel.resending = false;
      channel.resendFailed(host.nowNanos());
    }
    if (this.draining) {
      channel.counters.recordReportsDropped(call.reportEntries);
      this.finishDrainIfIdle();
      return;
    }
    if (!isRetryableStatus(code)) {
      // The hub's verdict on these bytes: sending them again gets the same one.
      channel.counters.recordReportsDropped(call.reportEntries);
      host.log(LogLevel.Warn, "hub refused a report batch of " + call.reportEntries.toString() + " request(s), dropped: " + code.toString() + " " + message);
      return;
    }
    const dropped = call.resend ? channel.buffer.restore(batch) : channel.buffer.add(batch);
    channel.counters.recordReportsDropped(dropped);
    if (dropped > 0) host.log(LogLevel.Warn, "report retry buffer full: " + dropped.toString() + " report(s) dropped");
    else if (!call.resend) host.log(LogLevel.Debug, "hub report failed, batch kept for resending: " + code.toString() + " " + message);
  }

  /** The hub answered a call: batches waiting in the retry buffers go now. */
  onHubReachable(): void {
    this.httpReports.hubReachable();
    this.resendDue(this.httpReports, 0);
    const tcp = this.tcp;
    if (tcp !== null) {
      tcp.reportChannel.hubReachable();
      this.resendDue(tcp.reportChannel, 0);
    }
  }

  private resendDue(channel: ReportChannel, now: i64): void {
    if (!channel.resendDue(now)) return;
    const batch = channel.buffer.takeOldest();
    if (batch !== null) this.sendReport(channel, batch.message, batch.entries, true);
  }

  private resendAll(channel: ReportChannel): void {
    let batch = channel.buffer.takeOldest();
    while (batch !== null) {
      this.sendReport(channel, batch.message, batch.entries, true);
      batch = channel.buffer.takeOldest();
    }
  }

  onTick(): void {
    if (this.config === null) return;
    const now = host.nowNanos();
    if (this.draining) {
      if (!this.finished && now >= this.drainDeadlineNanos) this.finishDrain(true);
      return;
    }
    if (this.reports.isDue(now)) this.flushReports();
    this.resendDue(this.httpReports, now);
    const tcp = this.tcp;
    if (tcp !== null) this.resendDue(tcp.reportChannel, now);
    this.quotaCache.removeIdle(now);
    if (now - this.lastStatsNanos >= (this.config as ClientConfig).transport.statsUpdateIntervalNanos) this.publishCounters(now);
  }

  /**
   * proxy_on_done of the root context: sends what the batches and retry
   * buffers hold; true when nothing is in flight, else false — the host keeps
   * the context until `proxy_done`, which comes when the last batch is
   * answered or SHUTDOWN_REPORT_WAIT has passed.
   */
  onDone(): bool {
    if (this.config === null || this.finished) return true;
    if (this.draining) return false;
    this.flushReports();
    this.flushTcpReports();
    this.draining = true;
    this.resendAll(this.httpReports);
    const tcp = this.tcp;
    if (tcp !== null) this.resendAll(tcp.reportChannel);
    // No stream or connection outlives its root: retries waiting are abandoned.
    const abandoned = this.retries.takeAll();
    for (let i = 0; i < abandoned.length; i++) this.countersFor(abandoned[i].kind).recordRemoteCallCancelled();
    const now = host.nowNanos();
    if (this.reportCallsInFlight() == 0) {
      this.finished = true;
      this.publishCounters(now);
      return true;
    }
    this.drainDeadlineNanos = now + SHUTDOWN_REPORT_WAIT_NANOS;
    this.armTimer(now);
    return false;
  }

  countersFor(kind: CallKind): ClientCounters {
    const tcp = this.tcp;
    if (tcp !== null && (kind == CallKind.ConnectionCheck || kind == CallKind.ConnectionPrefetch || kind == CallKind.ConnectionReport)) return tcp.counters;
    return this.counters;
  }

  private reportCallsInFlight(): i32 {
    const tcp = this.tcp;
    return this.httpReports.inFlight + (tcp !== null ? tcp.reportChannel.inFlight : 0);
  }

  private finishDrainIfIdle(): void {
    if (!this.finished && this.reportCallsInFlight() == 0) this.finishDrain(false);
  }

  // The root is done: what is still in flight after the wait is counted as
  // dropped, the counters are published a last time, and the host is told.
  private finishDrain(timedOut: bool): void {
    if (timedOut) {
      const calls = this.pending.values();
      for (let i = 0; i < calls.length; i++) {
        const c = calls[i];
        if (c.channel !== null) c.channel!.counters.recordReportsDropped(c.reportEntries);
      }
      host.log(LogLevel.Warn, "shutdown: the hub did not answer the last report batches in time");
    }
    this.finished = true;
    this.publishCounters(host.nowNanos());
    host.done();
  }

  /** Copies the counters' growth since the last publication to the proxy's metrics. */
  publishCounters(now: i64): void {
    for (let i = 0; i < COUNTER_COUNT; i++) {
      const id = this.metricIds[i];
      const delta = this.counters.takeDelta(i);
      if (id >= 0) host.incrementCounter(<u32>id, delta);
    }
    this.lastStatsNanos = now;
    const tcp = this.tcp;
    if (tcp !== null) tcp.publishCounters(now);
  }
}
