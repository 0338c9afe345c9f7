import { BufferType, LogLevel } from "./enums";
import * as host from "./host";
import { pluginFor, plugins, streamFor, streams } from "./contexts";
import { HttpStream } from "../proxy/http_stream";
import { CallKind, Plugin } from "../proxy/plugin";
import { onCallAnswered, onCallFailed, onLog, onRequestHeaders, onResponseHeaders } from "../proxy/http_filter";

// The proxy-wasm 0.2.1 entry points. Each finds its context and delegates;
// signatures follow the ABI exactly (a proxy checks them at load).

/** Marks the ABI version; never called. */
export function proxy_abi_version_0_2_1(): void {}

/** The allocator the host uses to hand bytes over; raw TLSF blocks, outside the GC, freed by the module. */
export function proxy_on_memory_allocate(size: usize): usize {
  return heap.alloc(size);
}

export function proxy_on_context_create(id: u32, parentId: u32): void {
  if (parentId == 0) {
    plugins.set(id, new Plugin(id));
    return;
  }
  streams.set(id, new HttpStream(id, parentId));
}

export function proxy_on_vm_start(rootId: u32, vmConfigurationSize: u32): bool {
  return true;
}

export function proxy_on_configure(rootId: u32, configurationSize: u32): bool {
  const plugin = pluginFor(rootId);
  if (plugin === null) return false;
  const text = host.bufferText(BufferType.PluginConfiguration, configurationSize);
  if (text === null) {
    host.log(LogLevel.Error, "hub client configuration could not be read");
    return false;
  }
  return plugin.configure(text as string);
}

export function proxy_on_tick(rootId: u32): void {
  const plugin = pluginFor(rootId);
  if (plugin !== null) plugin.onTick();
}

export function proxy_on_request_headers(id: u32, headerCount: u32, endOfStream: bool): u32 {
  const stream = streamFor(id);
  if (stream === null) return 0;
  const plugin = pluginFor(stream.rootId);
  if (plugin === null) return 0;
  return onRequestHeaders(plugin, stream);
}

export function proxy_on_response_headers(id: u32, headerCount: u32, endOfStream: bool): u32 {
  const stream = streamFor(id);
  return stream === null ? 0 : onResponseHeaders(stream);
}

export function proxy_on_grpc_receive(rootId: u32, token: u32, messageSize: u32): void {
  const plugin = pluginFor(rootId);
  if (plugin === null || !plugin.pending.has(token)) return;
  const call = plugin.pending.get(token);
  plugin.pending.delete(token);
  if (call.kind == CallKind.Report) {
    plugin.onReportDone(0, "");
    return;
  }
  const bytes = host.bufferBytes(BufferType.GrpcReceiveBuffer, messageSize);
  const stream = effectiveStream(call.streamId, call.kind);
  onCallAnswered(plugin, call, bytes !== null ? bytes : new Uint8Array(0), stream);
}

export function proxy_on_grpc_close(rootId: u32, token: u32, statusCode: u32): void {
  const plugin = pluginFor(rootId);
  if (plugin === null || !plugin.pending.has(token)) return;
  const call = plugin.pending.get(token);
  plugin.pending.delete(token);
  const message = host.lastStatusMessage();
  onCallFailed(plugin, call, <i32>statusCode, message, effectiveStream(call.streamId, call.kind));
}

export function proxy_on_log(id: u32): void {
  const stream = streamFor(id);
  if (stream === null) return;
  const plugin = pluginFor(stream.rootId);
  if (plugin !== null) onLog(plugin, stream);
}

export function proxy_on_done(id: u32): bool {
  const plugin = pluginFor(id);
  // A root going away sends what its batch still holds.
  if (plugin !== null) plugin.flushReports();
  return true;
}

export function proxy_on_delete(id: u32): void {
  streams.delete(id);
  plugins.delete(id);
}

// Callouts answer on the root context: switch to the stream before acting on
// it. A stream that is gone (client hung up) gets nothing.
function effectiveStream(id: u32, kind: CallKind): HttpStream | null {
  if (kind != CallKind.Check) return null;
  const stream = streamFor(id);
  if (stream === null || !host.setEffectiveContext(id)) return null;
  return stream;
}

