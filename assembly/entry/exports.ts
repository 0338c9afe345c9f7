import { TransportOutcome } from "../client/counters";
import { BufferType, LogLevel } from "../abi/enums";
import { collectGarbageIfDue } from "../collection";
import { allocateForHost } from "../abi/marshal";
import * as host from "../abi/host";
import { addPlugin, becomeConnection, connectionFor, connections, createStream, deleteStream, pluginFor, removePlugin, streamFor, streams } from "./contexts";
import { HttpStream } from "../proxy/http_stream";
import { CallKind, PendingCall, Plugin } from "../proxy/plugin";
import { onCallAnswered, onCallFailed, onLog, onRequestHeaders, onResponseHeaders, retryCheck } from "../proxy/http_filter";
import { TcpConnection } from "../proxy/tcp_connection";
import {
  onConnectionCallAnswered,
  onConnectionCallFailed,
  onConnectionClosed,
  onConnectionsTick,
  onDownstreamData,
  onNewConnection,
  onUpstreamData,
  retryConnectionCheck,
} from "../proxy/tcp_filter";

// The proxy-wasm 0.2.1 entry points. Each finds its context and delegates;
// signatures follow the ABI exactly (a proxy checks them at load).

/** Marks the ABI version; never called. */
export function proxy_abi_version_0_2_1(): void {}

/** The allocator the host uses to hand bytes over; raw blocks outside the GC, freed by the module (marshal.ts). */
export function proxy_on_memory_allocate(size: usize): usize {
  return allocateForHost(size);
}

export function proxy_on_context_create(id: u32, parentId: u32): void {
  collectGarbageIfDue();
  if (parentId == 0) {
    addPlugin(id, new Plugin(id));
    return;
  }
  createStream(id, parentId);
}

export function proxy_on_vm_start(rootId: u32, vmConfigurationSize: u32): bool {
  return true;
}

export function proxy_on_configure(rootId: u32, configurationSize: u32): bool {
  collectGarbageIfDue();
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
  collectGarbageIfDue();
  const plugin = pluginFor(rootId);
  if (plugin === null) return;
  const now = host.nowNanos();
  const due = plugin.retries.takeDue(now);
  for (let i = 0; i < due.length; i++) retry(plugin, due[i]);
  plugin.onTick();
  if (!plugin.draining) onConnectionsTick(plugin);
  plugin.armTimer(now);
}

// A call whose backoff has passed goes out again, if what it serves is still there.
function retry(plugin: Plugin, call: PendingCall): void {
  if (call.kind == CallKind.Check) {
    const stream = streamFor(call.streamId);
    retryCheck(plugin, call, stream !== null && host.setEffectiveContext(call.streamId) ? stream : null);
  } else if (call.kind == CallKind.ConnectionCheck) {
    const conn = connectionFor(call.streamId);
    retryConnectionCheck(plugin, call, conn !== null && host.setEffectiveContext(call.streamId) ? conn : null);
  } else {
    plugin.countersFor(call.kind).recordRemoteCallRetry();
    if (plugin.dispatch(call) < 0) plugin.countersFor(call.kind).recordRemoteCallDone(TransportOutcome.SendError);
  }
  host.setEffectiveContext(plugin.rootId);
}

export function proxy_on_request_headers(id: u32, headerCount: u32, endOfStream: bool): u32 {
  collectGarbageIfDue();
  const stream = streamFor(id);
  if (stream === null) return 0;
  const plugin = pluginFor(stream.rootId);
  if (plugin === null) return 0;
  stream.requestBodyless = endOfStream;
  return onRequestHeaders(plugin, stream);
}

export function proxy_on_response_headers(id: u32, headerCount: u32, endOfStream: bool): u32 {
  collectGarbageIfDue();
  const stream = streamFor(id);
  if (stream === null) return 0;
  stream.responseBodyless = endOfStream;
  return onResponseHeaders(stream);
}

// A host calls this only for a response that has trailers (Envoy, proxy-wasm-cpp-host):
// the report reads them at log time then, and never asks for trailers otherwise.
export function proxy_on_response_trailers(id: u32, trailerCount: u32): u32 {
  collectGarbageIfDue();
  const stream = streamFor(id);
  if (stream !== null) stream.responseTrailers = true;
  return 0;
}

export function proxy_on_grpc_receive(rootId: u32, token: u32, messageSize: u32): void {
  collectGarbageIfDue();
  const plugin = pluginFor(rootId);
  if (plugin === null || !plugin.pending.has(token)) return;
  const call = plugin.pending.get(token);
  plugin.pending.delete(token);
  if (call.channel !== null) {
    plugin.onReportAnswered(call);
    return;
  }
  if (isConnectionCall(call.kind)) {
    const bytes = host.bufferBytes(BufferType.GrpcReceiveBuffer, messageSize);
    onConnectionCallAnswered(plugin, call, bytes !== null ? bytes : new Uint8Array(0), effectiveConnection(call.streamId, call.kind));
    return;
  }
  const bytes = host.bufferBytes(BufferType.GrpcReceiveBuffer, messageSize);
  const stream = effectiveStream(call.streamId, call.kind);
  onCallAnswered(plugin, call, bytes !== null ? bytes : new Uint8Array(0), stream);
}

export function proxy_on_grpc_close(rootId: u32, token: u32, statusCode: u32): void {
  collectGarbageIfDue();
  const plugin = pluginFor(rootId);
  if (plugin === null || !plugin.pending.has(token)) return;
  const call = plugin.pending.get(token);
  plugin.pending.delete(token);
  const message = host.lastStatusMessage();
  if (call.channel !== null) {
    plugin.onReportFailed(call, <i32>statusCode, message);
    return;
  }
  if (isConnectionCall(call.kind)) {
    onConnectionCallFailed(plugin, call, <i32>statusCode, message, effectiveConnection(call.streamId, call.kind));
    return;
  }
  onCallFailed(plugin, call, <i32>statusCode, message, effectiveStream(call.streamId, call.kind));
}

export function proxy_on_log(id: u32): void {
  collectGarbageIfDue();
  const stream = streamFor(id);
  if (stream === null) return;
  const plugin = pluginFor(stream.rootId);
  if (plugin !== null) onLog(plugin, stream);
}

export function proxy_on_new_connection(id: u32): u32 {
  collectGarbageIfDue();
  const conn = becomeConnection(id);
  if (conn === null) return 0;
  const plugin = pluginFor(conn.rootId);
  return plugin === null ? 0 : onNewConnection(plugin, conn);
}

export function proxy_on_downstream_data(id: u32, dataSize: u32, endOfStream: bool): u32 {
  collectGarbageIfDue();
  const conn = connectionFor(id);
  if (conn === null) return 0;
  const plugin = pluginFor(conn.rootId);
  return plugin === null ? 0 : onDownstreamData(plugin, conn, dataSize);
}

export function proxy_on_upstream_data(id: u32, dataSize: u32, endOfStream: bool): u32 {
  collectGarbageIfDue();
  const conn = connectionFor(id);
  return conn === null ? 0 : onUpstreamData(conn, dataSize);
}

export function proxy_on_downstream_connection_close(id: u32, peerType: u32): void {
  collectGarbageIfDue();
  connectionClosed(id);
}

export function proxy_on_upstream_connection_close(id: u32, peerType: u32): void {
  collectGarbageIfDue();
  connectionClosed(id);
}

export function proxy_on_done(id: u32): bool {
  collectGarbageIfDue();
  // An HTTP stream (every request ends here): nothing to do. Its id is no root's or connection's.
  if (streams.has(id)) return true;
  // A root going away sends what its batches and retry buffers still hold,
  // and answers false (proxy_done later) while that is in flight.
  const plugin = pluginFor(id);
  if (plugin !== null) return plugin.onDone();
  // A connection ending without a close callback still gets its close report.
  connectionClosed(id);
  return true;
}

export function proxy_on_delete(id: u32): void {
  collectGarbageIfDue();
  // An HTTP stream's id is no root's or connection's: nothing else to look up.
  if (deleteStream(id)) return;
  connectionClosed(id);
  connections.delete(id);
  removePlugin(id);
}

function connectionClosed(id: u32): void {
  const conn = connectionFor(id);
  if (conn === null) return;
  const plugin = pluginFor(conn.rootId);
  if (plugin !== null) onConnectionClosed(plugin, conn);
}

function isConnectionCall(kind: CallKind): bool {
  return kind == CallKind.ConnectionCheck || kind == CallKind.ConnectionPrefetch || kind == CallKind.ConnectionReport;
}

function effectiveConnection(id: u32, kind: CallKind): TcpConnection | null {
  if (kind != CallKind.ConnectionCheck) return null;
  const conn = connectionFor(id);
  if (conn === null || !host.setEffectiveContext(id)) return null;
  return conn;
}

// Callouts answer on the root context: switch to the stream before acting on
// it. A stream that is gone (client hung up) gets nothing.
function effectiveStream(id: u32, kind: CallKind): HttpStream | null {
  if (kind != CallKind.Check) return null;
  const stream = streamFor(id);
  if (stream === null || !host.setEffectiveContext(id)) return null;
  return stream;
}

