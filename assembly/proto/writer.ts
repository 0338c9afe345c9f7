import { encodeUtf8Unsafe } from "../utf8";

// Protocol-buffers wire encoding (varint, zigzag, length-delimited), enough
// for the hub messages. Nested messages are written into a child writer and
// copied in with their length, which keeps the encoder simple and exact.

export const WIRE_VARINT: u32 = 0;
export const WIRE_FIXED64: u32 = 1;
export const WIRE_LEN: u32 = 2;

export class ProtoWriter {
  private buf: Uint8Array;
  private len: i32 = 0;

  constructor(capacity: i32 = 256) {
    this.buf = new Uint8Array(capacity);
  }

  get length(): i32 {
    return this.len;
  }

  reset(): void {
    this.len = 0;
  }

  /** Drops what was written after the first `length` bytes (length <= this.length). */
  rewind(length: i32): void {
    this.len = length;
  }

  // @ts-ignore: decorator
  @inline private ensure(extra: i32): void {
    if (this.len + extra <= this.buf.length) return;
    this.grow(extra);
  }

  private grow(extra: i32): void {
    let cap = max(this.buf.length * 2, 16);
    while (cap < this.len + extra) cap *= 2;
    const next = new Uint8Array(cap);
    memory.copy(next.dataStart, this.buf.dataStart, <usize>this.len);
    this.buf = next;
  }

  // Inlined where it is called: most varints of a hub message (dictionary
  // indexes, lengths, small numbers) are one byte, and a call costs an
  // interpreter such as WAMR more than the store; longer ones take varintLong.
  // @ts-ignore: decorator
  @inline varint(v: u64): void {
    if (v < 0x80 && this.len < this.buf.length) {
      store<u8>(this.buf.dataStart + <usize>this.len, <u8>v);
      this.len++;
      return;
    }
    this.varintLong(v);
  }

  /**
   * A varint written in place, whatever its length: for values that mostly
   * take several bytes (a time's seconds and nanos), where varint would call
   * varintLong each time.
   */
  // @ts-ignore: decorator
  @inline varintInPlace(v: u64): void {
    this.ensure(10);
    let at = this.buf.dataStart + <usize>this.len;
    const start = at;
    while (v >= 0x80) {
      store<u8>(at++, <u8>(v | 0x80));
      v >>= 7;
    }
    store<u8>(at++, <u8>v);
    this.len += <i32>(at - start);
  }

  // The same stores as varintInPlace, behind one call for the callers that are not hot.
  private varintLong(v: u64): void {
    this.varintInPlace(v);
  }

  // @ts-ignore: decorator
  @inline tag(field: u32, wire: u32): void {
    const key = (field << 3) | wire;
    // Every field number the hub messages use fits a one-byte tag.
    if (key < 0x80) {
      this.ensure(1);
      store<u8>(this.buf.dataStart + <usize>this.len, <u8>key);
      this.len++;
      return;
    }
    this.varintLong(<u64>key);
  }

  // @ts-ignore: decorator
  @inline uint64Field(field: u32, v: u64): void {
    this.tag(field, WIRE_VARINT);
    this.varint(v);
  }

  /** int32/int64 are sign-extended to 64 bits on the wire. */
  // @ts-ignore: decorator
  @inline int64Field(field: u32, v: i64): void {
    this.tag(field, WIRE_VARINT);
    this.varint(<u64>v);
  }

  // @ts-ignore: decorator
  @inline sint32Field(field: u32, v: i32): void {
    this.tag(field, WIRE_VARINT);
    this.varint(<u64>(<u32>((v << 1) ^ (v >> 31))));
  }

  // @ts-ignore: decorator
  @inline boolField(field: u32, v: bool): void {
    this.tag(field, WIRE_VARINT);
    this.varint(v ? 1 : 0);
  }

  doubleField(field: u32, v: f64): void {
    this.tag(field, WIRE_FIXED64);
    this.ensure(8);
    store<f64>(this.buf.dataStart + <usize>this.len, v);
    this.len += 8;
  }

  bytesField(field: u32, data: Uint8Array): void {
    this.tag(field, WIRE_LEN);
    this.varint(<u64>data.length);
    this.raw(data.dataStart, data.length);
  }

  stringField(field: u32, s: string): void {
    this.tag(field, WIRE_LEN);
    const n = String.UTF8.byteLength(s);
    this.varint(<u64>n);
    this.ensure(n);
    // A lone surrogate is written as U+FFFD (same length): the wire only ever carries valid UTF-8.
    encodeUtf8Unsafe(s, this.buf.dataStart + <usize>this.len);
    this.len += n;
  }

  /**
   * Starts a length-delimited submessage written in place: its fields follow
   * in this writer, and `end` with the returned mark sets its length. One
   * byte is kept for the length (submessages are mostly shorter than 128
   * bytes); a longer one is moved up to make room for its length's varint.
   *
   *   const m = w.begin(2); w.sint32Field(1, key); w.sint32Field(2, value); w.end(m);
   */
  // @ts-ignore: decorator
  @inline begin(field: u32): i32 {
    this.tag(field, WIRE_LEN);
    this.ensure(1);
    const mark = this.len;
    this.len = mark + 1;
    return mark;
  }

  /** Ends the submessage `begin` returned `mark` for. */
  // @ts-ignore: decorator
  @inline end(mark: i32): void {
    const n = this.len - mark - 1;
    if (n < 0x80) store<u8>(this.buf.dataStart + <usize>mark, <u8>n);
    else this.endLong(mark, n);
  }

  /**
   * `begin` for a submessage mostly 128 to 16 383 bytes long (a report
   * entry): two bytes are kept for its length, so `endWide` mostly writes
   * it in place.
   */
  // @ts-ignore: decorator
  @inline beginWide(field: u32): i32 {
    this.tag(field, WIRE_LEN);
    this.ensure(2);
    const mark = this.len;
    this.len = mark + 2;
    return mark;
  }

  /**
   * Ends the submessage `beginWide` returned `mark` for, its length the
   * shortest varint as `end` writes it; returns how far its contents moved
   * (-1 for one under 128 bytes, more than 0 for one of 16 KiB or more).
   * Inlined into its one caller.
   */
  // @ts-ignore: decorator
  @inline endWide(mark: i32): i32 {
    const n = this.len - mark - 2;
    const at = this.buf.dataStart + <usize>mark;
    if (n >= 0x80 && n < 0x4000) {
      store<u8>(at, <u8>(n | 0x80));
      store<u8>(at, <u8>(n >>> 7), 1);
      return 0;
    }
    if (n < 0x80) {
      memory.copy(at + 1, at + 2, <usize>n);
      store<u8>(at, <u8>n);
      this.len--;
      return -1;
    }
    return this.endWideLong(mark, n);
  }

  // endWide's submessage of 16 KiB or more: moved up for its longer length.
  private endWideLong(mark: i32, n: i32): i32 {
    let extra = 1;
    for (let v = <u32>n >>> 21; v != 0; v >>>= 7) extra++;
    this.ensure(extra);
    const moved = this.buf.dataStart + <usize>mark;
    memory.copy(moved + 2 + <usize>extra, moved + 2, <usize>n);
    this.len = mark;
    this.varintLong(<u64>n);
    this.len += n;
    return extra;
  }

  // A submessage of 128 bytes or more: moved up to make room for its length.
  // @ts-ignore: decorator
  @inline private endLong(mark: i32, n: i32): void {
    let extra = 1;
    for (let v = <u32>n >>> 14; v != 0; v >>>= 7) extra++;
    this.ensure(extra);
    const moved = this.buf.dataStart + <usize>mark;
    memory.copy(moved + 1 + <usize>extra, moved + 1, <usize>n);
    this.len = mark;
    this.varintLong(<u64>n);
    this.len += n;
  }

  /**
   * A map entry whose value is a google.protobuf.Timestamp or Duration
   * ({key = 1: sint32, value = 2: {seconds = 1, nanos = 2}}, zero scalars
   * left out) as length-delimited field `field` (below 16), in one pass:
   * the bytes begin, sint32Field, varintInPlace and end would give (its
   * lengths are always one byte), without their per-step length and room
   * checks. A report writes two or three of these per request, each new.
   */
  timeEntry(field: u32, key: i32, seconds: i64, nanos: i32): void {
    // Tag and length, key (tag and up to five bytes), value tag and length, two tagged ten-byte varints.
    this.ensure(31);
    const start = this.buf.dataStart + <usize>this.len;
    store<u8>(start, <u8>((field << 3) | WIRE_LEN));
    store<u8>(start, 0x08, 2);
    let at = putVarint(start + 3, <u64>(<u32>((key << 1) ^ (key >> 31))));
    store<u8>(at, 0x12);
    const valueLength = at + 1;
    at += 2;
    if (seconds != 0) {
      store<u8>(at, 0x08);
      at = putVarint(at + 1, <u64>seconds);
    }
    if (nanos != 0) {
      store<u8>(at, 0x10);
      at = putVarint(at + 1, <u64>(<i64>nanos));
    }
    store<u8>(valueLength, <u8>(at - valueLength - 1));
    store<u8>(start + 1, <u8>(at - start - 2));
    this.len += <i32>(at - start);
  }

  /** Writes `inner` as a length-delimited submessage. */
  messageField(field: u32, inner: ProtoWriter): void {
    this.tag(field, WIRE_LEN);
    this.varint(<u64>inner.len);
    this.raw(inner.buf.dataStart, inner.len);
  }

  raw(ptr: usize, n: i32): void {
    this.ensure(n);
    memory.copy(this.buf.dataStart + <usize>this.len, ptr, <usize>n);
    this.len += n;
  }

  /** Appends again the `n` bytes written at `start` (start + n <= this.length). */
  // @ts-ignore: decorator
  @inline repeat(start: i32, n: i32): void {
    this.ensure(n);
    const base = this.buf.dataStart;
    memory.copy(base + <usize>this.len, base + <usize>start, <usize>n);
    this.len += n;
  }

  finish(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}

// The varint of `v` at `at` (room checked by the caller); returns where it ends.
// @ts-ignore: decorator
@inline
function putVarint(at: usize, v: u64): usize {
  while (v >= 0x80) {
    store<u8>(at++, <u8>(v | 0x80));
    v >>= 7;
  }
  store<u8>(at++, <u8>v);
  return at;
}
