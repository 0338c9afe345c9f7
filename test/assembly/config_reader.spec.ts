// Typed reads from the plugin configuration with field paths in errors, and
// the proto3 JSON mapping of durations, timestamps and mesh.hub.v1.Attributes
// (protobuf.dev/programming-guides/proto3#json; RFC 3339 for timestamps).
import { ConfigReader, parseDurationNanos } from "../../assembly/config/reader";
import { parseTimestampNanos, readAttributes } from "../../assembly/config/attributes_json";
import { JsonValue, parseJson } from "../../assembly/json";
import { ValueKind } from "../../assembly/attributes/value";
import { AttributeBag } from "../../assembly/attributes/bag";

function json(text: string): JsonValue {
  const r = parseJson(text);
  expect(r.error).toBe("", text);
  return r.value!;
}

const BAD: i64 = I64.MIN_VALUE;

describe("ConfigReader", () => {
  it("reads typed members and keeps the first error with its path", () => {
    const r = new ConfigReader();
    const o = json("{\"s\":\"x\",\"b\":true,\"n\":null,\"a\":[1],\"o\":{}}");
    expect(r.string(r.member(o, "s"), "p.s")).toBe("x");
    expect(r.bool(r.member(o, "b"), "p.b")).toBe(true);
    expect(r.member(o, "n")).toBeNull(); // JSON null = absent
    expect(r.array(r.member(o, "a"), "p.a").length).toBe(1);
    expect(r.object(r.member(o, "o"), "p.o")).not.toBeNull();
    expect(r.string(null, "p.missing", "dflt")).toBe("dflt");
    expect(r.bool(null, "p.missing")).toBe(false);
    expect(r.array(null, "p.missing").length).toBe(0);
    expect(r.failed).toBe(false);
    expect(r.string(r.member(o, "b"), "p.b")).toBe("");
    expect(r.bool(r.member(o, "s"), "p.s")).toBe(false);
    expect(r.error).toBe("p.b: expected a string");
  });

  it("names the wrong kind for object, list, string and bool", () => {
    const rows: string[][] = [["object", "p: expected an object"], ["array", "p: expected a list"], ["string", "p: expected a string"], ["bool", "p: expected true or false"]];
    for (let i = 0; i < rows.length; i++) {
      const r = new ConfigReader();
      const v = json("42");
      if (rows[i][0] == "object") r.object(v, "p");
      else if (rows[i][0] == "array") r.array(v, "p");
      else if (rows[i][0] == "string") r.string(v, "p");
      else r.bool(v, "p");
      expect(r.error).toBe(rows[i][1]);
    }
  });

  it("reads integers from JSON numbers and decimal strings (proto JSON int64)", () => {
    const rows: string[][] = [["5", "5"], ["\"5\"", "5"], ["-7", "-7"], ["\"9223372036854775807\"", "9223372036854775807"], ["0", "0"]];
    for (let i = 0; i < rows.length; i++) {
      const r = new ConfigReader();
      expect(r.integer(json(rows[i][0]), "p", I64.MIN_VALUE, I64.MAX_VALUE).toString()).toBe(rows[i][1], rows[i][0]);
      expect(r.failed).toBe(false, rows[i][0]);
    }
    expect(new ConfigReader().integer(null, "p", 0, 10, 3)).toBe(3);
  });

  it("refuses non-integers and out-of-range integers, naming the field", () => {
    const rows: string[] = ["1.5", "\"\"", "\"1x\"", "true", "\"-\"", "1e3", "11", "-1"];
    for (let i = 0; i < rows.length; i++) {
      const r = new ConfigReader();
      expect(r.integer(json(rows[i]), "x.charge", 0, 10, 1)).toBe(1, rows[i]);
      expect(r.error.startsWith("x.charge: expected an integer")).toBe(true, rows[i] + " -> " + r.error);
    }
  });

  // A 20-digit number passes the length check and wraps in I64.parseInt:
  // 18446744073709551617 = 2^64 + 1 is read as 1 and accepted.
  it("refuses integers that overflow 64 bits", () => {
    const rows: string[] = ["18446744073709551617", "\"18446744073709551617\"", "99999999999999999999"];
    for (let i = 0; i < rows.length; i++) {
      const r = new ConfigReader();
      r.integer(json(rows[i]), "x.charge", 1, 2147483647, 1);
      expect(r.failed).toBe(true, rows[i]);
    }
  });

  it("reads durations as strings or {seconds, nanos}", () => {
    const r = new ConfigReader();
    expect(r.durationNanos(json("\"1.5s\""), "p", 0)).toBe(1_500_000_000);
    expect(r.durationNanos(json("{\"seconds\":2,\"nanos\":5}"), "p", 0)).toBe(2_000_000_005);
    expect(r.durationNanos(json("{\"seconds\":\"3\"}"), "p", 0)).toBe(3_000_000_000);
    expect(r.durationNanos(null, "p", 77)).toBe(77);
    expect(r.failed).toBe(false);
    expect(r.durationNanos(json("5"), "t.maxRetryWait", 77)).toBe(77);
    expect(r.error).toBe("t.maxRetryWait: expected a duration such as \"1s\" or \"0.250s\"");
  });
});

describe("parseDurationNanos", () => {
  it("reads proto JSON durations and the units people write", () => {
    const rows: string[][] = [
      ["1s", "1000000000"], ["1.5s", "1500000000"], ["0.250s", "250000000"], ["0.000000001s", "1"],
      ["-2s", "-2000000000"], ["-0.5s", "-500000000"], ["250ms", "250000000"], ["1.5ms", "1500000"],
      ["10us", "10000"], ["10µs", "10000"], ["7ns", "7"], ["2m", "120000000000"], ["1h", "3600000000000"],
      ["0s", "0"],
    ];
    for (let i = 0; i < rows.length; i++) expect(parseDurationNanos(rows[i][0]).toString()).toBe(rows[i][1], rows[i][0]);
  });

  it("refuses malformed durations", () => {
    const rows: string[] = ["", "s", "1", "1.s", ".5s", "1.0000000001s", "1m30s", "--1s", "1 s", "1S", "abc", "1.-5s", "+1s", "1d"];
    for (let i = 0; i < rows.length; i++) expect(parseDurationNanos(rows[i])).toBe(BAD, rows[i]);
  });
});

describe("parseTimestampNanos (RFC 3339)", () => {
  it("reads UTC and offset forms with fractions", () => {
    const rows: string[][] = [
      ["1970-01-01T00:00:00Z", "0"],
      ["2026-01-02T03:04:05Z", "1767323045000000000"],
      ["2026-01-02T03:04:05.123Z", "1767323045123000000"],
      ["2026-01-02T05:04:05+02:00", "1767323045000000000"],
      ["2026-01-02T01:04:05-02:00", "1767323045000000000"],
      ["2026-01-02t03:04:05z", "1767323045000000000"],
      ["1969-12-31T23:59:59Z", "-1000000000"],
      ["2000-02-29T00:00:00.000000001Z", "951782400000000001"],
    ];
    for (let i = 0; i < rows.length; i++) expect(parseTimestampNanos(rows[i][0]).toString()).toBe(rows[i][1], rows[i][0]);
  });

  it("refuses malformed timestamps", () => {
    const rows: string[] = [
      "", "2026-01-02", "2026-01-02T03:04:05", "2026-13-02T03:04:05Z", "2026-01-00T03:04:05Z",
      "2026-01-02T24:04:05Z", "2026-01-02 03:04:05Z", "2026/01/02T03:04:05Z", "2026-01-02T03:04:05.Z",
      "2026-01-02T03:04:05+0200", "2026-01-02T03:04:05Zjunk",
    ];
    for (let i = 0; i < rows.length; i++) expect(parseTimestampNanos(rows[i])).toBe(BAD, rows[i]);
  });
});

function attrs(text: string, r: ConfigReader): AttributeBag {
  return readAttributes(r, json(text), "cfg.hubAttributes");
}

describe("readAttributes (proto3 JSON of mesh.hub.v1.Attributes)", () => {
  it("reads every value kind, camelCase and snake_case", () => {
    const r = new ConfigReader();
    const bag = attrs("{\"attributes\":{" +
      "\"s\":{\"stringValue\":\"petstore\"}," +
      "\"s2\":{\"string_value\":\"x\"}," +
      "\"i\":{\"int64Value\":\"-9223372036854775808\"}," +
      "\"i2\":{\"int64_value\":42}," +
      "\"d\":{\"doubleValue\":1.25}," +
      "\"b\":{\"boolValue\":true}," +
      "\"y\":{\"bytesValue\":\"CgAAAQ==\"}," +
      "\"t\":{\"timestampValue\":\"1970-01-01T00:00:01.5Z\"}," +
      "\"u\":{\"durationValue\":\"0.5s\"}," +
      "\"m\":{\"stringMapValue\":{\"entries\":{\"k\":\"v\",\"k2\":\"\"}}}," +
      "\"m2\":{\"string_map_value\":{}}" +
      "}}", r);
    expect(r.error).toBe("");
    expect(bag.getString("s")).toBe("petstore");
    expect(bag.getString("s2")).toBe("x");
    expect(bag.get("i")!.int).toBe(I64.MIN_VALUE);
    expect(bag.get("i2")!.int).toBe(42);
    expect(bag.get("d")!.double).toBe(1.25);
    expect(bag.get("b")!.bool).toBe(true);
    expect(bag.get("y")!.bytes!.length).toBe(4);
    expect(bag.get("y")!.bytes![0]).toBe(10);
    expect(bag.get("t")!.kind).toBe(ValueKind.Timestamp);
    expect(bag.get("t")!.int).toBe(1);
    expect(bag.get("t")!.nanos).toBe(500_000_000);
    expect(bag.get("u")!.kind).toBe(ValueKind.Duration);
    expect(bag.get("u")!.nanos).toBe(500_000_000);
    expect(bag.get("m")!.map!.get("k")).toBe("v");
    expect(bag.get("m")!.map!.get("k2")).toBe("");
    expect(bag.get("m2")!.map!.size).toBe(0);
    expect(bag.names).toStrictEqual(["s", "s2", "i", "i2", "d", "b", "y", "t", "u", "m", "m2"]);
  });

  it("accepts an absent value and an empty attributes map", () => {
    const r = new ConfigReader();
    expect(readAttributes(r, null, "p").size).toBe(0);
    expect(attrs("{}", r).size).toBe(0);
    expect(attrs("{\"attributes\":{}}", r).size).toBe(0);
    expect(r.failed).toBe(false);
  });

  it("names the field path of every bad value", () => {
    const rows: string[][] = [
      ["[]", "cfg.hubAttributes: expected an object"],
      ["{\"attrs\":{}}", "cfg.hubAttributes.attrs: unknown field (expected \"attributes\")"],
      ["{\"attributes\":[]}", "cfg.hubAttributes.attributes: expected an object"],
      ["{\"attributes\":{\"a\":\"v\"}}", "cfg.hubAttributes.attributes[a]: expected an object with exactly one of"],
      ["{\"attributes\":{\"a\":{}}}", "cfg.hubAttributes.attributes[a]: expected an object with exactly one of"],
      ["{\"attributes\":{\"a\":{\"stringValue\":\"x\",\"int64Value\":1}}}", "cfg.hubAttributes.attributes[a]: expected an object with exactly one of"],
      ["{\"attributes\":{\"a\":{\"textValue\":\"x\"}}}", "cfg.hubAttributes.attributes[a].textValue: unknown attribute value kind"],
      ["{\"attributes\":{\"a\":{\"stringValue\":1}}}", "cfg.hubAttributes.attributes[a].stringValue: expected a string"],
      ["{\"attributes\":{\"a\":{\"int64Value\":\"1.5\"}}}", "cfg.hubAttributes.attributes[a].int64Value: expected an integer"],
      ["{\"attributes\":{\"a\":{\"doubleValue\":\"x\"}}}", "cfg.hubAttributes.attributes[a].doubleValue: expected a number"],
      ["{\"attributes\":{\"a\":{\"boolValue\":\"true\"}}}", "cfg.hubAttributes.attributes[a].boolValue: expected true or false"],
      ["{\"attributes\":{\"a\":{\"bytesValue\":\"!!\"}}}", "cfg.hubAttributes.attributes[a].bytesValue: expected base64 text"],
      ["{\"attributes\":{\"a\":{\"timestampValue\":\"yesterday\"}}}", "cfg.hubAttributes.attributes[a].timestampValue: expected an RFC 3339 timestamp"],
      ["{\"attributes\":{\"a\":{\"durationValue\":\"1 s\"}}}", "cfg.hubAttributes.attributes[a].durationValue: expected a duration"],
      ["{\"attributes\":{\"a\":{\"stringMapValue\":{\"entries\":{\"k\":1}}}}}", "cfg.hubAttributes.attributes[a].stringMapValue.entries[k]: expected a string"],
      ["{\"attributes\":{\"a\":{\"stringMapValue\":{\"entries\":[]}}}}", "cfg.hubAttributes.attributes[a].stringMapValue.entries: expected an object"],
    ];
    for (let i = 0; i < rows.length; i++) {
      const r = new ConfigReader();
      attrs(rows[i][0], r);
      expect(r.error.startsWith(rows[i][1])).toBe(true, rows[i][0] + " -> " + r.error);
    }
  });
});
