// The hub client's counters (hub-client §6.5; upstream src/envoy/utils/stats.h
// and client_impl.cc), in one place. The ABI layer publishes them generically
// by index (`names()`, `valueAt(i)`) every `statsUpdateInterval`, prefixed
// `http_mixer_filter.`-style by the caller; proxy counters only grow by
// increments, hence `takeDelta`.
//
// The `record*` methods follow upstream's accounting so its invariants hold:
//   check_calls = check_cache_hits + check_cache_misses
//   check_cache_hits = hit_accepts + hit_denies   (same for quota)
//   remote_check_calls = check_cache_misses
//   remote_quota_calls = quota_cache_misses + remote_quota_prefetch_calls
//   remote_calls = successes + timeouts + send_errors + other_errors
// A remote call counts one outcome however many retries it took (retries are
// counted apart); a cancelled call counts a cancellation and an other error.

/** Outcome of one hub call, as classified by `transportOutcome`. */
export const enum TransportOutcome {
  Success = 0,
  Timeout = 1,
  SendError = 2,
  Other = 3,
}

/** google.rpc.Code UNAVAILABLE. */
const UNAVAILABLE: i32 = 14;

/**
 * Classifies a gRPC status of a hub call (hub-client §6.4): OK is a success;
 * UNAVAILABLE with Envoy's timeout or connect-failure text is a timeout or a
 * send error; anything else is "other".
 */
export function transportOutcome(code: i32, message: string): TransportOutcome {
  if (code == 0) return TransportOutcome.Success;
  if (code == UNAVAILABLE) {
    if (message.startsWith("upstream request timeout")) return TransportOutcome.Timeout;
    if (message.startsWith("upstream connect error or disconnect/reset before headers")) return TransportOutcome.SendError;
  }
  return TransportOutcome.Other;
}

const COUNTER_NAMES: StaticArray<string> = [
  "total_check_calls",
  "total_check_cache_hits",
  "total_check_cache_misses",
  "total_check_cache_hit_accepts",
  "total_check_cache_hit_denies",
  "total_remote_check_calls",
  "total_remote_check_accepts",
  "total_remote_check_denies",
  "total_quota_calls",
  "total_quota_cache_hits",
  "total_quota_cache_misses",
  "total_quota_cache_hit_accepts",
  "total_quota_cache_hit_denies",
  "total_remote_quota_calls",
  "total_remote_quota_accepts",
  "total_remote_quota_denies",
  "total_remote_quota_prefetch_calls",
  "total_remote_calls",
  "total_remote_call_successes",
  "total_remote_call_timeouts",
  "total_remote_call_send_errors",
  "total_remote_call_other_errors",
  "total_remote_call_retries",
  "total_remote_call_cancellations",
  "total_report_calls",
  "total_remote_report_calls",
  "total_remote_report_successes",
  "total_remote_report_timeouts",
  "total_remote_report_send_errors",
  "total_remote_report_other_errors",
  "report_dropped",
  "forwarded_attributes_dropped",
];

export const COUNTER_COUNT: i32 = 32;

export class ClientCounters {
  totalCheckCalls: i64 = 0;
  totalCheckCacheHits: i64 = 0;
  totalCheckCacheMisses: i64 = 0;
  totalCheckCacheHitAccepts: i64 = 0;
  totalCheckCacheHitDenies: i64 = 0;
  totalRemoteCheckCalls: i64 = 0;
  totalRemoteCheckAccepts: i64 = 0;
  totalRemoteCheckDenies: i64 = 0;
  totalQuotaCalls: i64 = 0;
  totalQuotaCacheHits: i64 = 0;
  totalQuotaCacheMisses: i64 = 0;
  totalQuotaCacheHitAccepts: i64 = 0;
  totalQuotaCacheHitDenies: i64 = 0;
  totalRemoteQuotaCalls: i64 = 0;
  totalRemoteQuotaAccepts: i64 = 0;
  totalRemoteQuotaDenies: i64 = 0;
  totalRemoteQuotaPrefetchCalls: i64 = 0;
  totalRemoteCalls: i64 = 0;
  totalRemoteCallSuccesses: i64 = 0;
  totalRemoteCallTimeouts: i64 = 0;
  totalRemoteCallSendErrors: i64 = 0;
  totalRemoteCallOtherErrors: i64 = 0;
  totalRemoteCallRetries: i64 = 0;
  totalRemoteCallCancellations: i64 = 0;
  totalReportCalls: i64 = 0;
  totalRemoteReportCalls: i64 = 0;
  totalRemoteReportSuccesses: i64 = 0;
  totalRemoteReportTimeouts: i64 = 0;
  totalRemoteReportSendErrors: i64 = 0;
  totalRemoteReportOtherErrors: i64 = 0;
  /** Reports lost: the retry buffer overflowed, the hub refused them, or shutdown ended before they were sent. */
  reportDropped: i64 = 0;
  /** Forwarded attributes (or whole x-mesh-attributes headers) ignored as malformed, invalid UTF-8 or over the bounds. */
  forwardedAttributesDropped: i64 = 0;

  /** Values at the last `takeDelta`/`markPublished`, by index. */
  private readonly published: StaticArray<i64> = new StaticArray<i64>(COUNTER_COUNT);

  /** Counter names without prefix, index-aligned with `valueAt`. */
  names(): StaticArray<string> {
    return COUNTER_NAMES;
  }

  get count(): i32 {
    return COUNTER_COUNT;
  }

  valueAt(i: i32): i64 {
    switch (i) {
      case 0:
        return this.totalCheckCalls;
      case 1:
        return this.totalCheckCacheHits;
      case 2:
        return this.totalCheckCacheMisses;
      case 3:
        return this.totalCheckCacheHitAccepts;
      case 4:
        return this.totalCheckCacheHitDenies;
      case 5:
        return this.totalRemoteCheckCalls;
      case 6:
        return this.totalRemoteCheckAccepts;
      case 7:
        return this.totalRemoteCheckDenies;
      case 8:
        return this.totalQuotaCalls;
      case 9:
        return this.totalQuotaCacheHits;
      case 10:
        return this.totalQuotaCacheMisses;
      case 11:
        return this.totalQuotaCacheHitAccepts;
      case 12:
        return this.totalQuotaCacheHitDenies;
      case 13:
        return this.totalRemoteQuotaCalls;
      case 14:
        return this.totalRemoteQuotaAccepts;
      case 15:
        return this.totalRemoteQuotaDenies;
      case 16:
        return this.totalRemoteQuotaPrefetchCalls;
      case 17:
        return this.totalRemoteCalls;
      case 18:
        return this.totalRemoteCallSuccesses;
      case 19:
        return this.totalRemoteCallTimeouts;
      case 20:
        return this.totalRemoteCallSendErrors;
      case 21:
        return this.totalRemoteCallOtherErrors;
      case 22:
        return this.totalRemoteCallRetries;
      case 23:
        return this.totalRemoteCallCancellations;
      case 24:
        return this.totalReportCalls;
      case 25:
        return this.totalRemoteReportCalls;
      case 26:
        return this.totalRemoteReportSuccesses;
      case 27:
        return this.totalRemoteReportTimeouts;
      case 28:
        return this.totalRemoteReportSendErrors;
      case 29:
        return this.totalRemoteReportOtherErrors;
      case 30:
        return this.reportDropped;
      case 31:
        return this.forwardedAttributesDropped;
      default:
        return 0;
    }
  }

  /** Increase of counter `i` since it was last published. */
  deltaAt(i: i32): i64 {
    if (i < 0 || i >= COUNTER_COUNT) return 0;
    return this.valueAt(i) - unchecked(this.published[i]);
  }

  /** Returns the increase of counter `i` and records its value as published. */
  takeDelta(i: i32): i64 {
    if (i < 0 || i >= COUNTER_COUNT) return 0;
    const value = this.valueAt(i);
    const delta = value - unchecked(this.published[i]);
    unchecked((this.published[i] = value));
    return delta;
  }

  /** Records every current value as published. */
  markPublished(): void {
    for (let i = 0; i < COUNTER_COUNT; i++) unchecked((this.published[i] = this.valueAt(i)));
  }

  // Check path (client_impl.cc MixerClientImpl::Check).

  /** A check answered from the check cache (`accepted`: status OK). */
  recordCheckCacheHit(accepted: bool): void {
    this.totalCheckCalls++;
    this.totalCheckCacheHits++;
    if (accepted) this.totalCheckCacheHitAccepts++;
    else this.totalCheckCacheHitDenies++;
  }

  recordCheckCacheMiss(): void {
    this.totalCheckCalls++;
    this.totalCheckCacheMisses++;
  }

  /** A quota decided by the quota cache. */
  recordQuotaCacheHit(accepted: bool): void {
    this.totalQuotaCalls++;
    this.totalQuotaCacheHits++;
    if (accepted) this.totalQuotaCacheHitAccepts++;
    else this.totalQuotaCacheHitDenies++;
  }

  /** A quota sent in the blocking check (policy miss or quota cache disabled). */
  recordQuotaCacheMiss(): void {
    this.totalQuotaCalls++;
    this.totalQuotaCacheMisses++;
  }

  /**
   * One hub call sent: `check` when it carries a policy check (check-cache
   * miss), `quota` when it carries quotas, `prefetch` when it is a background
   * quota prefetch after a check-cache hit.
   */
  recordRemoteCall(check: bool, quota: bool, prefetch: bool): void {
    this.totalRemoteCalls++;
    if (check) this.totalRemoteCheckCalls++;
    if (quota || prefetch) this.totalRemoteQuotaCalls++;
    if (prefetch) this.totalRemoteQuotaPrefetchCalls++;
  }

  /** The final outcome of a hub call. */
  recordRemoteCallDone(outcome: TransportOutcome): void {
    switch (outcome) {
      case TransportOutcome.Success:
        this.totalRemoteCallSuccesses++;
        break;
      case TransportOutcome.Timeout:
        this.totalRemoteCallTimeouts++;
        break;
      case TransportOutcome.SendError:
        this.totalRemoteCallSendErrors++;
        break;
      default:
        this.totalRemoteCallOtherErrors++;
    }
  }

  recordRemoteCallRetry(): void {
    this.totalRemoteCallRetries++;
  }

  /**
   * A hub call abandoned because its stream went away: also its final
   * outcome (other error, as upstream's CANCELLED status), so do not record
   * `recordRemoteCallDone` for it.
   */
  recordRemoteCallCancelled(): void {
    this.totalRemoteCallCancellations++;
    this.totalRemoteCallOtherErrors++;
  }

  /** Policy result of a remote check (after fail policy). */
  recordRemoteCheckResult(accepted: bool): void {
    if (accepted) this.totalRemoteCheckAccepts++;
    else this.totalRemoteCheckDenies++;
  }

  /** Quota result of a remote call (blocking or prefetch). */
  recordRemoteQuotaResult(accepted: bool): void {
    if (accepted) this.totalRemoteQuotaAccepts++;
    else this.totalRemoteQuotaDenies++;
  }

  // Report path (report_batch.cc).

  recordReportCall(): void {
    this.totalReportCalls++;
  }

  /** One batch sent to the hub. */
  recordRemoteReportCall(): void {
    this.totalRemoteReportCalls++;
  }

  recordRemoteReportDone(outcome: TransportOutcome): void {
    switch (outcome) {
      case TransportOutcome.Success:
        this.totalRemoteReportSuccesses++;
        break;
      case TransportOutcome.Timeout:
        this.totalRemoteReportTimeouts++;
        break;
      case TransportOutcome.SendError:
        this.totalRemoteReportSendErrors++;
        break;
      default:
        this.totalRemoteReportOtherErrors++;
    }
  }

  recordReportsDropped(n: i64): void {
    if (n > 0) this.reportDropped += n;
  }

  recordForwardedAttributesDropped(n: i64): void {
    if (n > 0) this.forwardedAttributesDropped += n;
  }
}
