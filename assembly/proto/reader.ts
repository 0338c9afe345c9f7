import { decodeUtf8 } from "../utf8";
import { WIRE_FIXED64, WIRE_LEN, WIRE_VARINT } from "./writer";

const WIRE_FIXED32: u32 = 5;

/**
 * Protocol-buffers wire decoding over a byte range. Malformed input sets
 * `failed` and makes every further read return zero values instead of
 * trapping: hub answers and forwarded headers come from the network.
 */
export class ProtoReader {
  pos: i32;
  failed: bool = false;
  field: u32 = 0;
  wire: u32 = 0;

  constructor(
    public buf: Uint8Array,
    start: i32 = 0,
    public end: i32 = -1,
  ) {
    this.pos = start;
    if (end < 0) this.end = buf.length;
  }

  /** Advances to the next field; false at the end or on malformed input. */
  next(): bool {
    if (this.failed || this.pos >= this.end) return false;
    const key = this.varint();
    if (this.failed) return false;
    this.field = <u32>(key >> 3);
    this.wire = <u32>(key & 7);
    if (this.field == 0) {
      this.failed = true;
      return false;
    }
    return true;
  }

  varint(): u64 {
    let result: u64 = 0;
    let shift: u64 = 0;
    while (this.pos < this.end && shift < 64) {
      const b = <u64>this.buf[this.pos++];
      result |= (b & 0x7f) << shift;
      if (b < 0x80) return result;
      shift += 7;
    }
    this.failed = true;
    return 0;
  }

  sint32(): i32 {
    const v = <u32>this.varint();
    return <i32>(v >>> 1) ^ -(<i32>(v & 1));
  }

  double(): f64 {
    if (this.pos + 8 > this.end) {
      this.failed = true;
      return 0;
    }
    const v = load<f64>(this.buf.dataStart + <usize>this.pos);
    this.pos += 8;
    return v;
  }

  /** Start offset of a length-delimited field's payload; sets `pos` past it. */
  lengthDelimited(): i32 {
    const n = <i32>this.varint();
    const start = this.pos;
    // Compare against the room left: a sum could wrap for lengths near 2^31.
    if (this.failed || n < 0 || n > this.end - start) {
      this.failed = true;
      return start;
    }
    this.pos = start + n;
    return start;
  }

  string(): string {
    const start = this.lengthDelimited();
    if (this.failed) return "";
    return decodeUtf8(this.buf.dataStart + <usize>start, <usize>(this.pos - start));
  }

  bytes(): Uint8Array {
    const start = this.lengthDelimited();
    if (this.failed) return new Uint8Array(0);
    return this.buf.slice(start, this.pos);
  }

  /** A reader over a submessage; the parent moves past it. */
  message(): ProtoReader {
    const start = this.lengthDelimited();
    return new ProtoReader(this.buf, start, this.failed ? start : this.pos);
  }

  skip(): void {
    if (this.wire == WIRE_VARINT) this.varint();
    else if (this.wire == WIRE_FIXED64) this.advance(8);
    else if (this.wire == WIRE_LEN) this.lengthDelimited();
    else if (this.wire == WIRE_FIXED32) this.advance(4);
    else this.failed = true;
  }

  private advance(n: i32): void {
    if (this.pos + n > this.end) this.failed = true;
    else this.pos += n;
  }
}
