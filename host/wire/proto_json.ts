import protobuf from "protobufjs";

// Proto3 JSON, the form Envoy reads its YAML/JSON configuration in, turned
// into protobuf messages with nothing dropped: protobufjs's own fromObject
// ignores unknown fields and knows neither the JSON form of Duration nor of
// wrappers, so a typo would reach a proxy as a missing setting.

const camel = (name: string) => name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
const INT = /^-?\d+$/;

/**
 * Encodes proto3 JSON (as Envoy reads YAML/JSON configuration: `@type` in an
 * `Any`, durations as "1.5s", wrappers as plain values) as `typeName`,
 * strictly: an unknown field, a wrongly typed value, two members of one oneof
 * or an `Any` naming a type `root` does not have throw, naming the path.
 * Returns the bytes and the type URLs of every `Any` met on the way.
 */
export function encodeProto3Json(root: protobuf.Root, typeName: string, json: unknown): { bytes: Uint8Array; anyTypes: string[] } {
  const anyTypes: string[] = [];
  const type = root.lookupType(typeName);
  const plain = toObject(root, type, json, typeName, anyTypes);
  return { bytes: type.encode(type.fromObject(plain)).finish(), anyTypes };
}

function fail(path: string, expected: string, got: unknown): never {
  throw new Error(`${path}: expected ${expected}, got ${JSON.stringify(got)}`);
}

function toObject(root: protobuf.Root, type: protobuf.Type, json: unknown, path: string, anyTypes: string[]): Record<string, unknown> {
  const wkt = wellKnown(root, type, json, path, anyTypes);
  if (wkt !== undefined) return wkt;
  if (typeof json !== "object" || json === null || Array.isArray(json)) fail(path, `an object (${type.fullName.slice(1)})`, json);
  const out: Record<string, unknown> = {};
  const byJsonName = new Map<string, protobuf.Field>();
  for (const f of type.fieldsArray) {
    byJsonName.set(f.name, f);
    byJsonName.set(camel(f.name), f);
  }
  const oneofSet = new Map<string, string>();
  for (const [key, value] of Object.entries(json as Record<string, unknown>)) {
    const field = byJsonName.get(key);
    if (!field) throw new Error(`${path}.${key}: no such field in ${type.fullName.slice(1)}`);
    if (value === null) continue;
    if (field.partOf) {
      const earlier = oneofSet.get(field.partOf.name);
      if (earlier) throw new Error(`${path}.${key}: oneof ${field.partOf.name} already set by ${earlier}`);
      oneofSet.set(field.partOf.name, key);
    }
    const fieldPath = `${path}.${key}`;
    if (field.map) {
      if (typeof value !== "object" || Array.isArray(value)) fail(fieldPath, "a map (object)", value);
      const map: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value as Record<string, unknown>))
        map[k] = fieldValue(root, field, v, `${fieldPath}[${JSON.stringify(k)}]`, anyTypes);
      out[field.name] = map;
    } else if (field.repeated) {
      if (!Array.isArray(value)) fail(fieldPath, "a list", value);
      out[field.name] = value.map((v, i) => fieldValue(root, field, v, `${fieldPath}[${i}]`, anyTypes));
    } else {
      out[field.name] = fieldValue(root, field, value, fieldPath, anyTypes);
    }
  }
  return out;
}

function fieldValue(root: protobuf.Root, field: protobuf.Field, value: unknown, path: string, anyTypes: string[]): unknown {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) return toObject(root, resolved, value, path, anyTypes);
  if (resolved instanceof protobuf.Enum) {
    if (typeof value === "string" && value in resolved.values) return resolved.values[value];
    if (typeof value === "number" && Number.isInteger(value)) return value;
    fail(path, `one of ${Object.keys(resolved.values).join(", ")}`, value);
  }
  return scalar(field.type, value, path);
}

function scalar(kind: string, value: unknown, path: string): unknown {
  switch (kind) {
    case "string":
      if (typeof value !== "string") fail(path, "a string", value);
      return value;
    case "bool":
      if (typeof value !== "boolean") fail(path, "true or false", value);
      return value;
    case "bytes":
      if (typeof value !== "string" || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(value)) fail(path, "base64 bytes", value);
      return Buffer.from(value, "base64");
    case "double":
    // biome-ignore lint/suspicious/noFallthroughSwitchClause: fail() throws
    case "float":
      if (typeof value === "number" || (typeof value === "string" && value !== "" && !Number.isNaN(Number(value)))) return Number(value);
      fail(path, "a number", value);
    default: {
      // int32, uint32, int64, uint64, sint*, fixed*, sfixed*: a JSON number or a decimal string.
      const text = typeof value === "number" ? String(value) : value;
      if (typeof text !== "string" || !INT.test(text)) fail(path, `an integer (${kind})`, value);
      if (kind.startsWith("u") || kind.startsWith("fixed")) {
        if (text.startsWith("-")) fail(path, `a non-negative integer (${kind})`, value);
      }
      if (kind.endsWith("32") && (Number(text) > 4294967295 || Number(text) < -2147483648)) fail(path, `a 32-bit integer (${kind})`, value);
      return kind.endsWith("64") ? text : Number(text);
    }
  }
}

export const WRAPPERS: Readonly<Record<string, string>> = {
  ".google.protobuf.DoubleValue": "double",
  ".google.protobuf.FloatValue": "float",
  ".google.protobuf.Int64Value": "int64",
  ".google.protobuf.UInt64Value": "uint64",
  ".google.protobuf.Int32Value": "int32",
  ".google.protobuf.UInt32Value": "uint32",
  ".google.protobuf.BoolValue": "bool",
  ".google.protobuf.StringValue": "string",
  ".google.protobuf.BytesValue": "bytes",
};
const DURATION = /^(-?)(\d+)(?:\.(\d{1,9}))?s$/;
/** RFC 3339 in UTC or with an offset, as proto3 JSON writes a Timestamp ("2017-01-15T01:30:15.01Z"). */
const TIMESTAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

/** Well-known types with their own JSON forms; undefined for ordinary messages. */
function wellKnown(root: protobuf.Root, type: protobuf.Type, json: unknown, path: string, anyTypes: string[]): Record<string, unknown> | undefined {
  const name = type.fullName;
  if (name in WRAPPERS) return { value: scalar(WRAPPERS[name], json, path) };
  switch (name) {
    case ".google.protobuf.Duration": {
      const m = typeof json === "string" ? DURATION.exec(json) : null;
      if (!m) fail(path, 'a duration such as "1.5s"', json);
      const sign = m[1] === "-" ? -1 : 1;
      return { seconds: String(sign * Number(m[2])), nanos: sign * Number((m[3] ?? "").padEnd(9, "0")) };
    }
    case ".google.protobuf.Timestamp": {
      const m = typeof json === "string" ? TIMESTAMP.exec(json) : null;
      const ms = m ? Date.parse(`${m[1]}${m[3]}`) : Number.NaN;
      if (!m || Number.isNaN(ms)) fail(path, 'an RFC 3339 time such as "2017-01-15T01:30:15.01Z"', json);
      return { seconds: String(Math.floor(ms / 1000)), nanos: Number((m[2] ?? "").padEnd(9, "0")) };
    }
    case ".google.protobuf.Struct":
      if (typeof json !== "object" || json === null || Array.isArray(json)) fail(path, "an object (Struct)", json);
      return { fields: Object.fromEntries(Object.entries(json).map(([k, v]) => [k, structValue(v)])) };
    case ".google.protobuf.Value":
      return structValue(json);
    case ".google.protobuf.Any": {
      if (typeof json !== "object" || json === null) fail(path, "an Any object with @type", json);
      const { "@type": typeUrl, ...rest } = json as Record<string, unknown>;
      if (typeof typeUrl !== "string" || !typeUrl.includes("/")) fail(`${path}.@type`, "a type URL", typeUrl);
      const inner = typeUrl.slice(typeUrl.lastIndexOf("/") + 1);
      let innerType: protobuf.Type;
      try {
        innerType = root.lookupType(inner);
      } catch {
        throw new Error(`${path}.@type: ${inner} is not a message of Envoy's v3 API (or not loaded)`);
      }
      anyTypes.push(typeUrl);
      // Well-known types inside an Any carry their JSON form in "value".
      const body = innerType.fullName.startsWith(".google.protobuf.") && "value" in rest ? rest.value : rest;
      const innerObject = toObject(root, innerType, body, `${path}(${inner})`, anyTypes);
      return { type_url: typeUrl, value: innerType.encode(innerType.fromObject(innerObject)).finish() };
    }
    default:
      return undefined;
  }
}

// protobufjs defines the well-known types itself, with camelCase field names whatever `keepCase` says.
function structValue(v: unknown): Record<string, unknown> {
  if (v === null) return { nullValue: 0 };
  if (typeof v === "number") return { numberValue: v };
  if (typeof v === "string") return { stringValue: v };
  if (typeof v === "boolean") return { boolValue: v };
  if (Array.isArray(v)) return { listValue: { values: v.map(structValue) } };
  return { structValue: { fields: Object.fromEntries(Object.entries(v as object).map(([k, x]) => [k, structValue(x)])) } };
}
