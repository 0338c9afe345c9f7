import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import protobuf from "protobufjs";
import { ENVOY_PROTO_INCLUDE_DIRS } from "../../host/wire/envoy_protos.ts";
import { WRAPPERS, encodeProto3Json } from "../../host/wire/proto_json.ts";

// Every file of Envoy's v3 API (the control plane's loader, host/wire/envoy_protos.ts,
// loads only the files it serves), from the same folders, for strict decoding.
const INCLUDE = ENVOY_PROTO_INCLUDE_DIRS;
const ENVOY_API = INCLUDE[0];

function protoFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? protoFiles(path) : name.endsWith(".proto") ? [path] : [];
  });
}

function locate(target: string): string | undefined {
  for (const dir of INCLUDE) if (existsSync(join(dir, target))) return join(dir, target);
  if (target.startsWith("google/protobuf/")) return target; // protobufjs's built-in well-known types
  return undefined;
}

const IMPORT = /^import\s+(?:public\s+|weak\s+)?"([^"]+)";/gm;

/** Whether a file's imports all exist, transitively (a few v2-era files import protos that are not shipped). */
function complete(target: string, memo: Map<string, boolean>): boolean {
  const known = memo.get(target);
  if (known !== undefined) return known;
  memo.set(target, true);
  const path = locate(target);
  let ok = path !== undefined;
  if (path && !target.startsWith("google/protobuf/")) {
    for (const m of readFileSync(path, "utf8").matchAll(IMPORT)) if (!complete(m[1], memo)) ok = false;
  }
  memo.set(target, ok);
  return ok;
}

let cached: protobuf.Root | undefined;

/** Every .proto of Envoy's API whose imports are shipped, so any type an `Any` names can be resolved. */
export function envoyRoot(): protobuf.Root {
  if (cached) return cached;
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => locate(target) ?? target;
  const memo = new Map<string, boolean>();
  const files = protoFiles(join(ENVOY_API, "envoy"))
    .map((f) => relative(ENVOY_API, f))
    .filter((f) => complete(f, memo));
  root.loadSync(files, { keepCase: true });
  root.resolveAll();
  cached = root;
  return root;
}

/**
 * Decodes proto3 JSON into `type` strictly (host/wire/proto_json.ts) and
 * returns the message re-decoded from its binary encoding, with the type
 * URLs of every `Any` met on the way.
 */
export function decodeStrict(root: protobuf.Root, typeName: string, json: unknown): { message: protobuf.Message; anyTypes: string[] } {
  const { bytes, anyTypes } = encodeProto3Json(root, typeName, json);
  return { message: root.lookupType(typeName).decode(bytes), anyTypes };
}

/**
 * Decodes a served resource (an `Any`) with Envoy's protos, strictly: its
 * type and the type of every `Any` inside must be in Envoy's API, and the
 * bytes must carry no field the type does not have (re-encoding gives them
 * back exactly). Returns proto3 JSON-like objects (`@type` in each Any) and
 * the type URLs met.
 */
export function decodeAnyStrict(
  root: protobuf.Root,
  any: { type_url: string; value: Uint8Array },
  path = "resource",
): { object: Record<string, any>; anyTypes: string[] } {
  const anyTypes: string[] = [];
  return { object: unpackStrict(root, any, path, anyTypes), anyTypes };
}

function unpackStrict(root: protobuf.Root, any: { type_url: string; value: Uint8Array }, path: string, anyTypes: string[]): Record<string, any> {
  const name = any.type_url.slice(any.type_url.lastIndexOf("/") + 1);
  let type: protobuf.Type;
  try {
    type = root.lookupType(name);
  } catch {
    throw new Error(`${path}: ${any.type_url} is not a message of Envoy's v3 API`);
  }
  anyTypes.push(any.type_url);
  const message = type.decode(any.value);
  const again = type.encode(message).finish();
  if (Buffer.compare(Buffer.from(again), Buffer.from(any.value)) !== 0) throw new Error(`${path} (${name}): fields ${name} does not have`);
  return { "@type": any.type_url, ...walk(root, type, message as unknown as Record<string, unknown>, path, anyTypes) };
}

function walk(root: protobuf.Root, type: protobuf.Type, message: Record<string, unknown>, path: string, anyTypes: string[]): Record<string, any> {
  const plain = type.toObject(message as unknown as protobuf.Message, { longs: String, enums: String, defaults: false }) as Record<string, any>;
  for (const field of type.fieldsArray) {
    const resolved = field.resolvedType;
    const value = message[field.name];
    if (!(resolved instanceof protobuf.Type) || value === undefined || value === null) continue;
    if ((field.repeated && (value as unknown[]).length === 0) || (field.map && Object.keys(value as object).length === 0)) continue;
    const one = (v: unknown, p: string): unknown => {
      if (resolved.fullName === ".google.protobuf.Any") return unpackStrict(root, v as { type_url: string; value: Uint8Array }, p, anyTypes);
      // Wrappers and durations in their JSON form, as Envoy's YAML writes them.
      if (resolved.fullName in WRAPPERS)
        return (
          (resolved.toObject(v as protobuf.Message, { longs: String }) as { value?: unknown }).value ??
          (WRAPPERS[resolved.fullName] === "bool" ? false : WRAPPERS[resolved.fullName] === "string" ? "" : 0)
        );
      if (resolved.fullName === ".google.protobuf.Duration") {
        const d = v as { seconds?: number | { toString(): string }; nanos?: number };
        const nanos = d.nanos ?? 0;
        return `${String(d.seconds ?? 0)}${nanos ? `.${String(nanos).padStart(9, "0").replace(/0+$/, "")}` : ""}s`;
      }
      return walk(root, resolved, v as Record<string, unknown>, p, anyTypes);
    };
    if (field.map) plain[field.name] = Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, one(v, `${path}.${field.name}[${k}]`)]));
    else if (field.repeated) plain[field.name] = (value as unknown[]).map((v, i) => one(v, `${path}.${field.name}[${i}]`));
    else plain[field.name] = one(value, `${path}.${field.name}`);
  }
  return plain;
}
