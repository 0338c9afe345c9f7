import { ACCESS_LOG_SERVICE } from "../wire/envoy_grpc.ts";
import { GrpcStreamSink } from "./grpc_stream_sink.ts";
import type { AccessRecord } from "./http/connection_manager.ts";

/** The log name upstream's control plane gives HTTP entries sent to an access log service. */
export const HTTP_ACCESS_LOG_NAME = "http_envoy_accesslog";
/** Envoy's gRPC access log defaults: entries are buffered and sent every second, or once about 16 KiB are buffered. */
export const ACCESS_LOG_FLUSH_INTERVAL_MS = 1000;
const MAX_BATCH_ENTRIES = 64;
/** Entries kept between two flushes at most; beyond this they are dropped and counted. */
const MAX_BUFFERED_ENTRIES = 10_000;

const timestamp = (ms: number) => ({ seconds: String(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1_000_000 });
const duration = (ns: bigint) => ({ seconds: String(ns / 1_000_000_000n), nanos: Number(ns % 1_000_000_000n) });
const socketAddress = (address: string, port: number) => ({ socket_address: { address: address.replace(/^::ffff:(?=\d+\.)/, ""), port_value: port } });

function upstreamAddress(hostPort: string): Record<string, unknown> {
  const colon = hostPort.lastIndexOf(":");
  return socketAddress(hostPort.slice(0, colon).replace(/^\[|\]$/g, ""), Number(hostPort.slice(colon + 1)));
}

/** Envoy's response flags for the proxy's own answers (local reply details). */
const RESPONSE_FLAGS: Readonly<Record<string, Record<string, unknown>>> = {
  upstream_connect_error: { upstream_connection_failure: true },
  upstream_response_timeout: { upstream_request_timeout: true },
  no_healthy_upstream: { no_healthy_upstream: true },
  upstream_overflow: { upstream_overflow: true },
  no_upstream: { no_route_found: true },
  fault_filter_abort: { fault_injected: true },
  rbac_access_denied: { unauthorized_details: { reason: "EXTERNAL_SERVICE" } },
  ext_authz_denied: { unauthorized_details: { reason: "EXTERNAL_SERVICE" } },
  ext_authz_error: { unauthorized_details: { reason: "EXTERNAL_SERVICE" } },
};

const REQUEST_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"]);
const header = (h: AccessRecord["headers"], name: string) => {
  const v = h[name];
  return Array.isArray(v) ? v.join(",") : (v ?? "");
};

/** One request as envoy.data.accesslog.v3.HTTPAccessLogEntry (object form, the proto's field names). */
export function httpAccessLogEntry(r: AccessRecord): Record<string, unknown> {
  const flags = r.localReplyDetails ? RESPONSE_FLAGS[r.localReplyDetails] : undefined;
  const authority = r.authority;
  const port = /:(\d+)$/.exec(authority)?.[1];
  const strings = (o: Record<string, string>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== ""));
  return {
    common_properties: {
      downstream_remote_address: socketAddress(r.downstreamRemote.address, r.downstreamRemote.port),
      downstream_local_address: socketAddress(r.downstreamLocal.address, r.downstreamLocal.port),
      start_time: timestamp(r.startedAt),
      time_to_last_downstream_tx_byte: duration(r.durationNs),
      duration: duration(r.durationNs),
      ...(r.upstream ? { upstream_remote_address: upstreamAddress(r.upstream) } : {}),
      ...(flags ? { response_flags: flags } : {}),
      // An AUDIT policy matched: upstream's RBAC LOG filter sets this dynamic metadata (a google.protobuf.Struct in its message form; protobufjs names Value's fields in camelCase).
      ...(r.accessLogHint ? { metadata: { filter_metadata: { "envoy.common": { fields: { access_log_hint: { boolValue: true } } } } } } : {}),
      access_log_type: "DownstreamEnd",
    },
    protocol_version: r.httpVersion === "1.0" ? "HTTP10" : "HTTP11",
    request: {
      request_method: REQUEST_METHODS.has(r.method) ? r.method : "METHOD_UNSPECIFIED",
      scheme: "http",
      ...strings({
        authority,
        path: r.path,
        user_agent: header(r.headers, "user-agent"),
        referer: header(r.headers, "referer"),
        forwarded_for: header(r.headers, "x-forwarded-for"),
        request_id: header(r.headers, "x-request-id"),
        original_path: r.originalPath ?? "",
      }),
      ...(port ? { port: { value: Number(port) } } : {}),
      request_body_bytes: String(r.requestBodyBytes),
    },
    response: {
      ...(r.status > 0 ? { response_code: { value: r.status } } : {}),
      response_body_bytes: String(r.responseBodyBytes),
      ...(r.localReplyDetails
        ? { response_code_details: r.localReplyDetails }
        : { response_code_details: r.status > 0 ? "via_upstream" : "downstream_remote_disconnect" }),
    },
  };
}

export interface AccessLogServiceOptions {
  /** `host:port` of the envoy.service.accesslog.v3.AccessLogService. */
  address: string;
  /** The sidecar's node (`id`, `cluster`), sent in each stream's identifier. */
  node: { id: string; cluster: string };
  onError: (e: Error) => void;
  flushIntervalMs?: number;
}

/**
 * `--proxyAccessLogService`: every request of the inbound and outbound
 * listeners sent to an Envoy access log service as Envoy's gRPC access log
 * does (StreamAccessLogs, HTTPAccessLogEntry), buffered and flushed every
 * second or per 64 entries, and once more on close.
 */
export class AccessLogServiceClient {
  private readonly sink: GrpcStreamSink;
  private buffer: Array<Record<string, unknown>> = [];
  private readonly timer: NodeJS.Timeout;
  /** Entries handed to the service's stream, and entries dropped because too many were waiting. */
  readonly stats = { written: 0, dropped: 0 };

  constructor(options: AccessLogServiceOptions) {
    this.sink = new GrpcStreamSink({
      address: options.address,
      service: ACCESS_LOG_SERVICE,
      method: "StreamAccessLogs",
      identifier: { node: options.node, log_name: HTTP_ACCESS_LOG_NAME },
      onError: options.onError,
    });
    this.timer = setInterval(() => this.flush(), options.flushIntervalMs ?? ACCESS_LOG_FLUSH_INTERVAL_MS);
    this.timer.unref();
  }

  log(record: AccessRecord): void {
    if (this.buffer.length >= MAX_BUFFERED_ENTRIES) {
      this.stats.dropped++;
      return;
    }
    this.buffer.push(httpAccessLogEntry(record));
    if (this.buffer.length >= MAX_BATCH_ENTRIES) this.flush();
  }

  flush(): void {
    if (this.buffer.length === 0) return;
    const entries = this.buffer;
    this.buffer = [];
    this.sink.send({ http_logs: { log_entry: entries } });
    this.stats.written += entries.length;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.flush();
    await this.sink.close();
  }
}
