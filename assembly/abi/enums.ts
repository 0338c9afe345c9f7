// Enumerations of the proxy-wasm ABI (shared/research/proxy-wasm.md §1.2–1.3).

export const enum Status {
  Ok = 0,
  NotFound = 1,
  BadArgument = 2,
}

export const enum LogLevel {
  Trace = 0,
  Debug = 1,
  Info = 2,
  Warn = 3,
  Error = 4,
  Critical = 5,
}

export const enum Action {
  Continue = 0,
  Pause = 1,
}

export const enum MapType {
  RequestHeaders = 0,
  RequestTrailers = 1,
  ResponseHeaders = 2,
  ResponseTrailers = 3,
  GrpcInitialMetadata = 4,
  GrpcTrailingMetadata = 5,
}

export const enum BufferType {
  RequestBody = 0,
  ResponseBody = 1,
  DownstreamData = 2,
  UpstreamData = 3,
  GrpcReceiveBuffer = 5,
  VmConfiguration = 6,
  PluginConfiguration = 7,
}

export const enum StreamType {
  Request = 0,
  Response = 1,
  /** TCP: data from the client. */
  Downstream = 2,
  /** TCP: data from the upstream server. */
  Upstream = 3,
}

/** Who closed a TCP connection (proxy_on_*_connection_close). */
export const enum PeerType {
  Unknown = 0,
  Local = 1,
  Remote = 2,
}

export const enum MetricType {
  Counter = 0,
  Gauge = 1,
  Histogram = 2,
}

/** proxy_send_local_response's grpc_status argument for "none". */
export const NO_GRPC_STATUS: i32 = -1;
