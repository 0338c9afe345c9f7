// Enumerations of the proxy-wasm ABI 0.2.1 as the host sees them
// (shared/research/proxy-wasm.md §1.2–1.3).

export const enum WasmStatus {
  Ok = 0,
  NotFound = 1,
  BadArgument = 2,
  SerializationFailure = 3,
  InvalidMemoryAccess = 6,
  Empty = 7,
  InternalFailure = 10,
}

export const enum MapType {
  RequestHeaders = 0,
  RequestTrailers = 1,
  ResponseHeaders = 2,
  ResponseTrailers = 3,
  GrpcInitialMetadata = 4,
  GrpcTrailingMetadata = 5,
  HttpCallResponseHeaders = 6,
  HttpCallResponseTrailers = 7,
}

export const enum BufferType {
  RequestBody = 0,
  ResponseBody = 1,
  DownstreamData = 2,
  UpstreamData = 3,
  HttpCallResponseBody = 4,
  GrpcReceiveBuffer = 5,
  VmConfiguration = 6,
  PluginConfiguration = 7,
}

export const enum StreamType {
  Request = 0,
  Response = 1,
  /** TCP: bytes from the client. */
  Downstream = 2,
  /** TCP: bytes from the upstream server. */
  Upstream = 3,
}

/** Who closed a TCP connection, as proxy_on_*_connection_close is told. */
export const enum PeerType {
  Unknown = 0,
  Local = 1,
  Remote = 2,
}

/** What a header/body callback asked for. Anything other than Continue stops the stream. */
export const enum Action {
  Continue = 0,
  Pause = 1,
}

export const enum MetricKind {
  Counter = 0,
  Gauge = 1,
  Histogram = 2,
}

export type HeaderList = Array<[string, string]>;

/** A local reply the module sent with proxy_send_local_response. */
export interface LocalReply {
  status: number;
  details: string;
  body: string;
  headers: HeaderList;
  grpcStatus: number;
}

/** A gRPC call the module dispatched with proxy_grpc_call. */
export interface GrpcCall {
  token: number;
  rootId: number;
  cluster: string;
  service: string;
  method: string;
  metadata: HeaderList;
  message: Uint8Array;
  timeoutMs: number;
}
