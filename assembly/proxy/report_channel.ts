import { ClientCounters } from "../client/counters";
import { ReportBuffer } from "../client/report_buffer";

/** First wait before a buffered batch is tried again while the hub stays unreachable. */
export const REPORT_RESEND_MIN_WAIT_NANOS: i64 = 1_000_000_000;
/** Longest such wait (the wait doubles after every failed try). */
export const REPORT_RESEND_MAX_WAIT_NANOS: i64 = 8_000_000_000;

/**
 * Where one hub client's report batches go (HTTP and TCP have one each):
 * the cluster, the counters, the calls in flight and the retry buffer of
 * batches the hub could not take. While the buffer holds batches, the oldest
 * is tried again — one at a time, after REPORT_RESEND_MIN_WAIT doubling to
 * REPORT_RESEND_MAX_WAIT while it keeps failing, and at once whenever the hub
 * answered anything (it is back). The sending itself is the plugin's.
 */
export class ReportChannel {
  buffer: ReportBuffer = new ReportBuffer();
  /** Report calls in flight (fresh batches and resends). */
  inFlight: i32 = 0;
  /** A buffered batch is in flight: the next one waits for its answer. */
  resending: bool = false;
  nextResendNanos: i64 = 0;
  resendWaitNanos: i64 = REPORT_RESEND_MIN_WAIT_NANOS;

  constructor(
    public cluster: string,
    public counters: ClientCounters,
    /** The TCP client's channel (its calls are CallKind.ConnectionReport). */
    public readonly tcp: bool,
  ) {}

  /** A buffered batch should be tried now. */
  resendDue(nowNanos: i64): bool {
    return !this.resending && !this.buffer.isEmpty && nowNanos >= this.nextResendNanos;
  }

  /** The hub answered: buffered batches go at once, with the shortest wait again. */
  hubReachable(): void {
    this.nextResendNanos = 0;
    this.resendWaitNanos = REPORT_RESEND_MIN_WAIT_NANOS;
  }

  /** A resend failed: wait longer before the next one. */
  resendFailed(nowNanos: i64): void {
    this.nextResendNanos = nowNanos + this.resendWaitNanos;
    this.resendWaitNanos = min<i64>(this.resendWaitNanos * 2, REPORT_RESEND_MAX_WAIT_NANOS);
  }
}
