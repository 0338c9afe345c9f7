import type Long from "long";

/**
 * An AttributeValue in the proto3 JSON mapping: exactly one member, e.g.
 * `{"stringValue":"/a"}`, `{"int64Value":"0"}`, `{"timestampValue":"2026-11-22T10:00:00Z"}`,
 * `{"durationValue":"1.500s"}`, `{"bytesValue":"AQID"}`, `{"stringMapValue":{"entries":{…}}}`.
 * This is the attribute format of `meshctl x hub-eval` and the hub's access log.
 */
export type AttributeJson =
  | { stringValue: string }
  | { int64Value: string }
  | { doubleValue: number | string }
  | { boolValue: boolean }
  | { bytesValue: string }
  | { timestampValue: string }
  | { durationValue: string }
  | { stringMapValue: { entries: Record<string, string> } };

type Int64 = number | Long | string | bigint;
interface SecondsNanos {
  seconds?: Int64 | null;
  nanos?: number | null;
}

/** A decoded `mesh.hub.v1.AttributeValue` as protobufjs produces it (camelCase members). */
export interface DecodedAttributeValue {
  stringValue?: string | null;
  int64Value?: Int64 | null;
  doubleValue?: number | null;
  boolValue?: boolean | null;
  bytesValue?: Uint8Array | null;
  timestampValue?: SecondsNanos | null;
  durationValue?: SecondsNanos | null;
  stringMapValue?: { entries?: Record<string, string> | null } | null;
  value?: string;
}

function int64Text(v: Int64 | null | undefined): string {
  return v === null || v === undefined ? "0" : v.toString();
}

/** RFC 3339 in UTC with 0, 3, 6 or 9 fractional digits, as proto3 JSON prints a Timestamp. */
export function timestampJson(seconds: bigint, nanos: number): string {
  const iso = new Date(Number(seconds) * 1000).toISOString().replace(/\.\d{3}Z$/, "");
  return `${iso}${fraction(nanos)}Z`;
}

/** Seconds with 0, 3, 6 or 9 fractional digits and an `s`, as proto3 JSON prints a Duration. */
export function durationJson(seconds: bigint, nanos: number): string {
  const negative = seconds < 0n || nanos < 0;
  const abs = (seconds < 0n ? -seconds : seconds).toString();
  return `${negative ? "-" : ""}${abs}${fraction(Math.abs(nanos))}s`;
}

function fraction(nanos: number): string {
  if (nanos === 0) return "";
  const digits = nanos.toString().padStart(9, "0");
  if (nanos % 1_000_000 === 0) return `.${digits.slice(0, 3)}`;
  if (nanos % 1000 === 0) return `.${digits.slice(0, 6)}`;
  return `.${digits}`;
}

export function attributeValueToJson(v: DecodedAttributeValue): AttributeJson {
  const which = v.value ?? Object.keys(v).find((k) => (v as Record<string, unknown>)[k] != null);
  switch (which) {
    case "stringValue":
      return { stringValue: v.stringValue ?? "" };
    case "int64Value":
      return { int64Value: int64Text(v.int64Value) };
    case "doubleValue": {
      const d = v.doubleValue ?? 0;
      return { doubleValue: Number.isFinite(d) ? d : Number.isNaN(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity" };
    }
    case "boolValue":
      return { boolValue: v.boolValue ?? false };
    case "bytesValue":
      return { bytesValue: Buffer.from(v.bytesValue ?? new Uint8Array()).toString("base64") };
    case "timestampValue":
      return { timestampValue: timestampJson(BigInt(int64Text(v.timestampValue?.seconds)), v.timestampValue?.nanos ?? 0) };
    case "durationValue":
      return { durationValue: durationJson(BigInt(int64Text(v.durationValue?.seconds)), v.durationValue?.nanos ?? 0) };
    case "stringMapValue":
      return { stringMapValue: { entries: sortedRecord(v.stringMapValue?.entries ?? {}) } };
    default:
      throw new Error(`attribute value without a value: ${JSON.stringify(v)}`);
  }
}

/** Attributes keyed by name, names in sorted order so output is stable. */
export function attributesToJson(map: Record<string, DecodedAttributeValue>): Record<string, AttributeJson> {
  const out: Record<string, AttributeJson> = {};
  for (const name of Object.keys(map).sort()) defineEntry(out, name, attributeValueToJson(map[name]));
  return out;
}

function sortedRecord(r: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(r).sort()) defineEntry(out, k, r[k]);
  return out;
}

// An attribute or map key named "__proto__" is data: plain assignment would
// set the object's prototype and lose it from the JSON.
function defineEntry<T>(out: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
}
