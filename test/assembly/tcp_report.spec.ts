// TCP report attributes (hub-client §7; upstream
// src/istio/control/tcp/attributes_builder.cc ExtractReportAttributes):
// byte deltas against the last `continue` report, totals, the event, the
// close-only duration and check error, destination from the upstream host.
import { AttributeBag } from "../../assembly/attributes/bag";
import { CheckOutcome } from "../../assembly/attributes/report";
import {
  addConnectionReportAttributes, ConnectionEvent, connectionEventName, ConnectionReport, ConnectionTraffic,
} from "../../assembly/attributes/tcp_report";
import { AttributeValue, ValueKind } from "../../assembly/attributes/value";

function int(bag: AttributeBag, name: string): i64 {
  const v = bag.get(name);
  expect(v).not.toBeNull(name);
  expect(v!.kind).toBe(ValueKind.Int64, name);
  return v!.int;
}

function reportOf(event: ConnectionEvent, traffic: ConnectionTraffic, check: CheckOutcome = new CheckOutcome(), upstream: string = ""): AttributeBag {
  const r = new ConnectionReport();
  r.event = event;
  r.timeNanos = 1_700_000_000_500_000_000;
  r.durationNanos = 3_250_000_000;
  r.upstreamAddress = upstream;
  const bag = new AttributeBag();
  bag.setString("context.protocol", "tcp");
  addConnectionReportAttributes(bag, r, traffic, check);
  return bag;
}

/** [received, sent, received_total, sent_total] of a report. */
function bytes(bag: AttributeBag): i64[] {
  return [
    int(bag, "connection.received.bytes"), int(bag, "connection.sent.bytes"),
    int(bag, "connection.received.bytes_total"), int(bag, "connection.sent.bytes_total"),
  ];
}

describe("addConnectionReportAttributes: byte deltas", () => {
  it("the open report carries the bytes so far and does not move the baseline", () => {
    const t = new ConnectionTraffic();
    t.receivedBytes = 100;
    t.sentBytes = 7;
    expect(bytes(reportOf(ConnectionEvent.Open, t))).toStrictEqual([100, 7, 100, 7]);
    expect(t.reportedReceivedBytes).toBe(0);
    expect(t.reportedSentBytes).toBe(0);
  });

  it("a continue report moves the baseline; the next delta is relative to it", () => {
    const t = new ConnectionTraffic();
    t.receivedBytes = 100;
    t.sentBytes = 40;
    reportOf(ConnectionEvent.Open, t);
    expect(bytes(reportOf(ConnectionEvent.Continue, t))).toStrictEqual([100, 40, 100, 40]);
    t.receivedBytes += 10;
    t.sentBytes += 5;
    expect(bytes(reportOf(ConnectionEvent.Continue, t))).toStrictEqual([10, 5, 110, 45]);
    expect(bytes(reportOf(ConnectionEvent.Continue, t))).toStrictEqual([0, 0, 110, 45]);
  });

  it("the close delta is relative to the last continue, and close does not move the baseline", () => {
    const t = new ConnectionTraffic();
    t.receivedBytes = 50;
    reportOf(ConnectionEvent.Continue, t);
    t.receivedBytes = 51;
    t.sentBytes = 9;
    expect(bytes(reportOf(ConnectionEvent.Close, t))).toStrictEqual([1, 9, 51, 9]);
    expect(t.reportedReceivedBytes).toBe(50);
  });

  it("a connection without a continue report has its whole traffic as the close delta", () => {
    const t = new ConnectionTraffic();
    t.receivedBytes = 3;
    t.sentBytes = 4;
    reportOf(ConnectionEvent.Open, t);
    expect(bytes(reportOf(ConnectionEvent.Close, t))).toStrictEqual([3, 4, 3, 4]);
  });
});

describe("addConnectionReportAttributes: event, time, duration, check error", () => {
  it("names the events open, continue and close", () => {
    expect(connectionEventName(ConnectionEvent.Open)).toBe("open");
    expect(connectionEventName(ConnectionEvent.Continue)).toBe("continue");
    expect(connectionEventName(ConnectionEvent.Close)).toBe("close");
    expect(reportOf(ConnectionEvent.Continue, new ConnectionTraffic()).getString("connection.event")).toBe("continue");
  });

  it("sets context.time on every report", () => {
    const time = reportOf(ConnectionEvent.Open, new ConnectionTraffic()).get("context.time")!;
    expect(time.kind).toBe(ValueKind.Timestamp);
    expect(time.int).toBe(1_700_000_000);
    expect(time.nanos).toBe(500_000_000);
  });

  it("adds connection.duration on close only", () => {
    expect(reportOf(ConnectionEvent.Open, new ConnectionTraffic()).has("connection.duration")).toBe(false);
    expect(reportOf(ConnectionEvent.Continue, new ConnectionTraffic()).has("connection.duration")).toBe(false);
    const d = reportOf(ConnectionEvent.Close, new ConnectionTraffic()).get("connection.duration")!;
    expect(d.kind).toBe(ValueKind.Duration);
    expect(d.int).toBe(3);
    expect(d.nanos).toBe(250_000_000);
  });

  it("adds check.error_code and check.error_message on close when the check failed", () => {
    const check = new CheckOutcome();
    check.known = true;
    check.code = 7;
    check.message = "caller not allowed";
    const close = reportOf(ConnectionEvent.Close, new ConnectionTraffic(), check);
    expect(int(close, "check.error_code")).toBe(7);
    expect(close.getString("check.error_message")).toBe("PERMISSION_DENIED:caller not allowed");
    expect(reportOf(ConnectionEvent.Open, new ConnectionTraffic(), check).has("check.error_code")).toBe(false);
  });

  it("adds no check error for an allowed or unchecked connection", () => {
    const ok = new CheckOutcome();
    ok.known = true;
    expect(reportOf(ConnectionEvent.Close, new ConnectionTraffic(), ok).has("check.error_code")).toBe(false);
    expect(reportOf(ConnectionEvent.Close, new ConnectionTraffic()).has("check.error_message")).toBe(false);
  });
});

describe("addConnectionReportAttributes: destination", () => {
  it("takes destination.ip/port from the upstream host when absent", () => {
    const bag = reportOf(ConnectionEvent.Open, new ConnectionTraffic(), new CheckOutcome(), "10.1.0.3:5432");
    const ip = bag.get("destination.ip")!.bytes!;
    expect(ip.length).toBe(4);
    expect(ip[0]).toBe(10);
    expect(ip[3]).toBe(3);
    expect(int(bag, "destination.port")).toBe(5432);
  });

  it("does not overwrite destination.ip/port already present", () => {
    const r = new ConnectionReport();
    r.upstreamAddress = "10.1.0.3:5432";
    const bag = new AttributeBag();
    bag.set("destination.port", AttributeValue.ofInt64(15006));
    addConnectionReportAttributes(bag, r, new ConnectionTraffic(), new CheckOutcome());
    expect(int(bag, "destination.port")).toBe(15006);
    expect(bag.has("destination.ip")).toBe(true);
  });
});
