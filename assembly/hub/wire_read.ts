import { ProtoReader } from "../proto/reader";
import { WIRE_FIXED64, WIRE_LEN, WIRE_VARINT } from "../proto/writer";
import { decodeUtf8 } from "../utf8";

// Reads for hub answers. A reader of a submessage takes the parent reader,
// positioned on the field, and carries a failure inside back to it.
//
// Reads for hub answers, which come from the network. They check the wire
// type of every known field (a mismatch is malformed input, not a value to
// guess at), and bound a length-delimited payload by the bytes left before
// using it: ProtoReader.lengthDelimited adds the declared length to the
// position in i32, so a length near 2^31 wraps past its bounds check and the
// next read would trap the module.

/** The payload length of the current LEN field, or -1 (and `r.failed`) when it does not fit. */
function payloadLength(r: ProtoReader): i32 {
  if (r.wire != WIRE_LEN) {
    r.failed = true;
    return -1;
  }
  const n = r.varint();
  if (r.failed || n > <u64>(r.end - r.pos)) {
    r.failed = true;
    return -1;
  }
  return <i32>n;
}

export function readString(r: ProtoReader): string {
  const n = payloadLength(r);
  if (n <= 0) return "";
  const s = decodeUtf8(r.buf.dataStart + <usize>r.pos, <usize>n);
  r.pos += n;
  return s;
}

/** A reader over the current LEN field's payload (empty when malformed); `r` moves past it. */
export function readMessage(r: ProtoReader): ProtoReader {
  const n = payloadLength(r);
  const start = r.pos;
  if (n < 0) return new ProtoReader(r.buf, start, start);
  r.pos = start + n;
  return new ProtoReader(r.buf, start, start + n);
}

export function readVarint(r: ProtoReader): u64 {
  if (r.wire != WIRE_VARINT) {
    r.failed = true;
    return 0;
  }
  return r.varint();
}

export function readSint32(r: ProtoReader): i32 {
  if (r.wire != WIRE_VARINT) {
    r.failed = true;
    return 0;
  }
  return r.sint32();
}

/** Skips an unknown field; groups (wire types 3 and 4) count as malformed. */
export function skipField(r: ProtoReader): void {
  if (r.wire == WIRE_LEN) {
    const n = payloadLength(r);
    if (n > 0) r.pos += n;
  } else if (r.wire == WIRE_VARINT || r.wire == WIRE_FIXED64 || r.wire == 5) r.skip();
  else r.failed = true;
}

const NANOS_PER_SECOND: i64 = 1_000_000_000;
const MAX_SECONDS: i64 = i64.MAX_VALUE / NANOS_PER_SECOND;

/**
 * The google.protobuf.Duration {seconds = 1, nanos = 2} in `parent`'s current
 * field as nanoseconds, clamped to [0, i64.MAX]: a negative validity means
 * "already expired", and -1 stays free to mean "absent" for the caller.
 * Sets `parent.failed` when malformed.
 */
export function readDurationNanos(parent: ProtoReader): i64 {
  const r = readMessage(parent);
  let seconds: i64 = 0;
  let nanos: i64 = 0;
  while (r.next()) {
    if (r.field == 1) seconds = <i64>readVarint(r);
    else if (r.field == 2) nanos = <i64>(<i32>readVarint(r));
    else skipField(r);
  }
  if (r.failed) parent.failed = true;
  if (seconds > MAX_SECONDS) return i64.MAX_VALUE;
  if (seconds < 0) return 0;
  const total = seconds * NANOS_PER_SECOND + nanos;
  return total < 0 ? (nanos < 0 ? 0 : i64.MAX_VALUE) : total;
}
