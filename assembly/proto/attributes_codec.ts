import { AttributeBag } from "../attributes/bag";
import { AttributeValue, ValueKind, StringMap } from "../attributes/value";
import { ProtoReader } from "./reader";
import { ProtoWriter, WIRE_LEN } from "./writer";

// Encoding of mesh.hub.v1.Attributes (uncompressed), used by the
// forwarded-attributes header and by the evaluation result.

export function writeSecondsNanos(w: ProtoWriter, field: u32, seconds: i64, nanos: i32): void {
  const inner = new ProtoWriter(16);
  if (seconds != 0) inner.int64Field(1, seconds);
  if (nanos != 0) inner.int64Field(2, <i64>nanos);
  w.messageField(field, inner);
}

export function writeStringMap(w: ProtoWriter, field: u32, m: StringMap): void {
  const inner = new ProtoWriter(64);
  for (let i = 0; i < m.keys.length; i++) {
    const entry = new ProtoWriter(32);
    entry.stringField(1, m.keys[i]);
    entry.stringField(2, m.values[i]);
    inner.messageField(1, entry);
  }
  w.messageField(field, inner);
}

export function writeAttributeValue(w: ProtoWriter, v: AttributeValue): void {
  const kind = <u32>v.kind;
  switch (v.kind) {
    case ValueKind.String:
      w.stringField(kind, v.str);
      break;
    case ValueKind.Int64:
      w.int64Field(kind, v.int);
      break;
    case ValueKind.Double:
      w.doubleField(kind, v.double);
      break;
    case ValueKind.Bool:
      w.boolField(kind, v.bool);
      break;
    case ValueKind.Bytes:
      w.bytesField(kind, v.bytes !== null ? (v.bytes as Uint8Array) : new Uint8Array(0));
      break;
    case ValueKind.Timestamp:
    case ValueKind.Duration:
      writeSecondsNanos(w, kind, v.int, v.nanos);
      break;
    case ValueKind.StringMap:
      writeStringMap(w, kind, v.map !== null ? (v.map as StringMap) : new StringMap());
      break;
  }
}

export function writeAttributes(w: ProtoWriter, bag: AttributeBag): void {
  for (let i = 0, n = bag.size; i < n; i++) {
    const entry = new ProtoWriter(64);
    entry.stringField(1, bag.nameAt(i));
    const value = new ProtoWriter(32);
    writeAttributeValue(value, bag.valueAt(i));
    entry.messageField(2, value);
    w.messageField(1, entry);
  }
}

export function encodeAttributes(bag: AttributeBag): Uint8Array {
  const w = new ProtoWriter(256);
  writeAttributes(w, bag);
  return w.finish();
}

function readSecondsNanos(r: ProtoReader, kind: ValueKind): AttributeValue | null {
  let seconds: i64 = 0;
  let nanos: i32 = 0;
  while (r.next()) {
    if (r.field == 1) seconds = <i64>r.varint();
    else if (r.field == 2) nanos = <i32>r.varint();
    else r.skip();
  }
  return r.failed ? null : AttributeValue.ofSecondsNanos(kind, seconds, nanos);
}

function readStringMap(r: ProtoReader): StringMap | null {
  const m = new StringMap();
  while (r.next()) {
    if (r.field == 1 && r.wire == WIRE_LEN) {
      const entry = r.message();
      let key = "";
      let value = "";
      while (entry.next()) {
        if (entry.field == 1) key = entry.string();
        else if (entry.field == 2) value = entry.string();
        else entry.skip();
      }
      if (entry.failed) r.failed = true;
      m.set(key, value);
    } else r.skip();
  }
  return r.failed ? null : m;
}

// A malformed nested message makes the whole value (and so the whole
// Attributes message) malformed: partial decoding would let a damaged header
// still inject attributes.
function readAttributeValue(r: ProtoReader): AttributeValue | null {
  let value: AttributeValue | null = null;
  while (r.next()) {
    let nestedFailed = false;
    switch (r.field) {
      case 2:
        value = AttributeValue.ofString(r.string());
        break;
      case 3:
        value = AttributeValue.ofInt64(<i64>r.varint());
        break;
      case 4:
        value = AttributeValue.ofDouble(r.double());
        break;
      case 5:
        value = AttributeValue.ofBool(r.varint() != 0);
        break;
      case 6:
        value = AttributeValue.ofBytes(r.bytes());
        break;
      case 7:
        value = readSecondsNanos(r.message(), ValueKind.Timestamp);
        nestedFailed = value === null;
        break;
      case 8:
        value = readSecondsNanos(r.message(), ValueKind.Duration);
        nestedFailed = value === null;
        break;
      case 9: {
        const m = readStringMap(r.message());
        nestedFailed = m === null;
        if (m !== null) value = AttributeValue.ofMap(m);
        break;
      }
      default:
        r.skip();
    }
    if (nestedFailed) return null;
  }
  return r.failed ? null : value;
}

/** Decodes a mesh.hub.v1.Attributes message; null when malformed. */
export function decodeAttributes(buf: Uint8Array): AttributeBag | null {
  const bag = new AttributeBag();
  const r = new ProtoReader(buf);
  while (r.next()) {
    if (r.field != 1 || r.wire != WIRE_LEN) {
      r.skip();
      continue;
    }
    const entry = r.message();
    let name = "";
    let value: AttributeValue | null = null;
    while (entry.next()) {
      if (entry.field == 1) name = entry.string();
      else if (entry.field == 2) {
        value = readAttributeValue(entry.message());
        if (value === null) return null;
      } else entry.skip();
    }
    if (entry.failed) return null;
    // Names off the wire are not interned: a peer cannot grow the registry.
    if (value !== null) bag.setTransient(name, value as AttributeValue);
  }
  return r.failed ? null : bag;
}
