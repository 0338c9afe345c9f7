import type { AttributeJson } from "../../wire/attribute_json.ts";
import type { Field } from "../decode.ts";

/** Attributes as configured: name → one proto3-JSON value member. */
export type Attributes = Record<string, AttributeJson>;

const KINDS = ["stringValue", "int64Value", "doubleValue", "boolValue", "bytesValue", "timestampValue", "durationValue", "stringMapValue"] as const;
const SNAKE: Record<string, (typeof KINDS)[number]> = {
  string_value: "stringValue",
  int64_value: "int64Value",
  double_value: "doubleValue",
  bool_value: "boolValue",
  bytes_value: "bytesValue",
  timestamp_value: "timestampValue",
  duration_value: "durationValue",
  string_map_value: "stringMapValue",
};
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * Decodes an `Attributes` message ({attributes: {name: {stringValue: …}}}) into
 * canonical camelCase members, checking each value's type.
 */
export function decodeAttributes(field: Field): Attributes | undefined {
  if (!field.present) return undefined;
  field.allowOnly(["attributes"]);
  const out: Attributes = {};
  for (const [name, value] of field.get("attributes").entries()) {
    const members = Object.keys(value.object());
    if (members.length !== 1) value.invalid(`expected exactly one of ${KINDS.join(", ")}`);
    const kind = SNAKE[members[0]] ?? members[0];
    const member = value.get(members[0]);
    switch (kind) {
      case "stringValue":
        out[name] = { stringValue: member.string() };
        break;
      case "int64Value":
        out[name] = { int64Value: String(member.integer(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)) };
        break;
      case "doubleValue":
        if (typeof member.value !== "number") member.fail("a number");
        out[name] = { doubleValue: member.value as number };
        break;
      case "boolValue":
        out[name] = { boolValue: member.bool() };
        break;
      case "bytesValue": {
        const text = member.string();
        if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) member.fail("base64 text");
        out[name] = { bytesValue: text };
        break;
      }
      case "timestampValue": {
        const text = member.string();
        if (!RFC3339.test(text)) member.fail('an RFC 3339 timestamp such as "2026-01-02T03:04:05Z"');
        out[name] = { timestampValue: text };
        break;
      }
      case "durationValue":
        member.durationMs();
        out[name] = { durationValue: member.string() };
        break;
      case "stringMapValue":
        member.allowOnly(["entries"]);
        out[name] = { stringMapValue: { entries: member.get("entries").stringMap() } };
        break;
      default:
        member.invalid(`unknown attribute value kind (expected one of ${KINDS.join(", ")})`);
    }
  }
  return out;
}

/** Back to the message form the filter's configuration takes. */
export function encodeAttributes(a: Attributes | undefined): { attributes: Attributes } | undefined {
  return a === undefined ? undefined : { attributes: a };
}
