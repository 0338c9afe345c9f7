import { compiledModule } from "./compiled_module.ts";
import { Action, BufferType, type HeaderList, type LocalReply, MapType, type PeerType, StreamType } from "./abi_types.ts";
import { HeaderMap } from "./header_map.ts";
import { ModuleMemory } from "./abi_memory.ts";
import type { IdTable } from "./id_table.ts";
import {
  type ConnectionSignals,
  type ConnectionState,
  ContextState,
  type HostEnvironment,
  type Metric,
  type StreamState,
  contextImports,
} from "./abi_contexts.ts";
import { type StreamProperties, propertyImports } from "./abi_properties.ts";
import { headerImports } from "./abi_headers.ts";
import { concat, release, streamControlImports, takeReleased } from "./abi_stream_control.ts";
import type { Exports } from "./abi_exports.ts";
import { CallbackRunner } from "./abi_callbacks.ts";
import { grpcImports } from "./abi_grpc.ts";
import { loggingAndTimerImports } from "./abi_logging_timers.ts";
import { metricImports } from "./abi_metrics.ts";

// The host calls, by ABI family (as proxy-wasm-go-sdk groups them): module
// memory (abi_memory.ts), contexts (abi_contexts.ts), properties
// (abi_properties.ts), header maps and buffers (abi_headers.ts), stream
// control (abi_stream_control.ts), gRPC calls (abi_grpc.ts), logging and
// timers (abi_logging_timers.ts), metrics (abi_metrics.ts). This file drives
// the module's callbacks.
export type { PropertyResolver, PropertySource, PropertyValue, StreamProperties } from "./abi_properties.ts";
export { propertyValue } from "./abi_properties.ts";
export type { ConnectionSignals, HostEnvironment, Metric } from "./abi_contexts.ts";
export { WasmTrap } from "./abi_callbacks.ts";

const encoder = new TextEncoder();

/**
 * Context ids are positive i32s (the ABI passes them as i32): after the
 * largest, numbering starts over at 1, skipping the ids still in use.
 */
export const LAST_CONTEXT_ID = 0x7fff_ffff;

/**
 * A proxy-wasm 0.2.1 host: instantiates a module, implements the `env.proxy_*`
 * functions over per-context state, and drives the callbacks in the ABI's
 * order. Used by the Node sidecar and by the in-process emulator tests use.
 * Effects the module asks for (continue, local reply) are recorded and applied
 * by the embedder after the callback returns, as Envoy defers them.
 * A context is an HTTP stream (createStream, requestHeaders, …) or a TCP
 * connection (newConnection, downstreamData/upstreamData, connectionClosed,
 * finishConnection; takeDownstream/takeUpstream/takeConnectionSignals tell
 * what to forward and whether the module continued or closed it).
 */
export class ProxyWasmVm {
  readonly metrics: Map<number, Metric>;
  private readonly exports: Exports;
  private readonly state = new ContextState();
  private readonly memory = new ModuleMemory();
  private readonly callbacks = new CallbackRunner(this.state);
  private readonly streams: IdTable<StreamState>;
  private readonly roots: Set<number>;
  private readonly buffers: Map<BufferType, Uint8Array>;
  private nextContextId: number;

  /**
   * `firstContextId`: where this VM's context numbering starts. A VM that
   * replaces another starts at the other's `upcomingContextId`, so an id the
   * old one gave a request still in flight never names a context of the new one.
   */
  constructor(
    wasm: Uint8Array | string,
    private readonly env: HostEnvironment,
    firstContextId = 1,
  ) {
    this.nextContextId = firstContextId;
    this.metrics = this.state.metrics;
    this.streams = this.state.streams;
    this.roots = this.state.roots;
    this.buffers = this.state.buffers;
    // Plain WebAssembly, as a proxy links a module: only the env.proxy_* imports, and the exports
    // called as they are (a wrapper per call would cost on every callback).
    const instance = new WebAssembly.Instance(compiledModule(wasm), { env: this.imports() });
    this.exports = instance.exports as unknown as Exports;
    this.memory.attach(this.exports);
    this.exports._initialize?.();
  }

  /** Set when a callback trapped: the instance must not be used again. */
  get failed(): boolean {
    return this.callbacks.failed;
  }

  set failed(failed: boolean) {
    this.callbacks.failed = failed;
  }

  /** The id the next context would get. */
  get upcomingContextId(): number {
    return this.nextContextId;
  }

  /** The module's allocation counter (our debug build counts; 0 for a module that does not). */
  allocations(): bigint {
    return this.exports.filter_allocations?.() ?? 0n;
  }

  // ---------- driving the module

  /** Creates a root context, starts the VM on it and applies `configuration`; returns the root id, or null if refused. */
  startRoot(configuration: string, vmConfiguration = ""): { rootId: number; accepted: boolean } {
    const rootId = this.newContextId();
    this.roots.add(rootId);
    this.callbacks.call(rootId, () => this.exports.proxy_on_context_create(rootId, 0));
    const vm = encoder.encode(vmConfiguration);
    this.buffers.set(BufferType.VmConfiguration, vm);
    const started = this.callbacks.call(rootId, () => this.exports.proxy_on_vm_start?.(rootId, vm.length) ?? 1);
    this.buffers.delete(BufferType.VmConfiguration);
    const accepted = started !== 0 && this.configure(rootId, configuration);
    return { rootId, accepted };
  }

  /** proxy_on_configure with new plugin configuration; false = refused (the old one keeps serving). */
  configure(rootId: number, configuration: string): boolean {
    const bytes = encoder.encode(configuration);
    this.buffers.set(BufferType.PluginConfiguration, bytes);
    try {
      return this.callbacks.call(rootId, () => this.exports.proxy_on_configure?.(rootId, bytes.length) ?? 1) !== 0;
    } finally {
      this.buffers.delete(BufferType.PluginConfiguration);
    }
  }

  createStream(rootId: number, properties: StreamProperties): number {
    const id = this.newContextId();
    this.streams.set(id, { id, rootId, maps: noMaps(), properties, continued: false });
    this.callbacks.invoke(id, this.exports.proxy_on_context_create, 0, id, rootId);
    return id;
  }

  /** `namesLowerCase`: the caller vouches that every name already is (the sidecar's listener lower-cases them once). */
  requestHeaders(id: number, headers: HeaderList, endOfStream: boolean, namesLowerCase = false): Action {
    const s = this.stream(id);
    s.maps[MapType.RequestHeaders] = namesLowerCase ? new HeaderMap(headers) : HeaderMap.of(headers);
    return this.callbacks.invoke(id, this.exports.proxy_on_request_headers, Action.Continue, id, headers.length, endOfStream ? 1 : 0);
  }

  responseHeaders(id: number, headers: HeaderList, endOfStream: boolean, namesLowerCase = false): Action {
    const s = this.stream(id);
    s.maps[MapType.ResponseHeaders] = namesLowerCase ? new HeaderMap(headers) : HeaderMap.of(headers);
    return this.callbacks.invoke(id, this.exports.proxy_on_response_headers, Action.Continue, id, headers.length, endOfStream ? 1 : 0);
  }

  /** The response's trailers: proxy_on_response_trailers, as Envoy calls it for a response that has some. */
  responseTrailers(id: number, trailers: HeaderList, namesLowerCase = false): Action {
    this.stream(id).maps[MapType.ResponseTrailers] = namesLowerCase ? new HeaderMap(trailers) : HeaderMap.of(trailers);
    return this.callbacks.invoke(id, this.exports.proxy_on_response_trailers, Action.Continue, id, trailers.length);
  }

  /** Stream end in Envoy's order: log, done, delete. */
  finishStream(id: number): void {
    const exports = this.exports;
    try {
      this.callbacks.invoke(id, exports.proxy_on_log, 0, id);
      this.callbacks.invoke(id, exports.proxy_on_done, 0, id);
      this.callbacks.invoke(id, exports.proxy_on_delete, 0, id);
    } finally {
      this.streams.delete(id);
    }
  }

  // ---------- TCP connections

  /** Creates a context under `rootId` and announces it as a TCP connection (proxy_on_new_connection); returns its id. */
  newConnection(rootId: number, properties: StreamProperties): number {
    const id = this.newContextId();
    const connection: ConnectionState = {
      downstream: { held: new Uint8Array(), released: [] },
      upstream: { held: new Uint8Array(), released: [] },
      continued: false,
      closeDownstream: false,
      closeUpstream: false,
    };
    this.streams.set(id, { id, rootId, maps: noMaps(), properties, continued: false, connection });
    this.callbacks.call(id, () => this.exports.proxy_on_context_create(id, rootId));
    this.callbacks.call(id, () => this.exports.proxy_on_new_connection?.(id) ?? Action.Continue);
    return id;
  }

  /**
   * Bytes read from the client. Continue releases them (with any held
   * earlier) for forwarding, read with takeDownstream; Pause holds them until
   * the module continues the stream. Nothing is released once the module
   * closed the connection.
   */
  downstreamData(id: number, bytes: Uint8Array, endOfStream: boolean): Action {
    return this.data(id, StreamType.Downstream, bytes, endOfStream);
  }

  /** Bytes from the upstream server, toward the client; released ones are read with takeUpstream. */
  upstreamData(id: number, bytes: Uint8Array, endOfStream: boolean): Action {
    return this.data(id, StreamType.Upstream, bytes, endOfStream);
  }

  /** One side of the connection closed: proxy_on_downstream_connection_close (default) or proxy_on_upstream_connection_close. */
  connectionClosed(id: number, peer: PeerType, side: StreamType.Downstream | StreamType.Upstream = StreamType.Downstream): void {
    this.connection(id);
    if (side === StreamType.Upstream) this.callbacks.call(id, () => this.exports.proxy_on_upstream_connection_close?.(id, peer));
    else this.callbacks.call(id, () => this.exports.proxy_on_downstream_connection_close?.(id, peer));
  }

  /** Connection end in Envoy's TCP order: done, log, delete. */
  finishConnection(id: number): void {
    this.connection(id);
    try {
      this.callbacks.call(id, () => this.exports.proxy_on_done?.(id));
      this.callbacks.call(id, () => this.exports.proxy_on_log?.(id));
      this.callbacks.call(id, () => this.exports.proxy_on_delete?.(id));
    } finally {
      this.streams.delete(id);
    }
  }

  /** Client bytes the module let through since the last call (empty while it holds them). */
  takeDownstream(id: number): Uint8Array {
    return takeReleased(this.connection(id).downstream);
  }

  /** Server bytes the module let through since the last call. */
  takeUpstream(id: number): Uint8Array {
    return takeReleased(this.connection(id).upstream);
  }

  /** What the module asked for the connection; `continued` is reported once, the close flags stay set. */
  takeConnectionSignals(id: number): ConnectionSignals {
    const c = this.connection(id);
    const signals = { continued: c.continued, closeDownstream: c.closeDownstream, closeUpstream: c.closeUpstream };
    c.continued = false;
    return signals;
  }

  isConnection(id: number): boolean {
    return this.streams.get(id)?.connection !== undefined;
  }

  tick(rootId: number): void {
    this.callbacks.call(rootId, () => this.exports.proxy_on_tick?.(rootId));
  }

  /** A successful unary gRPC answer. */
  grpcReceive(rootId: number, token: number, message: Uint8Array): void {
    this.buffers.set(BufferType.GrpcReceiveBuffer, message);
    this.state.lastStatus = { code: 0, message: "" };
    try {
      this.callbacks.call(rootId, () => this.exports.proxy_on_grpc_receive?.(rootId, token, message.length));
    } finally {
      this.buffers.delete(BufferType.GrpcReceiveBuffer);
    }
  }

  /** A failed gRPC call: status code and message (read by the module with proxy_get_status). */
  grpcClose(rootId: number, token: number, status: number, message: string): void {
    this.state.lastStatus = { code: status, message };
    this.callbacks.call(rootId, () => this.exports.proxy_on_grpc_close?.(rootId, token, status));
  }

  /**
   * The root context goes away: proxy_on_done, then proxy_on_delete. Returns
   * true when it is gone; false when the module answered false (it is still
   * sending something): the root keeps its ticks and callouts until the
   * module calls proxy_done, which deletes it and calls `rootDone`.
   */
  shutdownRoot(rootId: number): boolean {
    const done = this.callbacks.call(rootId, () => this.exports.proxy_on_done?.(rootId) ?? 1);
    if (done === 0) {
      this.state.pendingDone.add(rootId);
      return false;
    }
    this.deleteRoot(rootId);
    return true;
  }

  /** True while a root context answered false from proxy_on_done and has not called proxy_done yet. */
  isRootPendingDone(rootId: number): boolean {
    return this.state.pendingDone.has(rootId);
  }

  private deleteRoot(rootId: number): void {
    try {
      this.callbacks.call(rootId, () => this.exports.proxy_on_delete?.(rootId));
    } finally {
      this.roots.delete(rootId);
      this.env.tickPeriod(rootId, 0);
    }
  }

  // ---------- what the embedder reads back

  headers(id: number, map: MapType): HeaderList {
    return this.stream(id).maps[map]?.pairs ?? [];
  }

  takeLocalReply(id: number): LocalReply | undefined {
    const s = this.stream(id);
    const reply = s.localReply;
    s.localReply = undefined;
    return reply;
  }

  /** True once, after the module called proxy_continue_stream(request) for the stream. */
  takeContinue(id: number): boolean {
    const s = this.stream(id);
    const continued = s.continued;
    s.continued = false;
    return continued;
  }

  hasRoot(rootId: number): boolean {
    return this.roots.has(rootId);
  }

  hasStream(id: number): boolean {
    return this.streams.has(id);
  }

  metricByName(name: string): bigint | undefined {
    for (const m of this.metrics.values()) if (m.name === name) return m.value;
    return undefined;
  }

  // ---------- internals

  private newContextId(): number {
    let id = this.nextContextId;
    while (this.streams.has(id) || this.roots.has(id)) id = id >= LAST_CONTEXT_ID ? 1 : id + 1;
    this.nextContextId = id >= LAST_CONTEXT_ID ? 1 : id + 1;
    return id;
  }

  private connection(id: number): ConnectionState {
    const c = this.streams.get(id)?.connection;
    if (!c) throw new Error(`unknown connection context ${id}`);
    return c;
  }

  private data(id: number, side: StreamType.Downstream | StreamType.Upstream, bytes: Uint8Array, endOfStream: boolean): Action {
    const c = this.connection(id);
    const direction = side === StreamType.Downstream ? c.downstream : c.upstream;
    if (c.closeDownstream) return Action.Pause;
    direction.held = concat([direction.held, bytes]);
    const buffer = side === StreamType.Downstream ? BufferType.DownstreamData : BufferType.UpstreamData;
    this.buffers.set(buffer, direction.held);
    let action: Action;
    try {
      action = this.callbacks.call(id, () =>
        side === StreamType.Downstream
          ? (this.exports.proxy_on_downstream_data?.(id, direction.held.length, endOfStream ? 1 : 0) ?? Action.Continue)
          : (this.exports.proxy_on_upstream_data?.(id, direction.held.length, endOfStream ? 1 : 0) ?? Action.Continue),
      );
    } finally {
      this.buffers.delete(buffer);
    }
    if (action === Action.Continue && !c.closeDownstream) release(direction);
    return action;
  }

  private stream(id: number): StreamState {
    const s = this.streams.get(id);
    if (!s) throw new Error(`unknown stream context ${id}`);
    return s;
  }

  /** The host calls the module imports (`env.proxy_*`), by family. */
  private imports(): Record<string, (...args: never[]) => number> {
    const { state, memory, env } = this;
    const sourceOf = (): StreamProperties | undefined => {
      const s = state.effectiveStream();
      return s ? s.properties : state.roots.has(state.current) ? env.rootProperties : undefined;
    };
    return {
      ...loggingAndTimerImports(state, memory, env),
      ...headerImports(state, memory),
      ...propertyImports(memory, sourceOf, env),
      ...streamControlImports(state, memory),
      ...grpcImports(state, memory, env),
      ...contextImports(state, env, (rootId) => this.deleteRoot(rootId)),
      ...metricImports(state.metrics, memory),
    } as unknown as Record<string, (...args: never[]) => number>;
  }
}

/**
 * A stream's header maps, one slot per HTTP map type, filled in place: an
 * array of fixed shape, so reading a map never given (trailers) is not a
 * read past the end, which optimized code would have to leave for.
 */
function noMaps(): Array<HeaderMap | undefined> {
  return [undefined, undefined, undefined, undefined];
}
