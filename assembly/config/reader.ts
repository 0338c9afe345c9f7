import { JsonKind, JsonValue } from "../json";

/**
 * Reads typed values out of the plugin configuration's JSON, recording the
 * first problem with its field path (`httpClientConfig.transport.maxRetry: …`).
 * Readers return a default after a problem, so compilation can run to the end
 * and report one precise error instead of trapping.
 */
export class ConfigReader {
  error: string = "";
  /** Problems that do not refuse the configuration, each "path: message". */
  warnings: Array<string> = [];

  get failed(): bool {
    return this.error.length > 0;
  }

  fail(path: string, message: string): void {
    if (this.error.length == 0) this.error = path + ": " + message;
  }

  warn(path: string, message: string): void {
    this.warnings.push(path + ": " + message);
  }

  member(obj: JsonValue | null, name: string): JsonValue | null {
    if (obj === null) return null;
    const v = (obj as JsonValue).get(name);
    if (v === null || (v as JsonValue).kind == JsonKind.Null) return null;
    return v;
  }

  object(v: JsonValue | null, path: string): JsonValue | null {
    if (v === null) return null;
    if ((v as JsonValue).kind != JsonKind.Object) {
      this.fail(path, "expected an object");
      return null;
    }
    return v;
  }

  array(v: JsonValue | null, path: string): Array<JsonValue> {
    if (v === null) return [];
    if ((v as JsonValue).kind != JsonKind.Array) {
      this.fail(path, "expected a list");
      return [];
    }
    return (v as JsonValue).items;
  }

  string(v: JsonValue | null, path: string, defaultValue: string = ""): string {
    if (v === null) return defaultValue;
    if ((v as JsonValue).kind != JsonKind.String) {
      this.fail(path, "expected a string");
      return defaultValue;
    }
    return (v as JsonValue).str;
  }

  bool(v: JsonValue | null, path: string): bool {
    if (v === null) return false;
    if ((v as JsonValue).kind != JsonKind.Bool) {
      this.fail(path, "expected true or false");
      return false;
    }
    return (v as JsonValue).bool;
  }

  /** An integer in [min, max], as a JSON number or a decimal string (proto JSON int64). */
  integer(v: JsonValue | null, path: string, min: i64, max: i64, defaultValue: i64 = 0): i64 {
    if (v === null) return defaultValue;
    const value = v as JsonValue;
    let text = "";
    if (value.kind == JsonKind.Number) text = value.numberText;
    else if (value.kind == JsonKind.String) text = value.str;
    if (!isDecimalInteger(text)) {
      this.fail(path, "expected an integer");
      return defaultValue;
    }
    const n = I64.parseInt(text);
    if (n < min || n > max) {
      this.fail(path, "expected an integer from " + min.toString() + " to " + max.toString());
      return defaultValue;
    }
    return n;
  }

  /** A protobuf JSON duration (`"1.5s"`, `"0.250s"`) or `{seconds, nanos}`, in nanoseconds. */
  durationNanos(v: JsonValue | null, path: string, defaultValue: i64): i64 {
    if (v === null) return defaultValue;
    const value = v as JsonValue;
    if (value.kind == JsonKind.Object) {
      const s = this.integer(value.get("seconds"), path + ".seconds", -315576000000, 315576000000);
      const n = this.integer(value.get("nanos"), path + ".nanos", -999999999, 999999999);
      return s * 1_000_000_000 + n;
    }
    if (value.kind == JsonKind.String) {
      const parsed = parseDurationNanos(value.str);
      if (parsed != I64.MIN_VALUE) return parsed;
    }
    this.fail(path, "expected a duration such as \"1s\" or \"0.250s\"");
    return defaultValue;
  }
}

function isDecimalInteger(text: string): bool {
  return decimalInRange(text);
}

// True when `text` is a decimal integer that fits an i64. Digits accumulate
// in a u64 with an explicit bound so parsing can never wrap silently.
function decimalInRange(text: string): bool {
  const negative = text.length > 0 && text.charCodeAt(0) == 0x2d;
  const start = negative ? 1 : 0;
  if (text.length == start || text.length - start > 19) return false;
  const limit: u64 = negative ? 9223372036854775808 : 9223372036854775807;
  let value: u64 = 0;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
    const digit = <u64>(c - 0x30);
    if (value > (limit - digit) / 10) return false;
    value = value * 10 + digit;
  }
  return true;
}

const UNITS: StaticArray<string> = ["ns", "us", "µs", "ms", "s", "m", "h"];
const UNIT_NANOS: StaticArray<i64> = [1, 1000, 1000, 1_000_000, 1_000_000_000, 60_000_000_000, 3_600_000_000_000];

/**
 * `1.5s`, `250ms`, `-2s`, `1h` → nanoseconds; I64.MIN_VALUE if malformed.
 * One unit per value (proto JSON writes seconds; people write ms, m, h).
 */
export function parseDurationNanos(text: string): i64 {
  let unit = -1;
  for (let u = UNITS.length - 1; u >= 0; u--) {
    if (text.endsWith(UNITS[u])) {
      // "ms" also ends with "s": prefer the longer unit.
      if (unit < 0 || UNITS[u].length > UNITS[unit].length) unit = u;
    }
  }
  if (unit < 0) return I64.MIN_VALUE;
  let body = text.substring(0, text.length - UNITS[unit].length);
  let negative = false;
  if (body.startsWith("-")) {
    negative = true;
    body = body.substring(1);
  }
  const dot = body.indexOf(".");
  const whole = dot < 0 ? body : body.substring(0, dot);
  const frac = dot < 0 ? "" : body.substring(dot + 1);
  if (whole.length == 0 || !isDecimalInteger(whole) || whole.startsWith("-")) return I64.MIN_VALUE;
  if (dot >= 0 && (frac.length == 0 || frac.length > 9 || !isDecimalInteger(frac) || frac.startsWith("-"))) return I64.MIN_VALUE;
  let fracNanos: i64 = 0;
  if (frac.length > 0) {
    let padded = frac;
    while (padded.length < 9) padded += "0";
    fracNanos = (I64.parseInt(padded) * UNIT_NANOS[unit]) / 1_000_000_000;
  }
  const total = I64.parseInt(whole) * UNIT_NANOS[unit] + fracNanos;
  return negative ? -total : total;
}
