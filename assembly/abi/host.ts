import { StringMap } from "../attributes/value";
import { HeaderMap } from "../attributes/header_map";
import { decodeHeadersInto, decodePairs, encodePairs } from "../pairs";
import { BufferType, LogLevel, MapType, MetricType, NO_GRPC_STATUS, Status, StreamType } from "./enums";
import * as abi from "./imports";
import { dropHostBlock, freeHostBlock, hostBlockLength, hostBlockPtr, scratchLenSlot, scratchPtrSlot, scratchU64Slot, takeHostBytes, takeHostString, utf8 } from "./marshal";

// Typed wrappers over the host functions. Failures come back as values (null,
// false, a status): a trap would take the whole VM down.

export function log(level: LogLevel, message: string): void {
  const bytes = utf8(message);
  abi.proxy_log(level, changetype<usize>(bytes), <usize>bytes.byteLength);
}

export function nowNanos(): i64 {
  abi.proxy_get_current_time_nanoseconds(scratchU64Slot());
  return load<i64>(scratchU64Slot());
}

export function setTickPeriodMs(ms: u32): void {
  abi.proxy_set_tick_period_milliseconds(ms);
}

export function bufferText(buffer: BufferType, size: u32): string | null {
  if (size == 0) return "";
  if (abi.proxy_get_buffer_bytes(buffer, 0, size, scratchPtrSlot(), scratchLenSlot()) != Status.Ok) return null;
  return takeHostString();
}

export function bufferBytes(buffer: BufferType, size: u32): Uint8Array | null {
  if (size == 0) return new Uint8Array(0);
  if (abi.proxy_get_buffer_bytes(buffer, 0, size, scratchPtrSlot(), scratchLenSlot()) != Status.Ok) return null;
  return takeHostBytes();
}

/** The whole header map in one host call (the cheapest way to read several headers). */
export function headerMap(map: MapType): StringMap {
  if (abi.proxy_get_header_map_pairs(map, scratchPtrSlot(), scratchLenSlot()) != Status.Ok) return new StringMap(0);
  const ptr = <usize>load<u32>(scratchPtrSlot());
  const len = <usize>load<u32>(scratchLenSlot());
  const decoded = decodePairs(ptr, len);
  freeHostBlock(ptr);
  return decoded !== null ? decoded : new StringMap(0);
}

/** The same, decoded into `m` (emptied first, its storage reused); `m` is left empty on a failure. */
// @ts-ignore: decorator
@inline
export function headerMapInto(map: MapType, m: HeaderMap): HeaderMap {
  if (abi.proxy_get_header_map_pairs(map, scratchPtrSlot(), scratchLenSlot()) != Status.Ok) {
    m.clear();
    return m;
  }
  const ptr = <usize>load<u32>(scratchPtrSlot());
  const len = <usize>load<u32>(scratchLenSlot());
  // fill empties the map first, and leaves it empty when the block is malformed.
  decodeHeadersInto(ptr, len, m);
  freeHostBlock(ptr);
  return m;
}

export function replaceHeader(map: MapType, name: string, value: string): void {
  const k = utf8(name);
  const v = utf8(value);
  abi.proxy_replace_header_map_value(map, changetype<usize>(k), <usize>k.byteLength, changetype<usize>(v), <usize>v.byteLength);
}

/** replaceHeader with the name and value already in UTF-8 (a header set on every request, encoded once). */
export function replaceHeaderUtf8(map: MapType, name: ArrayBuffer, value: ArrayBuffer): void {
  abi.proxy_replace_header_map_value(map, changetype<usize>(name), <usize>name.byteLength, changetype<usize>(value), <usize>value.byteLength);
}

export function addHeader(map: MapType, name: string, value: string): void {
  const k = utf8(name);
  const v = utf8(value);
  abi.proxy_add_header_map_value(map, changetype<usize>(k), <usize>k.byteLength, changetype<usize>(v), <usize>v.byteLength);
}

export function removeHeader(map: MapType, name: string): void {
  const k = utf8(name);
  abi.proxy_remove_header_map_value(map, changetype<usize>(k), <usize>k.byteLength);
}

// Properties are read straight from the block the host hands over (then
// freed): a string costs one allocation, its own; a flag none. Paths come
// encoded (abi/properties.ts); an HTTP stream's are read as sets
// (abi/stream_properties.ts).

function askProperty(path: ArrayBuffer): bool {
  return abi.proxy_get_property(changetype<usize>(path), <usize>path.byteLength, scratchPtrSlot(), scratchLenSlot()) == Status.Ok;
}

/** A property's raw bytes, or null when the host does not have it. */
export function property(path: ArrayBuffer): Uint8Array | null {
  return askProperty(path) ? takeHostBytes() : null;
}

/** A property as text, "" when absent. */
export function propertyString(path: ArrayBuffer): string {
  return askProperty(path) ? takeHostString() : "";
}

export function propertyBool(path: ArrayBuffer): bool {
  if (!askProperty(path)) return false;
  const value = hostBlockLength() > 0 && load<u8>(hostBlockPtr()) != 0;
  dropHostBlock();
  return value;
}

export function continueRequest(): void {
  abi.proxy_continue_stream(StreamType.Request);
}

/** Resumes reading a TCP connection paused by returning Pause from proxy_on_downstream_data. */
export function continueDownstream(): void {
  abi.proxy_continue_stream(StreamType.Downstream);
}

/** Closes a TCP connection's downstream side (Envoy closes without flushing). */
export function closeDownstream(): void {
  abi.proxy_close_stream(StreamType.Downstream);
}

export function sendLocalResponse(code: u32, details: string, body: string, headerNames: Array<string>, headerValues: Array<string>): void {
  const d = utf8(details);
  const b = utf8(body);
  const h = encodePairs(headerNames, headerValues);
  abi.proxy_send_local_response(code, changetype<usize>(d), <usize>d.byteLength, changetype<usize>(b), <usize>b.byteLength, h.dataStart, <usize>h.length, NO_GRPC_STATUS);
}

/** Starts a unary gRPC call; returns its token, or -1 when the host refused it. */
export function grpcCall(cluster: string, service: string, method: string, metadata: Uint8Array, message: Uint8Array, timeoutMs: u32): i64 {
  const c = utf8(cluster);
  const s = utf8(service);
  const m = utf8(method);
  const status = abi.proxy_grpc_call(
    changetype<usize>(c), <usize>c.byteLength,
    changetype<usize>(s), <usize>s.byteLength,
    changetype<usize>(m), <usize>m.byteLength,
    metadata.dataStart, <usize>metadata.length,
    message.dataStart, <usize>message.length,
    timeoutMs,
    scratchU64Slot(),
  );
  if (status != Status.Ok) return -1;
  return <i64>load<u32>(scratchU64Slot());
}

/** Cancels a gRPC call in flight; its callbacks will not come. */
export function grpcCancel(token: u32): void {
  abi.proxy_grpc_cancel(token);
}

/** The message of the last callout's status (read inside its callback). */
export function lastStatusMessage(): string {
  if (abi.proxy_get_status(scratchU64Slot(), scratchPtrSlot(), scratchLenSlot()) != Status.Ok) return "";
  return takeHostString();
}

/** Tells the host a root context that answered false from proxy_on_done has finished; false when it was not pending. */
export function done(): bool {
  return abi.proxy_done() == Status.Ok;
}

export function setEffectiveContext(id: u32): bool {
  return abi.proxy_set_effective_context(id) == Status.Ok;
}

/** Defines a counter; returns its id, or -1. */
export function defineCounter(name: string): i64 {
  const n = utf8(name);
  if (abi.proxy_define_metric(MetricType.Counter, changetype<usize>(n), <usize>n.byteLength, scratchU64Slot()) != Status.Ok) return -1;
  return <i64>load<u32>(scratchU64Slot());
}

export function incrementCounter(id: u32, delta: i64): void {
  if (delta > 0) abi.proxy_increment_metric(id, delta);
}
