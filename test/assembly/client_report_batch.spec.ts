// Report batching (hub-client §6.3; upstream report_batch.cc, report_batch_test.cc):
// flushed by size at once, or by the timer the first entry arms.
import { AttributeBag } from "../../assembly/attributes/bag";
import {
  DEFAULT_REPORT_BATCH_MAX_ENTRIES,
  DEFAULT_REPORT_BATCH_MAX_TIME_NANOS,
  ReportBatch,
  resolveReportBatchMaxEntries,
  resolveReportBatchMaxTimeNanos,
} from "../../assembly/client/report_batch";

const MS: i64 = 1_000_000;
const S: i64 = 1_000_000_000;
const T0: i64 = 1_700_000_000 * S;

function report(id: string): AttributeBag {
  const b = new AttributeBag();
  b.setString("request.id", id);
  return b;
}

describe("ReportBatch", () => {
  it("defaults: 100 entries / 1 s; 0 means default; disabled = 1 entry", () => {
    const b = new ReportBatch();
    expect(b.maxEntries).toBe(100);
    expect(b.maxTimeNanos).toBe(S);
    expect(resolveReportBatchMaxEntries(0, false)).toBe(DEFAULT_REPORT_BATCH_MAX_ENTRIES);
    expect(resolveReportBatchMaxEntries(-3, false)).toBe(DEFAULT_REPORT_BATCH_MAX_ENTRIES);
    expect(resolveReportBatchMaxEntries(7, false)).toBe(7);
    expect(resolveReportBatchMaxEntries(7, true)).toBe(1);
    expect(resolveReportBatchMaxTimeNanos(0)).toBe(DEFAULT_REPORT_BATCH_MAX_TIME_NANOS);
    expect(resolveReportBatchMaxTimeNanos(250 * MS)).toBe(250 * MS);
  });

  it("flushes by size: the add that fills the batch returns true", () => {
    const b = new ReportBatch(3, S);
    const full: bool[] = [];
    for (let i = 0; i < 3; i++) full.push(b.add(report("r" + i.toString()), T0 + <i64>i * MS));
    expect(full).toStrictEqual([false, false, true]);
    const sent = b.take();
    expect(sent.length).toBe(3);
    expect(sent[0].getString("request.id")).toBe("r0");
    expect(sent[2].getString("request.id")).toBe("r2");
    expect(b.size).toBe(0);
    expect(b.dueAt()).toBe(-1);
    expect(b.take().length).toBe(0); // flushing an empty batch sends nothing
  });

  it("flushes by time: the first entry arms the timer, later ones do not move it", () => {
    const b = new ReportBatch(100, S);
    expect(b.dueAt()).toBe(-1);
    expect(b.isDue(T0)).toBe(false);
    b.add(report("a"), T0);
    b.add(report("b"), T0 + 600 * MS);
    expect(b.dueAt()).toBe(T0 + S);
    expect(b.isDue(T0 + S - 1)).toBe(false);
    expect(b.isDue(T0 + S)).toBe(true);
    expect(b.take().length).toBe(2);
    expect(b.isDue(T0 + 2 * S)).toBe(false);
    b.add(report("c"), T0 + 3 * S); // the next batch re-arms
    expect(b.dueAt()).toBe(T0 + 4 * S);
  });

  it("disabled batching (1 entry) sends every report at once", () => {
    const b = new ReportBatch(resolveReportBatchMaxEntries(0, true), S);
    for (let i = 0; i < 3; i++) {
      expect(b.add(report("r"), T0)).toBe(true);
      expect(b.take().length).toBe(1);
    }
  });
});
