// The pieces of the module's own retries and report buffering: which
// statuses are retried, the jitter source, the retry queue and the bounded
// report retry buffer.
import { isRetryableStatus, retryDelayNanos } from "../../assembly/client/backoff";
import { Jitter } from "../../assembly/client/jitter";
import { BufferedReport, ReportBuffer } from "../../assembly/client/report_buffer";
import { RetryQueue } from "../../assembly/client/retry_queue";

function batch(entries: i32, bytes: i32): BufferedReport {
  return new BufferedReport(new Uint8Array(bytes), entries);
}

describe("isRetryableStatus", () => {
  it("retries exactly CANCELLED, UNKNOWN, DEADLINE_EXCEEDED, ABORTED, INTERNAL, UNAVAILABLE", () => {
    const retried: i32[] = [1, 2, 4, 10, 13, 14];
    for (let code = 0; code <= 16; code++) expect(isRetryableStatus(code)).toBe(retried.includes(code), code.toString());
  });
});

describe("Jitter", () => {
  it("draws in [0, 1), differs by seed, repeats for the same seed", () => {
    const a = new Jitter(42);
    const b = new Jitter(42);
    const c = new Jitter(43);
    let same = 0;
    for (let i = 0; i < 1000; i++) {
      const x = a.next01();
      expect(x >= 0 && x < 1).toBe(true);
      expect(b.next01()).toBe(x);
      if (c.next01() == x) same++;
    }
    expect(same).toBe(0);
  });

  it("spreads backoff over the whole jitter range", () => {
    const j = new Jitter(7);
    let low = false;
    let high = false;
    for (let i = 0; i < 200; i++) {
      const d = retryDelayNanos(2, 80_000_000, 1_000_000_000, j.next01());
      expect(d >= 80_000_000 && d <= 320_000_000).toBe(true);
      if (d < 120_000_000) low = true;
      if (d > 280_000_000) high = true;
    }
    expect(low && high).toBe(true);
  });
});

describe("RetryQueue", () => {
  it("hands out what is due, in order, and tells the next due time", () => {
    const q = new RetryQueue<i32>();
    expect(q.nextDue()).toBe(-1);
    q.schedule(1, 300);
    q.schedule(2, 100);
    q.schedule(3, 100);
    expect(q.nextDue()).toBe(100);
    expect(q.takeDue(99).length).toBe(0);
    expect(q.takeDue(100)).toStrictEqual([2, 3]);
    expect(q.nextDue()).toBe(300);
    expect(q.takeAll()).toStrictEqual([1]);
    expect(q.size).toBe(0);
  });
});

describe("ReportBuffer", () => {
  it("keeps batches within entries and bytes, dropping the oldest first", () => {
    const b = new ReportBuffer(10, 1000);
    expect(b.add(batch(4, 100))).toBe(0);
    expect(b.add(batch(4, 100))).toBe(0);
    expect(b.add(batch(4, 100))).toBe(4); // 12 entries > 10: the oldest goes
    expect(b.entries).toBe(8);
    expect(b.add(batch(1, 950))).toBe(8); // bytes: 100 + 950 > 1000 too: both older batches go
    expect(b.entries).toBe(1);
    expect(b.bytes).toBe(950);
  });

  it("drops a batch that alone exceeds the bounds, and keeps nothing with 0", () => {
    const b = new ReportBuffer(10, 1000);
    expect(b.add(batch(11, 10))).toBe(11);
    expect(b.add(batch(1, 1001))).toBe(1);
    expect(b.isEmpty).toBe(true);
    const none = new ReportBuffer(0, 0);
    expect(none.add(batch(1, 1))).toBe(1);
  });

  it("hands batches back oldest first; a failed resend goes back in front", () => {
    const b = new ReportBuffer(100, 10000);
    b.add(batch(1, 10));
    b.add(batch(2, 20));
    const first = b.takeOldest()!;
    expect(first.entries).toBe(1);
    expect(b.restore(first)).toBe(0);
    expect(b.takeOldest()!.entries).toBe(1);
    expect(b.takeOldest()!.entries).toBe(2);
    expect(b.takeOldest()).toBeNull();
  });

  it("resize drops the oldest to meet new bounds", () => {
    const b = new ReportBuffer(100, 10000);
    b.add(batch(5, 10));
    b.add(batch(5, 10));
    expect(b.resize(6, 10000)).toBe(5);
    expect(b.entries).toBe(5);
  });
});
