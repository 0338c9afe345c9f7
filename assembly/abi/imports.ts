// Host functions of the proxy-wasm ABI 0.2.1, imported from module `env`.
// Declarations only; arities follow the ABI tables exactly, because a proxy
// refuses a module whose import signatures differ from its own
// (shared/research/proxy-wasm.md §1.3). Each returns a status (0 = OK).

@external("env", "proxy_log")
export declare function proxy_log(level: u32, messagePtr: usize, messageLen: usize): u32;

@external("env", "proxy_get_current_time_nanoseconds")
export declare function proxy_get_current_time_nanoseconds(outNanos: usize): u32;

@external("env", "proxy_set_tick_period_milliseconds")
export declare function proxy_set_tick_period_milliseconds(periodMs: u32): u32;

@external("env", "proxy_get_buffer_bytes")
export declare function proxy_get_buffer_bytes(bufferType: u32, start: u32, maxSize: u32, outPtr: usize, outLen: usize): u32;

@external("env", "proxy_get_header_map_pairs")
export declare function proxy_get_header_map_pairs(mapType: u32, outPtr: usize, outLen: usize): u32;

@external("env", "proxy_replace_header_map_value")
export declare function proxy_replace_header_map_value(mapType: u32, keyPtr: usize, keyLen: usize, valuePtr: usize, valueLen: usize): u32;

@external("env", "proxy_add_header_map_value")
export declare function proxy_add_header_map_value(mapType: u32, keyPtr: usize, keyLen: usize, valuePtr: usize, valueLen: usize): u32;

@external("env", "proxy_remove_header_map_value")
export declare function proxy_remove_header_map_value(mapType: u32, keyPtr: usize, keyLen: usize): u32;

@external("env", "proxy_get_property")
export declare function proxy_get_property(pathPtr: usize, pathLen: usize, outPtr: usize, outLen: usize): u32;

@external("env", "proxy_continue_stream")
export declare function proxy_continue_stream(streamType: u32): u32;

@external("env", "proxy_close_stream")
export declare function proxy_close_stream(streamType: u32): u32;

@external("env", "proxy_send_local_response")
export declare function proxy_send_local_response(
  statusCode: u32,
  detailsPtr: usize,
  detailsLen: usize,
  bodyPtr: usize,
  bodyLen: usize,
  headersPtr: usize,
  headersLen: usize,
  grpcStatus: i32,
): u32;

@external("env", "proxy_grpc_call")
export declare function proxy_grpc_call(
  upstreamPtr: usize,
  upstreamLen: usize,
  servicePtr: usize,
  serviceLen: usize,
  methodPtr: usize,
  methodLen: usize,
  metadataPtr: usize,
  metadataLen: usize,
  messagePtr: usize,
  messageLen: usize,
  timeoutMs: u32,
  outToken: usize,
): u32;

@external("env", "proxy_grpc_cancel")
export declare function proxy_grpc_cancel(token: u32): u32;

@external("env", "proxy_get_status")
export declare function proxy_get_status(outCode: usize, outMessagePtr: usize, outMessageLen: usize): u32;

@external("env", "proxy_set_effective_context")
export declare function proxy_set_effective_context(contextId: u32): u32;

@external("env", "proxy_define_metric")
export declare function proxy_define_metric(metricType: u32, namePtr: usize, nameLen: usize, outId: usize): u32;

@external("env", "proxy_increment_metric")
export declare function proxy_increment_metric(metricId: u32, delta: i64): u32;

@external("env", "proxy_done")
export declare function proxy_done(): u32;
