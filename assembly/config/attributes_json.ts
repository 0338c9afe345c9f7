import { AttributeBag } from "../attributes/bag";
import { AttributeValue, StringMap } from "../attributes/value";
import { JsonKind, JsonValue } from "../json";
import { base64Decode } from "../proto/base64";
import { ConfigReader, parseDurationNanos } from "./reader";

// Attributes in configuration use the proto3 JSON mapping of
// mesh.hub.v1.Attributes: {"attributes": {"api.service": {"stringValue": "petstore"}}}.
// Value members are accepted in lowerCamelCase and in snake_case, as protobuf
// JSON parsers accept both.

const KIND_NAMES: StaticArray<string> = [
  "stringValue", "string_value",
  "int64Value", "int64_value",
  "doubleValue", "double_value",
  "boolValue", "bool_value",
  "bytesValue", "bytes_value",
  "timestampValue", "timestamp_value",
  "durationValue", "duration_value",
  "stringMapValue", "string_map_value",
];

export function readAttributes(r: ConfigReader, v: JsonValue | null, path: string): AttributeBag {
  const bag = new AttributeBag();
  const obj = r.object(v, path);
  if (obj === null) return bag;
  for (let i = 0; i < obj.keys.length; i++) {
    if (obj.keys[i] != "attributes") r.fail(path + "." + obj.keys[i], "unknown field (expected \"attributes\")");
  }
  const map = r.object(r.member(obj, "attributes"), path + ".attributes");
  if (map === null) return bag;
  for (let i = 0; i < map.keys.length; i++) {
    const name = map.keys[i];
    const valuePath = path + ".attributes[" + name + "]";
    const value = readValue(r, map.values[i], valuePath);
    if (value !== null) bag.set(name, value as AttributeValue);
  }
  return bag;
}

function readValue(r: ConfigReader, v: JsonValue, path: string): AttributeValue | null {
  if (v.kind != JsonKind.Object || v.keys.length != 1) {
    r.fail(path, "expected an object with exactly one of stringValue, int64Value, doubleValue, boolValue, bytesValue, timestampValue, durationValue, stringMapValue");
    return null;
  }
  const key = v.keys[0];
  const member = v.values[0];
  let kind = -1;
  for (let i = 0; i < KIND_NAMES.length; i++) if (KIND_NAMES[i] == key) kind = i / 2;
  const at = path + "." + key;
  switch (kind) {
    case 0:
      return AttributeValue.ofString(r.string(member, at));
    case 1:
      return AttributeValue.ofInt64(r.integer(member, at, I64.MIN_VALUE, I64.MAX_VALUE));
    case 2: {
      if (member.kind == JsonKind.Number) return AttributeValue.ofDouble(parseFloat(member.numberText));
      r.fail(at, "expected a number");
      return null;
    }
    case 3:
      return AttributeValue.ofBool(r.bool(member, at));
    case 4: {
      const bytes = base64Decode(r.string(member, at));
      if (bytes === null) {
        r.fail(at, "expected base64 text");
        return null;
      }
      return AttributeValue.ofBytes(bytes as Uint8Array);
    }
    case 5: {
      const nanos = parseTimestampNanos(r.string(member, at));
      if (nanos == I64.MIN_VALUE) {
        r.fail(at, "expected an RFC 3339 timestamp such as \"2026-01-02T03:04:05Z\"");
        return null;
      }
      return AttributeValue.ofTimestampNanos(nanos);
    }
    case 6: {
      const nanos = parseDurationNanos(r.string(member, at));
      if (nanos == I64.MIN_VALUE) {
        r.fail(at, "expected a duration such as \"1.5s\"");
        return null;
      }
      return AttributeValue.ofDurationNanos(nanos);
    }
    case 7: {
      const m = new StringMap();
      const obj = r.object(member, at);
      const entries = r.object(r.member(obj, "entries"), at + ".entries");
      if (entries !== null) {
        for (let i = 0; i < entries.keys.length; i++) {
          m.set(entries.keys[i], r.string(entries.values[i], at + ".entries[" + entries.keys[i] + "]"));
        }
      }
      return AttributeValue.ofMap(m);
    }
  }
  r.fail(at, "unknown attribute value kind");
  return null;
}

function digits(s: string, at: i32, n: i32): i32 {
  if (at + n > s.length) return -1;
  let v = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(at + i);
    if (c < 0x30 || c > 0x39) return -1;
    v = v * 10 + (c - 0x30);
  }
  return v;
}

// Days from 1970-01-01 to the given civil date (proleptic Gregorian).
function daysFromCivil(y: i64, m: i64, d: i64): i64 {
  y -= m <= 2 ? 1 : 0;
  const era = (y >= 0 ? y : y - 399) / 400;
  const yoe = y - era * 400;
  const doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

/** RFC 3339 (`2026-01-02T03:04:05.123Z`, `…+02:00`) → Unix nanoseconds; I64.MIN_VALUE if malformed. */
export function parseTimestampNanos(s: string): i64 {
  const year = digits(s, 0, 4);
  const month = digits(s, 5, 2);
  const day = digits(s, 8, 2);
  const hour = digits(s, 11, 2);
  const minute = digits(s, 14, 2);
  const second = digits(s, 17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60) return I64.MIN_VALUE;
  if (s.charCodeAt(4) != 0x2d || s.charCodeAt(7) != 0x2d || (s.charCodeAt(10) | 0x20) != 0x74 || s.charCodeAt(13) != 0x3a || s.charCodeAt(16) != 0x3a) return I64.MIN_VALUE;
  let pos = 19;
  let nanos: i64 = 0;
  if (pos < s.length && s.charCodeAt(pos) == 0x2e) {
    pos++;
    let scale: i64 = 100_000_000;
    const start = pos;
    while (pos < s.length && s.charCodeAt(pos) >= 0x30 && s.charCodeAt(pos) <= 0x39) {
      nanos += <i64>(s.charCodeAt(pos) - 0x30) * scale;
      scale /= 10;
      pos++;
    }
    if (pos == start) return I64.MIN_VALUE;
  }
  let offsetSeconds: i64 = 0;
  if (pos < s.length && (s.charCodeAt(pos) | 0x20) == 0x7a) pos++;
  else if (pos < s.length && (s.charCodeAt(pos) == 0x2b || s.charCodeAt(pos) == 0x2d)) {
    const oh = digits(s, pos + 1, 2);
    const om = digits(s, pos + 4, 2);
    if (oh < 0 || om < 0 || s.charCodeAt(pos + 3) != 0x3a) return I64.MIN_VALUE;
    offsetSeconds = <i64>(oh * 3600 + om * 60) * (s.charCodeAt(pos) == 0x2b ? 1 : -1);
    pos += 6;
  } else return I64.MIN_VALUE;
  if (pos != s.length) return I64.MIN_VALUE;
  const days = daysFromCivil(year, month, day);
  const seconds = days * 86400 + <i64>hour * 3600 + <i64>minute * 60 + <i64>second - offsetSeconds;
  return seconds * 1_000_000_000 + nanos;
}

