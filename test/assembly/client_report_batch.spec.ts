// Report batching (hub-client §6.3; upstream report_batch.cc, report_batch_test.cc):
// flushed by size at once, or by the timer the first entry arms. Reports are
// encoded as they are added; a message never grows past the batch's byte limit.
import { AttributeBag } from "../../assembly/attributes/bag";
import {
  DEFAULT_REPORT_BATCH_MAX_ENTRIES,
  DEFAULT_REPORT_BATCH_MAX_TIME_NANOS,
  REPORT_MESSAGE_MAX_BYTES,
  ReportBatch,
  resolveReportBatchMaxEntries,
  resolveReportBatchMaxTimeNanos,
} from "../../assembly/client/report_batch";
import { BufferedReport } from "../../assembly/client/report_buffer";
import { GLOBAL_WORDS } from "../../assembly/hub/global_words";
import { ProtoReader } from "../../assembly/proto/reader";

const MS: i64 = 1_000_000;
const S: i64 = 1_000_000_000;
const T0: i64 = 1_700_000_000 * S;

function report(id: string): AttributeBag {
  const b = new AttributeBag();
  b.setString("request.id", id);
  return b;
}

function word(index: i32, words: Array<string>): string {
  return index >= 0 ? GLOBAL_WORDS[index] : words[-index - 1];
}

/** Each entry of an encoded ReportRequest as its string attributes, `name=value` joined by commas. */
function entriesOf(message: Uint8Array): Array<string> {
  const words = new Array<string>();
  const top = new ProtoReader(message);
  while (top.next()) {
    if (top.field == 2) words.push(top.string());
    else top.skip();
  }
  const out = new Array<string>();
  const r = new ProtoReader(message);
  while (r.next()) {
    if (r.field != 1) {
      r.skip();
      continue;
    }
    const attributes = r.message();
    const pairs = new Array<string>();
    while (attributes.next()) {
      if (attributes.field != 2) {
        attributes.skip();
        continue;
      }
      const e = attributes.message();
      let key = 0;
      let value = 0;
      while (e.next()) {
        if (e.field == 1) key = e.sint32();
        else if (e.field == 2) value = e.sint32();
        else e.skip();
      }
      pairs.push(word(key, words) + "=" + word(value, words));
    }
    out.push(pairs.join(","));
  }
  return out;
}

function allEntries(messages: Array<BufferedReport>): Array<string> {
  const out = new Array<string>();
  for (let i = 0; i < messages.length; i++) {
    const entries = entriesOf(messages[i].message);
    expect(entries.length).toBe(messages[i].entries);
    for (let j = 0; j < entries.length; j++) out.push(entries[j]);
  }
  return out;
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
    expect(sent.length).toBe(1); // one ReportRequest
    expect(allEntries(sent)).toStrictEqual(["request.id=r0", "request.id=r1", "request.id=r2"]);
    expect(b.size).toBe(0);
    expect(b.dueAt()).toBe(-1);
    expect(b.take().length).toBe(0); // flushing an empty batch sends nothing
  });

  it("encodes each report when it is added: the bag may be reused at once", () => {
    const b = new ReportBatch(10, S);
    const bag = report("first");
    b.add(bag, T0);
    bag.setString("request.id", "second");
    b.add(bag, T0);
    expect(allEntries(b.take())).toStrictEqual(["request.id=first", "request.id=second"]);
  });

  it("closes a message before it grows past the byte limit; the batch is then sent as several", () => {
    // Each report carries a word of its own (~110 bytes with its entry): three fit in 400 bytes, a fourth does not.
    const b = new ReportBatch(5, S, 400);
    const long = "x".repeat(100);
    const full: bool[] = [];
    for (let i = 0; i < 5; i++) full.push(b.add(report(long + i.toString()), T0));
    expect(full).toStrictEqual([false, false, false, false, true]);
    expect(b.size).toBe(5);
    const sent = b.take();
    expect(sent.length).toBe(2);
    expect(sent[0].entries).toBe(3);
    expect(sent[1].entries).toBe(2);
    expect(sent[0].message.length).toBeLessThanOrEqual(400);
    // The report that did not fit left no word behind in the closed message.
    expect(allEntries(sent)).toStrictEqual([
      "request.id=" + long + "0", "request.id=" + long + "1", "request.id=" + long + "2", "request.id=" + long + "3", "request.id=" + long + "4",
    ]);
    expect(String.UTF8.decode(sent[0].message.buffer).includes(long + "3")).toBe(false);
  });

  it("sends one report larger than the limit alone", () => {
    const b = new ReportBatch(100, S, 64);
    expect(b.add(report("y".repeat(200)), T0)).toBe(false);
    expect(b.add(report("small"), T0)).toBe(false);
    const sent = b.take();
    expect(sent.length).toBe(2);
    expect(sent[0].entries).toBe(1);
    expect(sent[0].message.length).toBeGreaterThan(64);
    expect(allEntries(sent)).toStrictEqual(["request.id=" + "y".repeat(200), "request.id=small"]);
    expect(REPORT_MESSAGE_MAX_BYTES).toBe(512 * 1024);
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
    expect(allEntries(b.take()).length).toBe(2);
    expect(b.isDue(T0 + 2 * S)).toBe(false);
    b.add(report("c"), T0 + 3 * S); // the next batch re-arms
    expect(b.dueAt()).toBe(T0 + 4 * S);
  });

  it("disabled batching (1 entry) sends every report at once", () => {
    const b = new ReportBatch(resolveReportBatchMaxEntries(0, true), S);
    for (let i = 0; i < 3; i++) {
      expect(b.add(report("r"), T0)).toBe(true);
      expect(allEntries(b.take()).length).toBe(1);
    }
  });
});
