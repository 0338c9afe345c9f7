import { createRequire } from "node:module";
import * as grpc from "@grpc/grpc-js";
import { ENVOY_PROTO_INCLUDE_DIRS } from "./envoy_protos.ts";
import { PROTO_DIR } from "./protos.ts";

/**
 * A gRPC service of Envoy's v3 API (the sinks Envoy streams to: access log
 * service, metrics service), from the protos @grpc/grpc-js-xds ships and
 * ours for what it leaves out (io/prometheus/client/metrics.proto). Messages
 * are plain objects with the protos' field names (snake_case), enums by
 * name, 64-bit integers as strings; oneofs name their member.
 */
export function envoyService(file: string, service: string, enums: typeof String | typeof Number = String): grpc.ServiceClientConstructor {
  const definition = protoLoader().loadSync(file, {
    includeDirs: [...ENVOY_PROTO_INCLUDE_DIRS, PROTO_DIR],
    keepCase: true,
    longs: String,
    enums,
    defaults: false,
    oneofs: true,
  });
  let node: unknown = grpc.loadPackageDefinition(definition);
  for (const part of service.split(".")) node = (node as Record<string, unknown>)[part];
  if (typeof node !== "function") throw new Error(`${service} is not a service of ${file}`);
  return node as grpc.ServiceClientConstructor;
}

export const ACCESS_LOG_SERVICE = { file: "envoy/service/accesslog/v3/als.proto", service: "envoy.service.accesslog.v3.AccessLogService" } as const;
/** Enums by number: `HttpStatus.code` is the HTTP status itself. */
export const AUTHORIZATION_SERVICE = { file: "envoy/service/auth/v3/external_auth.proto", service: "envoy.service.auth.v3.Authorization" } as const;
export const METRICS_SERVICE = { file: "envoy/service/metrics/v3/metrics_service.proto", service: "envoy.service.metrics.v3.MetricsService" } as const;

/**
 * @grpc/proto-loader (and protobufjs's descriptor extension under it), loaded
 * the first time a service is asked for: most sidecars configure no sink and
 * no ext_authz provider, and loading it cost about 0.09 s of CPU at every
 * sidecar's start (a sidecar of `meshctl x simulate`, a daemon started by a
 * test). A CommonJS package, so it loads synchronously, as this function returns.
 */
function protoLoader(): typeof import("@grpc/proto-loader") {
  return (loaded ??= createRequire(import.meta.url)("@grpc/proto-loader") as typeof import("@grpc/proto-loader"));
}
let loaded: typeof import("@grpc/proto-loader") | undefined;
