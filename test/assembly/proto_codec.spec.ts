// Protocol-buffers wire codec, base64 and mesh.hub.v1.Attributes. Byte vectors
// are from the protobuf encoding guide (protobuf.dev/programming-guides/encoding)
// and RFC 4648 §10; Attributes vectors are hand-encoded from attributes.proto.
import { ProtoReader } from "../../assembly/proto/reader";
import { ProtoWriter, WIRE_FIXED64, WIRE_LEN, WIRE_VARINT } from "../../assembly/proto/writer";
import { base64Decode, base64Encode } from "../../assembly/proto/base64";
import { decodeAttributes, encodeAttributes } from "../../assembly/proto/attributes_codec";
import { AttributeBag } from "../../assembly/attributes/bag";
import { AttributeValue, ValueKind, StringMap } from "../../assembly/attributes/value";

function hex(b: Uint8Array): string {
  let s = "";
  for (let i = 0; i < b.length; i++) {
    const v = <i32>b[i];
    s += (v < 16 ? "0" : "") + v.toString(16);
  }
  return s;
}

function bytes(h: string): Uint8Array {
  const out = new Uint8Array(h.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = <u8>I32.parseInt(h.substr(i * 2, 2), 16);
  return out;
}

function ascii(s: string): Uint8Array {
  return Uint8Array.wrap(String.UTF8.encode(s));
}

describe("ProtoWriter (protobuf encoding guide)", () => {
  it("writes a submessage in place with begin/end, whatever its length, as messageField would", () => {
    for (let size = 0; size < 20000; size = size * 3 + 1) {
      const inner = new ProtoWriter(1);
      for (let i = 0; i < size; i++) inner.uint64Field(1, <u64>(i & 0x7f));
      const copied = new ProtoWriter(1);
      copied.uint64Field(5, 7);
      copied.messageField(2, inner);
      copied.uint64Field(6, 8);
      const inPlace = new ProtoWriter(1);
      inPlace.uint64Field(5, 7);
      const mark = inPlace.begin(2);
      for (let i = 0; i < size; i++) inPlace.uint64Field(1, <u64>(i & 0x7f));
      inPlace.end(mark);
      inPlace.uint64Field(6, 8);
      expect(hex(inPlace.finish())).toBe(hex(copied.finish()), size.toString());
    }
  });

  it("writes a submessage with beginWide/endWide as begin/end would, and says how far its contents moved", () => {
    // Payloads of 0 to 2 MiB: one-, two-, three- and four-byte lengths, and their edges.
    const sizes: i32[] = [0, 1, 126, 127, 128, 129, 300, 16382, 16383, 16384, 16385, 40000, 2097151, 2097152];
    for (let k = 0; k < sizes.length; k++) {
      const size = sizes[k];
      const narrow = new ProtoWriter(1);
      narrow.uint64Field(5, 7);
      const m1 = narrow.begin(1);
      narrow.raw(bytesOfLength(size).dataStart, size);
      narrow.end(m1);
      narrow.uint64Field(6, 8);
      const wide = new ProtoWriter(1);
      wide.uint64Field(5, 7);
      const m2 = wide.beginWide(1);
      const contentAt = wide.length;
      wide.raw(bytesOfLength(size).dataStart, size);
      const moved = wide.endWide(m2);
      wide.uint64Field(6, 8);
      const a = narrow.finish();
      const b = wide.finish();
      expect(b.length).toBe(a.length, size.toString());
      expect(memory.compare(a.dataStart, b.dataStart, <usize>a.length)).toBe(0, size.toString());
      // The contents now start where the length's varint ends.
      const lengthBytes = size < 0x80 ? 1 : size < 0x4000 ? 2 : size < 0x200000 ? 3 : 4;
      expect(moved).toBe(lengthBytes - 2, size.toString());
      expect(contentAt + moved).toBe(2 + 1 + lengthBytes, size.toString());
    }
  });

  it("nests in-place submessages, and rewinds what was written after a point", () => {
    const w = new ProtoWriter(1);
    const outer = w.begin(1);
    const inner = w.begin(2);
    w.uint64Field(1, 150);
    w.end(inner);
    w.end(outer);
    expect(hex(w.finish())).toBe("0a0512030896" + "01");
    const kept = w.length;
    w.uint64Field(3, 1);
    w.rewind(kept);
    expect(hex(w.finish())).toBe("0a05120308960" + "1");
  });

  it("writes varints, zigzag and sign-extended negatives", () => {
    let w = new ProtoWriter(1);
    w.uint64Field(1, 150);
    expect(hex(w.finish())).toBe("089601");
    w = new ProtoWriter(1);
    w.int64Field(1, -1);
    expect(hex(w.finish())).toBe("08ffffffffffffffffff01");
    w = new ProtoWriter(1);
    w.sint32Field(1, -1);
    w.sint32Field(1, 1);
    w.sint32Field(1, -2147483648);
    expect(hex(w.finish())).toBe("08010802" + "08ffffffff0f");
    w = new ProtoWriter(1);
    w.boolField(2, true);
    w.boolField(2, false);
    expect(hex(w.finish())).toBe("10011000");
  });

  it("writes strings as UTF-8 with their byte length", () => {
    const w = new ProtoWriter(2);
    w.stringField(2, "testing");
    w.stringField(3, "é");
    w.stringField(4, "");
    expect(hex(w.finish())).toBe("120774657374696e67" + "1a02c3a9" + "2200");
  });

  it("writes doubles little-endian and nested messages with their length", () => {
    const inner = new ProtoWriter(1);
    inner.uint64Field(1, 150);
    const w = new ProtoWriter(1);
    w.messageField(3, inner);
    w.doubleField(4, 1.0);
    expect(hex(w.finish())).toBe("1a03089601" + "21000000000000f03f");
  });

  it("grows past its initial capacity", () => {
    let s = "";
    for (let i = 0; i < 300; i++) s += "x";
    const w = new ProtoWriter(1);
    w.stringField(1, s);
    const out = w.finish();
    expect(out.length).toBe(303);
    expect(hex(out.subarray(0, 3))).toBe("0aac02");
    expect(w.length).toBe(303);
    w.reset();
    expect(w.length).toBe(0);
  });

  it("writes a time map entry in one pass as its submessages written step by step would be", () => {
    const keys: i32[] = [24, -1, 0, -70, 100000];
    const seconds: i64[] = [1_763_800_000, 0, 0, -5, i64.MAX_VALUE];
    const nanos: i32[] = [123_456_789, 999, 0, -1, 1];
    for (let i = 0; i < keys.length; i++) {
      // After a few bytes, from a writer that has to grow for it.
      const fast = new ProtoWriter(4);
      fast.tag(1, WIRE_VARINT);
      fast.varint(7);
      fast.timeEntry(6 + (i & 1), keys[i], seconds[i], nanos[i]);
      const steps = new ProtoWriter();
      steps.tag(1, WIRE_VARINT);
      steps.varint(7);
      const entry = steps.begin(6 + (i & 1));
      steps.sint32Field(1, keys[i]);
      const time = steps.begin(2);
      if (seconds[i] != 0) {
        steps.tag(1, WIRE_VARINT);
        steps.varintInPlace(<u64>seconds[i]);
      }
      if (nanos[i] != 0) {
        steps.tag(2, WIRE_VARINT);
        steps.varintInPlace(<u64>(<i64>nanos[i]));
      }
      steps.end(time);
      steps.end(entry);
      expect(fast.length).toBe(steps.length);
      expect(hex(fast.finish())).toBe(hex(steps.finish()));
    }
  });
});

describe("ProtoReader", () => {
  it("reads what the writer wrote", () => {
    const w = new ProtoWriter(8);
    w.uint64Field(1, 300);
    w.sint32Field(2, -12345);
    w.stringField(3, "héllo");
    w.doubleField(4, -2.5);
    w.bytesField(5, bytes("00ff"));
    const r = new ProtoReader(w.finish());
    expect(r.next()).toBe(true);
    expect(r.field).toBe(1);
    expect(r.wire).toBe(WIRE_VARINT);
    expect(r.varint()).toBe(300);
    expect(r.next()).toBe(true);
    expect(r.sint32()).toBe(-12345);
    expect(r.next()).toBe(true);
    expect(r.wire).toBe(WIRE_LEN);
    expect(r.string()).toBe("héllo");
    expect(r.next()).toBe(true);
    expect(r.wire).toBe(WIRE_FIXED64);
    expect(r.double()).toBe(-2.5);
    expect(r.next()).toBe(true);
    expect(hex(r.bytes())).toBe("00ff");
    expect(r.next()).toBe(false);
    expect(r.failed).toBe(false);
  });

  it("skips unknown fields of every wire type (varint, fixed64, len, fixed32)", () => {
    // field 7 varint 1; field 8 fixed64; field 9 len 2; field 10 fixed32; field 1 varint 5
    const r = new ProtoReader(bytes("3801" + "410102030405060708" + "4a02abcd" + "5501020304" + "0805"));
    let seen = 0;
    while (r.next()) {
      if (r.field == 1) expect(r.varint()).toBe(5);
      else r.skip();
      seen++;
    }
    expect(seen).toBe(5);
    expect(r.failed).toBe(false);
  });

  it("fails without trapping on malformed input", () => {
    const rows: string[] = [
      "08", // truncated varint value
      "0880", // varint continues past the end
      "0a05616263", // length beyond the end
      "00", // field number 0
      "0b", // wire type 3 (group start) is not supported
      "09010203", // fixed64 truncated
      "0affffffff0f00", // length that does not fit
    ];
    for (let i = 0; i < rows.length; i++) {
      const r = new ProtoReader(bytes(rows[i]));
      while (r.next()) r.skip();
      expect(r.failed).toBe(true, rows[i]);
    }
  });

  it("reads a submessage without running past it", () => {
    // field 3 { 1: 150, 2: <cut off> } then field 2: 7 in the outer message
    const r = new ProtoReader(bytes("1a0408960110" + "1007"));
    expect(r.next()).toBe(true);
    const inner = r.message();
    expect(inner.next()).toBe(true);
    expect(inner.varint()).toBe(150);
    expect(inner.next()).toBe(true);
    expect(inner.field).toBe(2);
    // the inner reader ends at the submessage's end: its last varint is cut off
    inner.varint();
    expect(inner.failed).toBe(true);
    expect(r.failed).toBe(false);
    expect(r.next()).toBe(true);
    expect(r.field).toBe(2);
    expect(r.varint()).toBe(7);
  });
});

describe("base64 (RFC 4648 §10, standard alphabet, padded)", () => {
  it("encodes and decodes the RFC vectors", () => {
    const rows: string[][] = [
      ["", ""], ["f", "Zg=="], ["fo", "Zm8="], ["foo", "Zm9v"],
      ["foob", "Zm9vYg=="], ["fooba", "Zm9vYmE="], ["foobar", "Zm9vYmFy"],
    ];
    for (let i = 0; i < rows.length; i++) {
      expect(base64Encode(ascii(rows[i][0]))).toBe(rows[i][1], rows[i][0]);
      expect(hex(base64Decode(rows[i][1])!)).toBe(hex(ascii(rows[i][0])), rows[i][1]);
    }
  });

  it("uses + and / (not the URL alphabet)", () => {
    expect(base64Encode(bytes("fbff"))).toBe("+/8=");
    expect(hex(base64Decode("+/8=")!)).toBe("fbff");
    expect(base64Decode("-_8=")).toBeNull();
  });

  it("round-trips every byte value and long inputs", () => {
    const all = new Uint8Array(256 * 5 + 1);
    for (let i = 0; i < all.length; i++) all[i] = <u8>i;
    const text = base64Encode(all);
    expect(text.length).toBe(((all.length + 2) / 3) * 4);
    expect(hex(base64Decode(text)!)).toBe(hex(all));
  });

  it("refuses text that is not padded standard base64", () => {
    const rows: string[] = ["Zg", "Zg=", "Zm9", "Z===", "Zg=a", "=Zg=", "Zm9v!A==", "Zm 9v", "Zm9v\n", "Z=g="];
    for (let i = 0; i < rows.length; i++) expect(base64Decode(rows[i])).toBeNull(rows[i]);
  });
});

describe("Attributes codec (mesh.hub.v1.Attributes)", () => {
  it("encodes a string attribute as a map entry (hand-encoded vector)", () => {
    const bag = new AttributeBag();
    bag.setString("a", "b");
    // 1: entry { 1: "a", 2: AttributeValue { 2: "b" } }
    expect(hex(encodeAttributes(bag))).toBe("0a080a01611203120162");
    expect(hex(encodeAttributes(new AttributeBag()))).toBe("");
  });

  it("round-trips every value kind", () => {
    const m = new StringMap();
    m.set("x-user", "alice");
    m.set("", "");
    const bag = new AttributeBag();
    bag.setString("s", "héllo");
    bag.setString("empty", "");
    bag.set("i", AttributeValue.ofInt64(-42));
    bag.set("big", AttributeValue.ofInt64(I64.MAX_VALUE));
    bag.set("d", AttributeValue.ofDouble(3.25));
    bag.set("t", AttributeValue.ofBool(true));
    bag.set("f", AttributeValue.ofBool(false));
    bag.set("ip", AttributeValue.ofBytes(bytes("0a000001")));
    bag.set("ts", AttributeValue.ofTimestampNanos(1_700_000_000_000_000_005));
    bag.set("dur", AttributeValue.ofDurationNanos(1_500_000_000));
    bag.set("zero", AttributeValue.ofDurationNanos(0));
    bag.set("m", AttributeValue.ofMap(m));
    const back = decodeAttributes(encodeAttributes(bag))!;
    expect(back.names).toStrictEqual(bag.names);
    expect(back.getString("s")).toBe("héllo");
    expect(back.getString("empty")).toBe("");
    expect(back.get("i")!.int).toBe(-42);
    expect(back.get("big")!.int).toBe(I64.MAX_VALUE);
    expect(back.get("d")!.double).toBe(3.25);
    expect(back.get("t")!.bool).toBe(true);
    expect(back.get("f")!.kind).toBe(ValueKind.Bool);
    expect(back.get("f")!.bool).toBe(false);
    expect(hex(back.get("ip")!.bytes!)).toBe("0a000001");
    expect(back.get("ts")!.kind).toBe(ValueKind.Timestamp);
    expect(back.get("ts")!.int).toBe(1_700_000_000);
    expect(back.get("ts")!.nanos).toBe(5);
    expect(back.get("dur")!.kind).toBe(ValueKind.Duration);
    expect(back.get("dur")!.int).toBe(1);
    expect(back.get("dur")!.nanos).toBe(500_000_000);
    expect(back.get("zero")!.kind).toBe(ValueKind.Duration);
    const bm = back.get("m")!.map!;
    expect(bm.keys).toStrictEqual(["x-user", ""]);
    expect(bm.get("x-user")).toBe("alice");
  });

  it("decodes the empty message as an empty bag and ignores unknown fields", () => {
    expect(decodeAttributes(new Uint8Array(0))!.size).toBe(0);
    // field 5 varint before the entry; field 9 inside the entry
    const back = decodeAttributes(bytes("2801" + "0a0a0a0161120312016248" + "01"))!;
    expect(back.getString("a")).toBe("b");
  });

  it("keeps the last value of a repeated map key (proto3 map rule)", () => {
    const back = decodeAttributes(bytes("0a080a016112031201" + "62" + "0a080a016112031201" + "63"))!;
    expect(back.size).toBe(1);
    expect(back.getString("a")).toBe("c");
  });

  it("returns null for malformed framing", () => {
    const rows: string[] = ["0a", "0a09", "0a080a0161120312", "0a030a0561", "ff"];
    for (let i = 0; i < rows.length; i++) expect(decodeAttributes(bytes(rows[i]))).toBeNull(rows[i]);
  });

  // A protobuf parser rejects the whole message when a nested message is
  // malformed (upstream parsed the header with ParseFromString and ignored it
  // on failure, hub-client §2.5). Here the entry for "a" carries an
  // AttributeValue whose string length runs past its end.
  it("returns null when a nested AttributeValue is malformed", () => {
    expect(decodeAttributes(bytes("0a080a01611203120562"))).toBeNull();
  });
});

function bytesOfLength(n: i32): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = <u8>(i * 31 + 7);
  return b;
}
