import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import protobuf from "protobufjs";
import { encodeProto3Json } from "./proto_json.ts";

// Envoy's v3 API as @grpc/grpc-js-xds ships it (deps/envoy-api with xds,
// googleapis and protoc-gen-validate beside it): the real protos, so what
// the control plane serves is what Envoy and gRPC clients decode.
const require = createRequire(import.meta.url);
const DEPS = join(dirname(require.resolve("@grpc/grpc-js-xds/package.json")), "deps");
// google/protobuf/*.proto (descriptor, any, duration, …) come with protobufjs.
export const ENVOY_PROTO_INCLUDE_DIRS: readonly string[] = [
  join(DEPS, "envoy-api"),
  join(DEPS, "xds"),
  join(DEPS, "googleapis"),
  join(DEPS, "protoc-gen-validate"),
  dirname(require.resolve("protobufjs/package.json")),
];

/** The files whose messages the control plane builds; their imports come along. */
const SERVED_FILES = [
  "envoy/service/discovery/v3/discovery.proto",
  "envoy/config/listener/v3/listener.proto",
  "envoy/config/route/v3/route.proto",
  "envoy/config/cluster/v3/cluster.proto",
  "envoy/config/endpoint/v3/endpoint.proto",
  "envoy/config/core/v3/extension.proto",
  "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto",
  "envoy/extensions/filters/http/router/v3/router.proto",
  "envoy/extensions/filters/http/wasm/v3/wasm.proto",
  "envoy/extensions/transport_sockets/tls/v3/tls.proto",
  "envoy/extensions/transport_sockets/tls/v3/secret.proto",
  "envoy/extensions/transport_sockets/raw_buffer/v3/raw_buffer.proto",
  "envoy/config/bootstrap/v3/bootstrap.proto",
  "envoy/extensions/filters/listener/original_dst/v3/original_dst.proto",
  "envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.proto",
  "envoy/extensions/upstreams/http/v3/http_protocol_options.proto",
  "envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector.proto",
  "envoy/extensions/filters/http/jwt_authn/v3/config.proto",
  "envoy/extensions/filters/http/rbac/v3/rbac.proto",
  "envoy/extensions/filters/network/rbac/v3/rbac.proto",
  "envoy/extensions/filters/http/ext_authz/v3/ext_authz.proto",
  "envoy/extensions/filters/network/ext_authz/v3/ext_authz.proto",
  "envoy/extensions/filters/listener/http_inspector/v3/http_inspector.proto",
  "envoy/extensions/filters/network/redis_proxy/v3/redis_proxy.proto",
  "envoy/extensions/filters/network/thrift_proxy/v3/thrift_proxy.proto",
  "envoy/extensions/filters/network/thrift_proxy/router/v3/router.proto",
];

function locate(target: string): string {
  for (const dir of ENVOY_PROTO_INCLUDE_DIRS) if (existsSync(join(dir, target))) return join(dir, target);
  return target;
}

let root: protobuf.Root | undefined;

/** Envoy's v3 messages the control plane serves (loaded once, about a second). */
export function envoyProtos(): protobuf.Root {
  if (root) return root;
  const r = new protobuf.Root();
  r.resolvePath = (_origin, target) => locate(target);
  r.loadSync(SERVED_FILES, { keepCase: true });
  r.resolveAll();
  root = r;
  return r;
}

export const TYPE_URL_PREFIX = "type.googleapis.com/";

/** The message type named `name` (e.g. `envoy.config.listener.v3.Listener`). */
export function envoyType(name: string): protobuf.Type {
  return envoyProtos().lookupType(name);
}

/**
 * `value` (snake_case object form; enums by name) encoded as a
 * google.protobuf.Any of type `name`. A field the type does not have throws,
 * naming its path: protobufjs would drop it silently, and a proxy would then
 * run without it.
 */
export function packAny(name: string, value: Record<string, unknown>): { type_url: string; value: Uint8Array } {
  const type = envoyType(name);
  checkFields(type, value, name);
  return { type_url: TYPE_URL_PREFIX + name, value: type.encode(type.fromObject(value)).finish() };
}

function checkFields(type: protobuf.Type, value: unknown, path: string): void {
  if (value === null || typeof value !== "object" || value instanceof Uint8Array) return;
  if (type.fullName === ".google.protobuf.Any" || type.fullName === ".google.protobuf.Struct") return;
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    const field = type.fields[key];
    if (!field) throw new Error(`${path}.${key}: not a field of ${type.fullName.slice(1)}`);
    const resolved = field.resolve().resolvedType;
    if (!(resolved instanceof protobuf.Type)) continue;
    if (field.map) for (const [k, item] of Object.entries(v as Record<string, unknown>)) checkFields(resolved, item, `${path}.${key}[${k}]`);
    else if (Array.isArray(v)) v.forEach((item, i) => checkFields(resolved, item, `${path}.${key}[${i}]`));
    else checkFields(resolved, v, `${path}.${key}`);
  }
}

/**
 * Proto3 JSON (the form of Envoy's YAML configuration: `@type`, "1s") encoded
 * as a google.protobuf.Any of type `name`, strictly (host/wire/proto_json.ts).
 */
export function packJson(name: string, json: Record<string, unknown>): { type_url: string; value: Uint8Array } {
  return { type_url: TYPE_URL_PREFIX + name, value: encodeProto3Json(envoyProtos(), name, json).bytes };
}

/** Decodes an Any of a known Envoy type back to its object form (for debug pages and tests). */
export function unpackAny(any: { type_url: string; value: Uint8Array }): Record<string, unknown> {
  const type = envoyType(any.type_url.slice(TYPE_URL_PREFIX.length));
  return type.toObject(type.decode(any.value), { longs: String, enums: String, defaults: false }) as Record<string, unknown>;
}
