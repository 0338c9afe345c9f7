// Report batches the hub could not take (a transport failure), kept to be
// sent again when the hub is back. Bounded by entries (reported requests)
// and bytes (encoded ReportRequests): to make room the oldest batches go
// first, and what is dropped is returned so the caller counts it
// (`hub_client.report_dropped`) — nothing is lost silently. Pure: the
// caller decides when to resend (report_channel.ts).

import { DEFAULT_REPORT_BUFFER_MAX_BYTES, DEFAULT_REPORT_BUFFER_MAX_ENTRIES } from "../config/client_config";

/** One encoded ReportRequest and how many reports it carries. */
export class BufferedReport {
  constructor(
    public message: Uint8Array,
    public entries: i32,
  ) {}
}

export class ReportBuffer {
  private batches: Array<BufferedReport> = [];
  private entryCount: i64 = 0;
  private byteCount: i64 = 0;

  constructor(
    public maxEntries: u32 = DEFAULT_REPORT_BUFFER_MAX_ENTRIES,
    public maxBytes: u32 = DEFAULT_REPORT_BUFFER_MAX_BYTES,
  ) {}

  get entries(): i64 {
    return this.entryCount;
  }

  get bytes(): i64 {
    return this.byteCount;
  }

  get isEmpty(): bool {
    return this.batches.length == 0;
  }

  /**
   * Keeps a failed batch (newest last); returns how many reports were
   * dropped to stay within the bounds — older batches first, or this one
   * when it alone exceeds them.
   */
  add(batch: BufferedReport): i64 {
    return this.insert(batch, false);
  }

  /** Puts back a batch taken with `takeOldest` whose resend failed (oldest first again). */
  restore(batch: BufferedReport): i64 {
    return this.insert(batch, true);
  }

  /** The oldest batch, removed; null when empty. */
  takeOldest(): BufferedReport | null {
    if (this.batches.length == 0) return null;
    const b = this.batches.shift();
    this.entryCount -= b.entries;
    this.byteCount -= b.message.length;
    return b;
  }

  /** Changes the bounds (a new configuration); returns the reports dropped to meet them. */
  resize(maxEntries: u32, maxBytes: u32): i64 {
    this.maxEntries = maxEntries;
    this.maxBytes = maxBytes;
    return this.shrinkTo(0, 0);
  }

  private insert(batch: BufferedReport, front: bool): i64 {
    if (<i64>batch.entries > <i64>this.maxEntries || <i64>batch.message.length > <i64>this.maxBytes) return batch.entries;
    let dropped = this.shrinkTo(batch.entries, batch.message.length);
    if (front) this.batches.unshift(batch);
    else this.batches.push(batch);
    this.entryCount += batch.entries;
    this.byteCount += batch.message.length;
    return dropped;
  }

  // Drops the oldest batches until `entries` and `bytes` more fit.
  private shrinkTo(entries: i64, bytes: i64): i64 {
    let dropped: i64 = 0;
    while (
      this.batches.length > 0 &&
      (this.entryCount + entries > <i64>this.maxEntries || this.byteCount + bytes > <i64>this.maxBytes)
    ) {
      const b = this.batches.shift();
      this.entryCount -= b.entries;
      this.byteCount -= b.message.length;
      dropped += b.entries;
    }
    return dropped;
  }
}
