import { StringMap } from "./string_map";

// Value kinds numbered as the AttributeValue oneof fields of
// proto/mesh/hub/v1/attributes.proto, so encoders use the kind as the field.
export const enum ValueKind {
  String = 2,
  Int64 = 3,
  Double = 4,
  Bool = 5,
  Bytes = 6,
  Timestamp = 7,
  Duration = 8,
  StringMap = 9,
}

/** One typed attribute value. Timestamps and durations are seconds + nanos. */
export class AttributeValue {
  kind: ValueKind = ValueKind.String;
  str: string = "";
  /** int64 value, or seconds of a timestamp/duration. */
  int: i64 = 0;
  nanos: i32 = 0;
  double: f64 = 0;
  bool: bool = false;
  bytes: Uint8Array | null = null;
  map: StringMap | null = null;
  /**
   * Storage of a request's own values (RequestValues), rewritten by the
   * evaluation that reuses it: a bag that outlives the request copies such a
   * value (AttributeBag.clone) instead of sharing it.
   */
  requestOwned: bool = false;

  /** A copy that later writes to the request's objects cannot change (bytes and map copied too). */
  copy(): AttributeValue {
    const c = new AttributeValue();
    c.kind = this.kind;
    c.str = this.str;
    c.int = this.int;
    c.nanos = this.nanos;
    c.double = this.double;
    c.bool = this.bool;
    const bytes = this.bytes;
    if (bytes !== null) c.bytes = bytes.slice(0);
    const map = this.map;
    if (map !== null) c.map = map.clone();
    return c;
  }

  static ofString(s: string): AttributeValue {
    const v = new AttributeValue();
    v.kind = ValueKind.String;
    v.str = s;
    return v;
  }

  static ofInt64(n: i64): AttributeValue {
    const v = new AttributeValue();
    v.kind = ValueKind.Int64;
    v.int = n;
    return v;
  }

  static ofDouble(d: f64): AttributeValue {
    const v = new AttributeValue();
    v.kind = ValueKind.Double;
    v.double = d;
    return v;
  }

  /** Shared instances: attribute values are never mutated once set in a bag. */
  static ofBool(b: bool): AttributeValue {
    return b ? TRUE_VALUE : FALSE_VALUE;
  }

  static newBoolForConstant(b: bool): AttributeValue {
    const v = new AttributeValue();
    v.kind = ValueKind.Bool;
    v.bool = b;
    return v;
  }

  static ofBytes(b: Uint8Array): AttributeValue {
    const v = new AttributeValue();
    v.kind = ValueKind.Bytes;
    v.bytes = b;
    return v;
  }

  static ofTimestampNanos(unixNanos: i64): AttributeValue {
    return AttributeValue.ofTime(ValueKind.Timestamp, unixNanos);
  }

  static ofDurationNanos(nanos: i64): AttributeValue {
    return AttributeValue.ofTime(ValueKind.Duration, nanos);
  }

  static ofSecondsNanos(kind: ValueKind, seconds: i64, nanos: i32): AttributeValue {
    const v = new AttributeValue();
    v.kind = kind;
    v.int = seconds;
    v.nanos = nanos;
    return v;
  }

  static ofMap(m: StringMap): AttributeValue {
    const v = new AttributeValue();
    v.kind = ValueKind.StringMap;
    v.map = m;
    return v;
  }

  private static ofTime(kind: ValueKind, nanos: i64): AttributeValue {
    const v = new AttributeValue();
    v.setTime(kind, nanos);
    return v;
  }

  /** Makes this a timestamp or duration of `nanos`, split into seconds and nanos. */
  setTime(kind: ValueKind, nanos: i64): void {
    let seconds = nanos / 1_000_000_000;
    let rest = <i32>(nanos % 1_000_000_000);
    // Timestamps keep nanos non-negative (protobuf's rule for Timestamp).
    if (kind == ValueKind.Timestamp && rest < 0) {
      seconds -= 1;
      rest += 1_000_000_000;
    }
    this.kind = kind;
    this.int = seconds;
    this.nanos = rest;
  }
}

const TRUE_VALUE: AttributeValue = AttributeValue.newBoolForConstant(true);
const FALSE_VALUE: AttributeValue = AttributeValue.newBoolForConstant(false);
