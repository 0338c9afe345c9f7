// Reading protobuf's wire format strictly, for the one-pass readers of
// well-formed messages (report_request_reader.ts): anything unexpected
// (a varint past its message, a length beyond it, invalid UTF-8) throws
// NOT_PLAIN, and the reader's caller takes its general path.
import { isUtf8Range } from "./utf8_strings.ts";

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LEN = 2;
const TWO_32 = 4294967296;

/** Thrown when the bytes are not plainly well-formed; a reader's entry point catches it (by identity) and answers undefined. */
export const NOT_PLAIN = new Error("not a plain message");

/** A position in a message's bytes and the primitives read from it (a reader of one message type holds one). */
export class StrictWireCursor {
  pos = 0;
  // A varint's high 32 bits, beside the low ones the read returned.
  hi = 0;

  constructor(readonly buf: Buffer) {}

  /** Moves past a scalar value of wire type `wire`. */
  skipValue(wire: number, end: number): void {
    if (wire === WIRE_VARINT) this.varint(end);
    else if (wire === WIRE_FIXED64) {
      if (this.pos + 8 > end) throw NOT_PLAIN;
      this.pos += 8;
    } else {
      this.pos = this.length(end);
    }
  }

  /** A length-delimited payload's length; returns where it ends (within `end`). */
  length(end: number): number {
    const start = this.pos;
    const n = this.varint(end);
    if (this.pos - start > 5 || this.hi !== 0 || n > end - this.pos) throw NOT_PLAIN;
    return this.pos + n;
  }

  /** A string field's payload up to `end`, which must be valid UTF-8. */
  string(end: number): string {
    const start = this.pos;
    if (!isUtf8Range(this.buf, start, end)) throw NOT_PLAIN;
    this.pos = end;
    return this.buf.toString("utf8", start, end);
  }

  sint32(end: number): number {
    const v = this.varint(end);
    return ((v >>> 1) ^ -(v & 1)) | 0;
  }

  /** As protobufjs reads a bool: true when any bit of the varint is set. */
  bool(end: number): boolean {
    return (this.varint(end) | this.hi) !== 0;
  }

  /** A varint as a signed 64-bit integer. */
  int64(end: number): bigint {
    const lo = this.varint(end);
    const hi = this.hi;
    if (hi === 0) return BigInt(lo);
    if (hi < 0x200000) return BigInt(hi * TWO_32 + lo);
    if (hi >= 0xffe00000) return BigInt((hi - TWO_32) * TWO_32 + lo);
    return BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo));
  }

  /**
   * A varint of at most 10 bytes ending before `end`: returns its low 32
   * bits unsigned and leaves the next 32 in `hi` (bits past 64 dropped, as
   * protobufjs drops them).
   */
  varint(end: number): number {
    const buf = this.buf;
    let pos = this.pos;
    if (pos >= end) throw NOT_PLAIN;
    let b = buf[pos++];
    if (b < 0x80) {
      this.pos = pos;
      this.hi = 0;
      return b;
    }
    let lo = b & 0x7f;
    let hi = 0;
    for (let shift = 7; ; shift += 7) {
      if (pos >= end || shift > 63) throw NOT_PLAIN;
      b = buf[pos++];
      if (shift < 28) lo |= (b & 0x7f) << shift;
      else if (shift === 28) {
        lo |= (b & 0x0f) << 28;
        hi = (b & 0x7f) >>> 4;
      } else hi |= (b & 0x7f) << (shift - 32);
      if (b < 0x80) break;
    }
    this.pos = pos;
    this.hi = hi >>> 0;
    return lo >>> 0;
  }
}

/** Past a varint of at most 10 bytes at `pos`, ending before `end`, as the cursor reads one. */
export function skipVarint(buf: Buffer, pos: number, end: number): number {
  let k = pos;
  for (;;) {
    if (k >= end || k - pos >= 10) throw NOT_PLAIN;
    if (buf[k++] < 0x80) return k;
  }
}

/** google.protobuf.Timestamp or Duration {seconds = 1: int64, nanos = 2: int32} from `pos` to `end`, checked as AttributesReader reads it (without reading it). */
export function instantAt(buf: Buffer, pos: number, end: number): void {
  while (pos < end) {
    const tag = buf[pos++];
    if (tag !== ((1 << 3) | WIRE_VARINT) && tag !== ((2 << 3) | WIRE_VARINT)) throw NOT_PLAIN;
    pos = skipVarint(buf, pos, end);
  }
}
