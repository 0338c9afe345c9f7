// Report batching (hub-client §6.3; upstream src/istio/mixerclient/report_batch.cc):
// reports are collected and sent together when the batch reaches
// `maxEntries` (at once) or when the timer armed by the batch's first entry
// fires (`maxTimeNanos` later). Pure: the caller owns the timer and the
// transport — it flushes when `add` returns true, and from its tick when
// `isDue(now)`; it also flushes on shutdown. Reports are fire-and-forget.
//
// Each report is encoded into the batch's ReportRequest when it is added
// (the bag is not kept: its request may reuse it at once), so sending the
// batch only closes the message. A message stays within `maxBytes`: a
// report that would make it longer closes it and starts the next one of the
// same batch, which is then sent as several messages.
//
// Defaults 100 entries / 1 s; a configured 0 means the default
// (`resolveReportBatch*`); `disableReportBatch` = 1 entry, i.e. every report
// is sent at once (upstream: 0 entries, which behaves the same).
import { AttributeBag } from "../attributes/bag";
import { GLOBAL_WORD_COUNT } from "../hub/global_words";
import { ReportRequestEncoder } from "../hub/report_request";
import { BufferedReport } from "./report_buffer";

export const DEFAULT_REPORT_BATCH_MAX_ENTRIES: i32 = 100;
export const DEFAULT_REPORT_BATCH_MAX_TIME_NANOS: i64 = 1_000_000_000;
/**
 * Largest ReportRequest the module sends: half the hub's default
 * --maxMessageSize (1 MiB), so a batch of requests with large headers is
 * never refused for its size. One report larger than this goes alone.
 */
export const REPORT_MESSAGE_MAX_BYTES: i32 = 512 * 1024;

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
  private encoder: ReportRequestEncoder = new ReportRequestEncoder();
  /** Messages closed by size, waiting for the flush `add` asked for. */
  private closed: Array<BufferedReport> = [];
  private closedEntries: i32 = 0;
  private firstAt: i64 = -1;

  constructor(
    public readonly maxEntries: i32 = DEFAULT_REPORT_BATCH_MAX_ENTRIES,
    public readonly maxTimeNanos: i64 = DEFAULT_REPORT_BATCH_MAX_TIME_NANOS,
    public readonly maxBytes: i32 = REPORT_MESSAGE_MAX_BYTES,
    private readonly globalWordCount: i32 = GLOBAL_WORD_COUNT,
  ) {
    this.encoder.begin(globalWordCount);
  }

  /** Reports held (not yet taken). */
  get size(): i32 {
    return this.closedEntries + this.encoder.entries;
  }

  /** Encodes one report into the batch; true when the batch is full and must be sent now. */
  // @ts-ignore: decorator
  @inline add(bag: AttributeBag, nowNanos: i64): bool {
    if (this.size == 0) this.firstAt = nowNanos;
    const encoder = this.encoder;
    if (!encoder.append(bag, this.maxBytes)) {
      const entries = encoder.entries;
      this.closed.push(new BufferedReport(encoder.finish(), entries));
      this.closedEntries += entries;
      encoder.begin(this.globalWordCount);
      encoder.append(bag, this.maxBytes);
    }
    return this.size >= this.maxEntries;
  }

  /** When the first entry's timer fires, or -1 when the batch is empty. */
  dueAt(): i64 {
    if (this.size == 0) return -1;
    const at = this.firstAt + this.maxTimeNanos;
    return at < this.firstAt ? i64.MAX_VALUE : at;
  }

  isDue(nowNanos: i64): bool {
    return this.size > 0 && nowNanos >= this.dueAt();
  }

  /** The batched reports as encoded ReportRequests (with how many reports each carries), oldest first; the batch is left empty (nothing to send if none). */
  take(): Array<BufferedReport> {
    const out = this.closed;
    const encoder = this.encoder;
    const entries = encoder.entries;
    if (entries > 0) {
      out.push(new BufferedReport(encoder.finish(), entries));
      encoder.begin(this.globalWordCount);
    }
    this.closed = [];
    this.closedEntries = 0;
    this.firstAt = -1;
    return out;
  }
}
