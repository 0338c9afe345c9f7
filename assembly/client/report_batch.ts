// Report batching (hub-client §6.3; upstream src/istio/mixerclient/report_batch.cc):
// reports are collected and sent together when the batch reaches
// `maxEntries` (at once) or when the timer armed by the batch's first entry
// fires (`maxTimeNanos` later). Pure: the caller owns the timer and the
// transport — it flushes when `add` returns true, and from its tick when
// `isDue(now)`; it also flushes on shutdown. Reports are fire-and-forget.
//
// Defaults 100 entries / 1 s; a configured 0 means the default
// (`resolveReportBatch*`); `disableReportBatch` = 1 entry, i.e. every report
// is sent at once (upstream: 0 entries, which behaves the same).
import { AttributeBag } from "../attributes/bag";

export const DEFAULT_REPORT_BATCH_MAX_ENTRIES: i32 = 100;
export const DEFAULT_REPORT_BATCH_MAX_TIME_NANOS: i64 = 1_000_000_000;

/** `reportBatchMaxEntries` as configured (0 or negative = unset) → effective. */
export function resolveReportBatchMaxEntries(configured: i32, disabled: bool): i32 {
  if (disabled) return 1;
  return configured > 0 ? configured : DEFAULT_REPORT_BATCH_MAX_ENTRIES;
}

/** `reportBatchMaxTime` in nanoseconds as configured (0 or negative = unset) → effective. */
export function resolveReportBatchMaxTimeNanos(configured: i64): i64 {
  return configured > 0 ? configured : DEFAULT_REPORT_BATCH_MAX_TIME_NANOS;
}

export class ReportBatch {
  private entries: Array<AttributeBag> = [];
  private firstAt: i64 = -1;

  constructor(
    public readonly maxEntries: i32 = DEFAULT_REPORT_BATCH_MAX_ENTRIES,
    public readonly maxTimeNanos: i64 = DEFAULT_REPORT_BATCH_MAX_TIME_NANOS,
  ) {}

  get size(): i32 {
    return this.entries.length;
  }

  /** Adds one report; true when the batch is full and must be flushed now. */
  add(bag: AttributeBag, nowNanos: i64): bool {
    if (this.entries.length == 0) this.firstAt = nowNanos;
    this.entries.push(bag);
    return this.entries.length >= this.maxEntries;
  }

  /** When the first entry's timer fires, or -1 when the batch is empty. */
  dueAt(): i64 {
    if (this.entries.length == 0) return -1;
    const at = this.firstAt + this.maxTimeNanos;
    return at < this.firstAt ? i64.MAX_VALUE : at;
  }

  isDue(nowNanos: i64): bool {
    return this.entries.length > 0 && nowNanos >= this.dueAt();
  }

  /** The batched reports, oldest first; the batch is left empty (send nothing if none). */
  take(): Array<AttributeBag> {
    const out = this.entries;
    this.entries = [];
    this.firstAt = -1;
    return out;
  }
}
