import { statusCodeName } from "../status_codes";
import { parseSocketAddress } from "./address";
import { AttributeBag } from "./bag";
import { CheckOutcome } from "./report";
import { AttributeValue } from "./value";

/** The `connection.event` of a TCP report. */
export const enum ConnectionEvent {
  Open,
  Continue,
  Close,
}

export function connectionEventName(event: ConnectionEvent): string {
  if (event == ConnectionEvent.Open) return "open";
  if (event == ConnectionEvent.Continue) return "continue";
  return "close";
}

/**
 * Bytes a connection moved, and the totals at its last `continue` report:
 * the baseline of the next report's deltas. Only `continue` moves the
 * baseline (upstream tcp AttributesBuilder): the open report does not, and
 * the close delta is relative to the last continue.
 */
export class ConnectionTraffic {
  /** From the client (downstream data). */
  receivedBytes: i64 = 0;
  /** To the client (upstream data). */
  sentBytes: i64 = 0;
  reportedReceivedBytes: i64 = 0;
  reportedSentBytes: i64 = 0;
}

/** What a TCP report needs beyond the check-time bag. */
export class ConnectionReport {
  event: ConnectionEvent = ConnectionEvent.Open;
  timeNanos: i64 = 0;
  /** Accept to now; reported on close only. */
  durationNanos: i64 = 0;
  /** Upstream host `ip:port`, "" when none was chosen. */
  upstreamAddress: string = "";
}

/**
 * Adds the report attributes of one TCP report to a copy of the check-time
 * bag (hub-client.md §7): connection.received.bytes / sent.bytes (since the
 * last continue report), *_total, connection.event, destination.ip/port from
 * the upstream host when not already present, context.time; a close adds
 * connection.duration and, when the check failed, check.error_code and
 * check.error_message (`<CODE_NAME>:<message>`). A continue report moves the
 * traffic baseline.
 */
export function addConnectionReportAttributes(bag: AttributeBag, report: ConnectionReport, traffic: ConnectionTraffic, check: CheckOutcome): void {
  bag.set("connection.received.bytes", AttributeValue.ofInt64(traffic.receivedBytes - traffic.reportedReceivedBytes));
  bag.set("connection.received.bytes_total", AttributeValue.ofInt64(traffic.receivedBytes));
  bag.set("connection.sent.bytes", AttributeValue.ofInt64(traffic.sentBytes - traffic.reportedSentBytes));
  bag.set("connection.sent.bytes_total", AttributeValue.ofInt64(traffic.sentBytes));
  if (report.event == ConnectionEvent.Continue) {
    traffic.reportedReceivedBytes = traffic.receivedBytes;
    traffic.reportedSentBytes = traffic.sentBytes;
  }
  if (report.event == ConnectionEvent.Close) {
    bag.set("connection.duration", AttributeValue.ofDurationNanos(report.durationNanos));
    if (check.known && check.code != 0) {
      bag.set("check.error_code", AttributeValue.ofInt64(check.code));
      bag.setString("check.error_message", statusCodeName(check.code) + ":" + check.message);
    }
  }
  bag.setString("connection.event", connectionEventName(report.event));
  if (report.upstreamAddress.length > 0) {
    const addr = parseSocketAddress(report.upstreamAddress);
    // Not overwritten: the local address (or static attributes) may have set them.
    if (addr.ip !== null && !bag.has("destination.ip")) bag.set("destination.ip", AttributeValue.ofBytes(addr.ip as Uint8Array));
    if (addr.port >= 0 && !bag.has("destination.port")) bag.set("destination.port", AttributeValue.ofInt64(addr.port));
  }
  bag.set("context.time", AttributeValue.ofTimestampNanos(report.timeNanos));
}
