import { compiledModule } from "./compiled_module.ts";
import { Action, BufferType, type GrpcCall, type HeaderList, type LocalReply, MapType, MetricKind, PeerType, StreamType, WasmStatus } from "./abi_types.ts";
import { LOG_LEVELS, type LogSink } from "./filter_module.ts";
import { HeaderMap } from "./header_map.ts";
import { decodePairs, writeString, writeU32 } from "./pairs.ts";

/** Looks up a property (path segments, e.g. ["source", "address"]) for a stream; undefined = NOT_FOUND. */
export type PropertyResolver = (path: string[]) => Uint8Array | undefined;

/**
 * A property value in Envoy's encodings (proxy-wasm.md §1.5): bytes as they
 * are, a string as UTF-8, a number or bigint as a little-endian int64, a
 * boolean as one byte.
 */
export type PropertyValue = Uint8Array | string | number | bigint | boolean;

/**
 * Properties looked up by dotted name ("source.address"), answered in any
 * PropertyValue form: the value is written straight into module memory, with
 * no path array and no intermediate bytes (the sidecar's data path).
 */
export interface PropertySource {
  property(name: string): PropertyValue | undefined;
  /**
   * An object standing for this source's answers as they are now: sources
   * that give the same object answer every property alike, so the host may
   * keep a batched read's serialized answer under it. Undefined: no such promise.
   */
  answersKey?(): object | undefined;
}

/** What a stream's properties are read from. */
export type StreamProperties = PropertyResolver | PropertySource;

/** What the embedder provides to the module besides the stream data. */
export interface HostEnvironment {
  log: LogSink;
  /** Wall clock, Unix nanoseconds. */
  now(): bigint;
  /** A gRPC call to answer later with grpcReceive or grpcClose. */
  grpcCall(call: GrpcCall): void;
  /** The root context asked for ticks every `ms` (0 = stop). */
  tickPeriod(rootId: number, ms: number): void;
  /** proxy_get_log_level answer (0 trace … 5 critical). */
  logLevel?: number;
  /** The module gave up on a call (a TCP connection closed while its check was in flight); no answer is expected. */
  grpcCancel?(token: number): void;
  /**
   * Properties of root contexts: facts about the host itself. The Node host
   * answers `mesh.host_retries` (true: it executes the NetworkFailPolicy's
   * retries from the call's `x-mesh-retry-policy` metadata, so the module
   * does not retry); a proxy such as Envoy has no such property.
   */
  rootProperties?: PropertyResolver;
  /** A root context that answered false from proxy_on_done called proxy_done and was deleted. */
  rootDone?(rootId: number): void;
  /**
   * Whether batched property reads (`mesh` `properties` name…) are answered
   * (default true). False answers them NOT_FOUND, as Envoy does: the module
   * then reads each property with a call of its own.
   */
  propertyBatches?: boolean;
}

/**
 * One direction of a TCP connection. As Envoy does, bytes the module paused
 * stay held and are handed to it again, with what arrives next, until it
 * continues the stream; released bytes wait for the embedder to forward them.
 */
interface DataDirection {
  held: Uint8Array;
  released: Uint8Array[];
}

interface ConnectionState {
  downstream: DataDirection;
  upstream: DataDirection;
  /** Set when the module called proxy_continue_stream(downstream) since the last takeConnectionSignals. */
  continued: boolean;
  closeDownstream: boolean;
  closeUpstream: boolean;
}

/** What the module asked of a TCP connection (read with takeConnectionSignals). */
export interface ConnectionSignals {
  /** proxy_continue_stream(downstream): reading resumed; the held bytes are released. */
  continued: boolean;
  /** proxy_close_stream(downstream): close the client connection without forwarding what is held. */
  closeDownstream: boolean;
  /** proxy_close_stream(upstream). */
  closeUpstream: boolean;
}

interface StreamState {
  id: number;
  rootId: number;
  /** Header maps by MapType, created when first given or touched. */
  maps: Array<HeaderMap | undefined>;
  properties: StreamProperties;
  localReply?: LocalReply;
  /** Set when the module called proxy_continue_stream(request). */
  continued: boolean;
  /** Present for a TCP connection (newConnection), absent for an HTTP stream. */
  connection?: ConnectionState;
}

export interface Metric {
  name: string;
  kind: MetricKind;
  value: bigint;
}

export class WasmTrap extends Error {
  readonly code = "WASM_TRAP";
}

interface Exports extends Record<string, unknown> {
  memory: WebAssembly.Memory;
  _initialize?: () => void;
  proxy_on_memory_allocate(size: number): number;
  proxy_on_context_create(id: number, parent: number): void;
  proxy_on_vm_start?(rootId: number, size: number): number;
  proxy_on_configure?(rootId: number, size: number): number;
  proxy_on_tick?(rootId: number): void;
  proxy_on_request_headers?(id: number, n: number, eos: number): number;
  proxy_on_request_body?(id: number, size: number, eos: number): number;
  proxy_on_response_headers?(id: number, n: number, eos: number): number;
  proxy_on_response_body?(id: number, size: number, eos: number): number;
  proxy_on_new_connection?(id: number): number;
  proxy_on_downstream_data?(id: number, size: number, eos: number): number;
  proxy_on_upstream_data?(id: number, size: number, eos: number): number;
  proxy_on_downstream_connection_close?(id: number, peer: number): void;
  proxy_on_upstream_connection_close?(id: number, peer: number): void;
  proxy_on_grpc_receive?(rootId: number, token: number, size: number): void;
  proxy_on_grpc_close?(rootId: number, token: number, status: number): void;
  proxy_on_log?(id: number): void;
  proxy_on_done?(id: number): number;
  proxy_on_delete?(id: number): void;
  filter_allocations?(): bigint;
}

const encoder = new TextEncoder();

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
  readonly metrics = new Map<number, Metric>();
  /** Set when a callback trapped: the instance must not be used again. */
  failed = false;
  private readonly exports: Exports;
  private readonly streams = new Map<number, StreamState>();
  private readonly roots = new Set<number>();
  /** Roots whose proxy_on_done answered false: deleted when the module calls proxy_done. */
  private readonly pendingDone = new Set<number>();
  /** Effects to run once the current callback has returned (as cpp-host defers a root's deletion after proxy_done). */
  private afterCallback: Array<() => void> = [];
  private nextContextId = 1;
  private nextToken = 1;
  private current = 0;
  private buffers = new Map<BufferType, Uint8Array>();
  /** Views of module memory, re-made when the memory grows (its old buffer is then detached). */
  private memoryBuffer: ArrayBuffer | undefined;
  private memoryView!: DataView;
  private memoryBytes!: Buffer;
  /** Module memory as 32-bit words, for comparing an aligned path a word at a time. */
  private memoryWords!: Int32Array;
  /** Property paths seen, NUL-separated → dotted (at most MAX_DOTTED_NAMES). */
  private readonly dottedNames = new Map<string, string>();
  /** Batched reads seen, by the address of their path (at most MAX_DOTTED_NAMES). */
  private readonly batches = new Map<number, PropertyBatch>();
  /** Header texts the module passed, by address (headerText). */
  private readonly keptTexts = new Map<number, KeptText>();
  /** The clock's last value and its 32-bit halves (proxy_get_current_time_nanoseconds). */
  private lastNow = -1n;
  private lastNowLow = 0;
  private lastNowHigh = 0;
  /** Serialized batch answers by the answersKey of the sources that gave them (kept as long as the key is). */
  private readonly savedAnswers = new WeakMap<object, Map<PropertyBatch, Uint8Array>>();
  private lastStatus: { code: number; message: string } = { code: 0, message: "" };

  constructor(
    wasm: Uint8Array | string,
    private readonly env: HostEnvironment,
  ) {
    // Plain WebAssembly, as a proxy links a module: only the env.proxy_* imports, and the exports
    // called as they are (a wrapper per call would cost on every callback).
    const instance = new WebAssembly.Instance(compiledModule(wasm), { env: this.imports() });
    this.exports = instance.exports as unknown as Exports;
    this.exports._initialize?.();
  }

  /** The module's allocation counter (our debug build counts; 0 for a module that does not). */
  allocations(): bigint {
    return this.exports.filter_allocations?.() ?? 0n;
  }

  // ---------- driving the module

  /** Creates a root context, starts the VM on it and applies `configuration`; returns the root id, or null if refused. */
  startRoot(configuration: string, vmConfiguration = ""): { rootId: number; accepted: boolean } {
    const rootId = this.nextContextId++;
    this.roots.add(rootId);
    this.call(rootId, () => this.exports.proxy_on_context_create(rootId, 0));
    const vm = encoder.encode(vmConfiguration);
    this.buffers.set(BufferType.VmConfiguration, vm);
    const started = this.call(rootId, () => this.exports.proxy_on_vm_start?.(rootId, vm.length) ?? 1);
    this.buffers.delete(BufferType.VmConfiguration);
    const accepted = started !== 0 && this.configure(rootId, configuration);
    return { rootId, accepted };
  }

  /** proxy_on_configure with new plugin configuration; false = refused (the old one keeps serving). */
  configure(rootId: number, configuration: string): boolean {
    const bytes = encoder.encode(configuration);
    this.buffers.set(BufferType.PluginConfiguration, bytes);
    try {
      return this.call(rootId, () => this.exports.proxy_on_configure?.(rootId, bytes.length) ?? 1) !== 0;
    } finally {
      this.buffers.delete(BufferType.PluginConfiguration);
    }
  }

  createStream(rootId: number, properties: StreamProperties): number {
    const id = this.nextContextId++;
    this.streams.set(id, { id, rootId, maps: [], properties, continued: false });
    this.call(id, () => this.exports.proxy_on_context_create(id, rootId));
    return id;
  }

  /** `namesLowerCase`: the caller vouches that every name already is (the sidecar's listener lower-cases them once). */
  requestHeaders(id: number, headers: HeaderList, endOfStream: boolean, namesLowerCase = false): Action {
    const s = this.stream(id);
    s.maps[MapType.RequestHeaders] = namesLowerCase ? new HeaderMap(headers) : HeaderMap.of(headers);
    return this.call(id, () => this.exports.proxy_on_request_headers?.(id, headers.length, endOfStream ? 1 : 0) ?? Action.Continue);
  }

  responseHeaders(id: number, headers: HeaderList, endOfStream: boolean, namesLowerCase = false): Action {
    const s = this.stream(id);
    s.maps[MapType.ResponseHeaders] = namesLowerCase ? new HeaderMap(headers) : HeaderMap.of(headers);
    return this.call(id, () => this.exports.proxy_on_response_headers?.(id, headers.length, endOfStream ? 1 : 0) ?? Action.Continue);
  }

  responseTrailers(id: number, trailers: HeaderList): void {
    this.stream(id).maps[MapType.ResponseTrailers] = new HeaderMap(trailers);
  }

  /** Stream end in Envoy's order: log, done, delete. */
  finishStream(id: number): void {
    try {
      this.call(id, () => this.exports.proxy_on_log?.(id));
      this.call(id, () => this.exports.proxy_on_done?.(id));
      this.call(id, () => this.exports.proxy_on_delete?.(id));
    } finally {
      this.streams.delete(id);
    }
  }

  // ---------- TCP connections

  /** Creates a context under `rootId` and announces it as a TCP connection (proxy_on_new_connection); returns its id. */
  newConnection(rootId: number, properties: StreamProperties): number {
    const id = this.nextContextId++;
    const connection: ConnectionState = {
      downstream: { held: new Uint8Array(), released: [] },
      upstream: { held: new Uint8Array(), released: [] },
      continued: false,
      closeDownstream: false,
      closeUpstream: false,
    };
    this.streams.set(id, { id, rootId, maps: [], properties, continued: false, connection });
    this.call(id, () => this.exports.proxy_on_context_create(id, rootId));
    this.call(id, () => this.exports.proxy_on_new_connection?.(id) ?? Action.Continue);
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
    if (side === StreamType.Upstream) this.call(id, () => this.exports.proxy_on_upstream_connection_close?.(id, peer));
    else this.call(id, () => this.exports.proxy_on_downstream_connection_close?.(id, peer));
  }

  /** Connection end in Envoy's TCP order: done, log, delete. */
  finishConnection(id: number): void {
    this.connection(id);
    try {
      this.call(id, () => this.exports.proxy_on_done?.(id));
      this.call(id, () => this.exports.proxy_on_log?.(id));
      this.call(id, () => this.exports.proxy_on_delete?.(id));
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
    this.call(rootId, () => this.exports.proxy_on_tick?.(rootId));
  }

  /** A successful unary gRPC answer. */
  grpcReceive(rootId: number, token: number, message: Uint8Array): void {
    this.buffers.set(BufferType.GrpcReceiveBuffer, message);
    this.lastStatus = { code: 0, message: "" };
    try {
      this.call(rootId, () => this.exports.proxy_on_grpc_receive?.(rootId, token, message.length));
    } finally {
      this.buffers.delete(BufferType.GrpcReceiveBuffer);
    }
  }

  /** A failed gRPC call: status code and message (read by the module with proxy_get_status). */
  grpcClose(rootId: number, token: number, status: number, message: string): void {
    this.lastStatus = { code: status, message };
    this.call(rootId, () => this.exports.proxy_on_grpc_close?.(rootId, token, status));
  }

  /**
   * The root context goes away: proxy_on_done, then proxy_on_delete. Returns
   * true when it is gone; false when the module answered false (it is still
   * sending something): the root keeps its ticks and callouts until the
   * module calls proxy_done, which deletes it and calls `rootDone`.
   */
  shutdownRoot(rootId: number): boolean {
    const done = this.call(rootId, () => this.exports.proxy_on_done?.(rootId) ?? 1);
    if (done === 0) {
      this.pendingDone.add(rootId);
      return false;
    }
    this.deleteRoot(rootId);
    return true;
  }

  /** True while a root context answered false from proxy_on_done and has not called proxy_done yet. */
  isRootPendingDone(rootId: number): boolean {
    return this.pendingDone.has(rootId);
  }

  private deleteRoot(rootId: number): void {
    try {
      this.call(rootId, () => this.exports.proxy_on_delete?.(rootId));
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
      action = this.call(id, () =>
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

  private call<T>(contextId: number, fn: () => T): T {
    if (this.failed) throw new WasmTrap("the filter VM failed earlier and cannot be used");
    const previous = this.current;
    this.current = contextId;
    try {
      return fn();
    } catch (e) {
      if (e instanceof WebAssembly.RuntimeError) {
        this.failed = true;
        throw new WasmTrap(`filter trapped: ${e.message}`);
      }
      throw e;
    } finally {
      this.current = previous;
      if (previous === 0 && this.afterCallback.length > 0 && !this.failed) {
        const actions = this.afterCallback;
        this.afterCallback = [];
        for (const action of actions) action();
      }
    }
  }

  // Asking the memory for its buffer is a call into V8's API on every
  // access; the views are kept instead, and made again only once the memory
  // grew (which detaches the old buffer: its length drops to 0).
  private refreshMemoryViews(): void {
    if (this.memoryBuffer !== undefined && this.memoryBuffer.byteLength !== 0) return;
    const buffer = this.exports.memory.buffer;
    this.memoryBuffer = buffer;
    this.memoryView = new DataView(buffer);
    this.memoryBytes = Buffer.from(buffer);
    this.memoryWords = new Int32Array(buffer, 0, buffer.byteLength >>> 2);
  }

  private get memory(): DataView {
    this.refreshMemoryViews();
    return this.memoryView;
  }

  /** All of module memory as a Buffer (no copy). */
  private get bytes(): Buffer {
    this.refreshMemoryViews();
    return this.memoryBytes;
  }

  private bytesAt(ptr: number, len: number): Uint8Array {
    return this.bytes.subarray(ptr, ptr + len);
  }

  /** UTF-8 text from module memory (malformed bytes become U+FFFD, as with TextDecoder); no view is made. */
  private text(ptr: number, len: number): string {
    return len === 0 ? "" : this.bytes.toString("utf8", ptr, ptr + len);
  }

  /**
   * A property path as the module passes it (segments separated by NUL) in
   * dotted form. The module asks for the same few paths in every request:
   * their dotted forms are kept, so a read costs one short decode.
   */
  private propertyName(ptr: number, len: number): string {
    const mem = this.bytes;
    let ascii = true;
    for (let i = ptr; i < ptr + len; i++) {
      if (mem[i] >= 0x80) {
        ascii = false;
        break;
      }
    }
    if (!ascii) return this.text(ptr, len).replaceAll("\0", ".");
    const raw = mem.toString("latin1", ptr, ptr + len);
    let dotted = this.dottedNames.get(raw);
    if (dotted === undefined) {
      dotted = internalized(raw.replaceAll("\0", "."));
      if (this.dottedNames.size < MAX_DOTTED_NAMES) this.dottedNames.set(raw, dotted);
    }
    return dotted;
  }

  /** Allocates `size` bytes with the module's allocator and writes pointer and length to the out slots; 0 when it failed. */
  private allocateOut(size: number, outPtr: number, outLen: number): number {
    const ptr = size > 0 ? this.exports.proxy_on_memory_allocate(size) : 0;
    if (size > 0 && ptr === 0) return 0;
    const view = this.memory;
    view.setUint32(outPtr, ptr, true);
    view.setUint32(outLen, size, true);
    return size > 0 ? ptr : -1;
  }

  /** Copies bytes into module memory (its allocator) and writes pointer and length to the out slots. */
  private give(bytes: Uint8Array, outPtr: number, outLen: number): WasmStatus {
    const ptr = this.allocateOut(bytes.length, outPtr, outLen);
    if (ptr === 0) return WasmStatus.InternalFailure;
    if (ptr > 0) this.bytes.set(bytes, ptr);
    return WasmStatus.Ok;
  }

  /** A property value, encoded as Envoy encodes it, written straight into module memory. */
  private giveValue(value: PropertyValue, outPtr: number, outLen: number): WasmStatus {
    if (value instanceof Uint8Array) return this.give(value, outPtr, outLen);
    if (typeof value === "string") {
      const size = Buffer.byteLength(value, "utf8");
      const ptr = this.allocateOut(size, outPtr, outLen);
      if (ptr === 0) return WasmStatus.InternalFailure;
      if (ptr > 0) this.bytes.write(value, ptr, size, "utf8");
      return WasmStatus.Ok;
    }
    if (typeof value === "boolean") {
      const ptr = this.allocateOut(1, outPtr, outLen);
      if (ptr === 0) return WasmStatus.InternalFailure;
      this.bytes[ptr] = value ? 1 : 0;
      return WasmStatus.Ok;
    }
    const ptr = this.allocateOut(8, outPtr, outLen);
    if (ptr === 0) return WasmStatus.InternalFailure;
    writeInt64(this.memory, ptr, value);
    return WasmStatus.Ok;
  }

  /** What the current context's properties are read from: a stream's, or a root context's (facts about the host). */
  private propertySource(): StreamProperties | undefined {
    const s = this.effectiveStream();
    return s ? s.properties : this.roots.has(this.current) ? this.env.rootProperties : undefined;
  }

  private lookUpProperty(pathPtr: number, pathLen: number): PropertyValue | undefined {
    const source = this.propertySource();
    if (source === undefined) return undefined;
    if (typeof source === "function") return source(this.text(pathPtr, pathLen).split("\0"));
    return source.property(this.propertyName(pathPtr, pathLen));
  }

  /**
   * The names of a batched read (path `mesh` `properties` name…,
   * docs/filter.md "Properties the filter reads"), undefined for any other path. The module
   * asks for the same few sets from the same addresses in every request:
   * each is decoded once and recognized by a byte compare afterwards.
   */
  private batchNames(pathPtr: number, pathLen: number): PropertyBatch | undefined {
    if (pathLen < BATCH_PREFIX.length) return undefined;
    const mem = this.bytes;
    const seen = this.batches.get(pathPtr);
    if (seen && seen.bytes.length === pathLen && this.holds(pathPtr, seen)) return seen;
    if (!sameBytes(mem, pathPtr, BATCH_PREFIX)) return undefined;
    const names = mem.toString("utf8", pathPtr + BATCH_PREFIX.length, pathPtr + pathLen).split("\0").filter((n) => n.length > 0).map(internalized);
    const batch: PropertyBatch = { ...this.snapshot(pathPtr, pathLen), names, keys: names.map((n) => Buffer.from(n, "utf8")), values: names.map(() => undefined) };
    if (this.batches.size < MAX_DOTTED_NAMES) this.batches.set(pathPtr, batch);
    return batch;
  }

  /** The bytes at `ptr` kept, with their whole 32-bit words for `holds`. */
  private snapshot(ptr: number, len: number): Snapshot {
    const bytes = Buffer.from(this.bytes.subarray(ptr, ptr + len));
    const words = new Int32Array(len >>> 2);
    Buffer.from(words.buffer).set(bytes.subarray(0, words.length << 2));
    return { bytes, words };
  }

  // The module passes the same paths and header names from the same
  // (aligned) addresses in every request: whether memory at `at` still
  // holds them is a compare of a 32-bit word at a time.
  private holds(at: number, { bytes, words }: Snapshot): boolean {
    if ((at & 3) !== 0) return sameBytes(this.bytes, at, bytes);
    const mem = this.memoryWords;
    const first = at >>> 2;
    if (first + words.length > mem.length) return false;
    for (let i = 0; i < words.length; i++) if (mem[first + i] !== words[i]) return false;
    const all = this.memoryBytes;
    for (let i = words.length << 2; i < bytes.length; i++) if (all[at + i] !== bytes[i]) return false;
    return true;
  }

  /**
   * A header name or value the module passes, as text: the module sets the
   * same few (its forwarded-attributes header) from the same addresses in
   * every request, so the last texts seen at each address are kept and
   * found again by a compare of their bytes, without decoding.
   */
  private headerText(ptr: number, len: number): string {
    if (len > MAX_KEPT_TEXT) return this.text(ptr, len);
    const kept = this.keptTexts.get(ptr);
    if (kept !== undefined && kept.bytes.length === len && this.holds(ptr, kept)) return kept.text;
    const text = this.text(ptr, len);
    if (this.keptTexts.size >= MAX_KEPT_TEXTS) this.keptTexts.clear();
    this.keptTexts.set(ptr, { ...this.snapshot(ptr, len), text, lower: undefined });
    return text;
  }

  /** A header name the module passes, lower-cased (kept as headerText is). */
  private headerName(ptr: number, len: number): string {
    const text = this.headerText(ptr, len);
    const kept = this.keptTexts.get(ptr);
    if (kept === undefined || kept.text !== text) return text.toLowerCase();
    return (kept.lower ??= text.toLowerCase());
  }

  /**
   * A batched read's answer: the proxy-wasm pairs map of the properties the
   * context has (dotted name → the value in Envoy's encoding, as a single
   * read gives it), absent ones left out; written straight into module memory.
   */
  private giveProperties(batch: PropertyBatch, outPtr: number, outLen: number): WasmStatus {
    const source = this.propertySource();
    // A source that vouches its answers are those of an earlier one gets them as they were serialized then.
    const key = source !== undefined && typeof source !== "function" ? source.answersKey?.() : undefined;
    if (key !== undefined) {
      const saved = this.savedAnswers.get(key)?.get(batch);
      if (saved !== undefined) return this.give(saved, outPtr, outLen);
    }
    const { names, keys, values } = batch;
    let count = 0;
    let capacity = 4;
    for (let i = 0; i < names.length; i++) {
      const value = source === undefined ? undefined : typeof source === "function" ? source(names[i].split(".")) : source.property(names[i]);
      values[i] = value;
      if (value === undefined) continue;
      count++;
      capacity += 10 + keys[i].length + valueCapacity(value);
    }
    const ptr = this.allocateOut(capacity, outPtr, outLen);
    if (ptr === 0) return WasmStatus.InternalFailure;
    const mem = this.bytes;
    const view = this.memory;
    writeU32(mem, ptr, count);
    let sizes = ptr + 4;
    let data = sizes + count * 8;
    for (let i = 0; i < names.length; i++) {
      const value = values[i];
      if (value === undefined) continue;
      values[i] = undefined;
      const key = keys[i];
      mem.set(key, data);
      const kl = key.length;
      mem[data + kl] = 0;
      data += kl + 1;
      const vl = writeValue(mem, view, value, data);
      mem[data + vl] = 0;
      data += vl + 1;
      writeU32(mem, sizes, kl);
      writeU32(mem, sizes + 4, vl);
      sizes += 8;
    }
    view.setUint32(outLen, data - ptr, true);
    if (key !== undefined) {
      let saved = this.savedAnswers.get(key);
      if (saved === undefined) this.savedAnswers.set(key, (saved = new Map()));
      saved.set(batch, Buffer.from(mem.subarray(ptr, data)));
    }
    return WasmStatus.Ok;
  }

  /** The stream the module currently acts on (the effective context). */
  private effectiveStream(): StreamState | undefined {
    return this.streams.get(this.current);
  }

  private rootOf(contextId: number): number {
    return this.roots.has(contextId) ? contextId : (this.streams.get(contextId)?.rootId ?? contextId);
  }

  private imports(): Record<string, (...args: never[]) => number> {
    const vm = this;
    const mapOf = (type: MapType): HeaderMap | undefined => {
      const s = vm.effectiveStream();
      if (!s) return undefined;
      return (s.maps[type] ??= new HeaderMap([]));
    };
    return {
      proxy_log(level: number, ptr: number, len: number) {
        if (level > 5) return WasmStatus.BadArgument;
        vm.env.log(LOG_LEVELS[level], vm.text(ptr, len));
        return WasmStatus.Ok;
      },
      proxy_get_log_level(out: number) {
        vm.memory.setUint32(out, vm.env.logLevel ?? 2, true);
        return WasmStatus.Ok;
      },
      proxy_get_current_time_nanoseconds(out: number) {
        // The clock repeats its value (the sidecar's per millisecond): its
        // two 32-bit halves are kept, a store each, with no bigint write.
        const now = vm.env.now();
        if (now !== vm.lastNow) {
          vm.lastNow = now;
          vm.lastNowLow = Number(BigInt.asUintN(32, now));
          vm.lastNowHigh = Number(BigInt.asUintN(32, now >> 32n));
        }
        const view = vm.memory;
        view.setUint32(out, vm.lastNowLow, true);
        view.setUint32(out + 4, vm.lastNowHigh, true);
        return WasmStatus.Ok;
      },
      proxy_set_tick_period_milliseconds(ms: number) {
        vm.env.tickPeriod(vm.rootOf(vm.current), ms);
        return WasmStatus.Ok;
      },
      proxy_get_buffer_status(type: number, outSize: number, outFlags: number) {
        const b = vm.buffers.get(type as BufferType);
        if (!b) return WasmStatus.NotFound;
        vm.memory.setUint32(outSize, b.length, true);
        vm.memory.setUint32(outFlags, 0, true);
        return WasmStatus.Ok;
      },
      proxy_get_buffer_bytes(type: number, start: number, max: number, outPtr: number, outLen: number) {
        const b = vm.buffers.get(type as BufferType);
        if (!b) return WasmStatus.NotFound;
        return vm.give(b.subarray(Math.min(start, b.length), Math.min(b.length, start + max)), outPtr, outLen);
      },
      proxy_get_header_map_pairs(type: number, outPtr: number, outLen: number) {
        const s = vm.effectiveStream();
        if (!s) return WasmStatus.NotFound;
        // A map never given (no trailers) reads as empty, without being made.
        const map = s.maps[type];
        if (!map || map.size === 0) return vm.give(NO_BYTES, outPtr, outLen);
        // One pass: room for the longest encoding, then the length written.
        const ptr = vm.allocateOut(map.serializedCapacity(), outPtr, outLen);
        if (ptr === 0) return WasmStatus.InternalFailure;
        vm.memory.setUint32(outLen, map.writeTo(vm.bytes, ptr), true);
        return WasmStatus.Ok;
      },
      proxy_set_header_map_pairs(type: number, ptr: number, len: number) {
        const map = mapOf(type as MapType);
        if (!map) return WasmStatus.NotFound;
        map.setAll(decodePairs(vm.bytesAt(ptr, len)).map(([k, v]) => [k.toLowerCase(), v] as [string, string]));
        return WasmStatus.Ok;
      },
      proxy_get_header_map_value(type: number, kPtr: number, kLen: number, outPtr: number, outLen: number) {
        const map = mapOf(type as MapType);
        const found = map?.get(vm.text(kPtr, kLen).toLowerCase());
        if (found === undefined) return WasmStatus.NotFound;
        return vm.giveValue(found, outPtr, outLen);
      },
      proxy_add_header_map_value(type: number, kPtr: number, kLen: number, vPtr: number, vLen: number) {
        const map = mapOf(type as MapType);
        if (!map) return WasmStatus.NotFound;
        map.add(vm.headerName(kPtr, kLen), vm.headerText(vPtr, vLen));
        return WasmStatus.Ok;
      },
      proxy_replace_header_map_value(type: number, kPtr: number, kLen: number, vPtr: number, vLen: number) {
        const map = mapOf(type as MapType);
        if (!map) return WasmStatus.NotFound;
        map.replace(vm.headerName(kPtr, kLen), vm.headerText(vPtr, vLen));
        return WasmStatus.Ok;
      },
      proxy_remove_header_map_value(type: number, kPtr: number, kLen: number) {
        const map = mapOf(type as MapType);
        if (!map) return WasmStatus.NotFound;
        map.remove(vm.text(kPtr, kLen).toLowerCase());
        return WasmStatus.Ok;
      },
      proxy_get_header_map_size(type: number, out: number) {
        const map = mapOf(type as MapType);
        if (!map) return WasmStatus.NotFound;
        vm.memory.setUint32(out, map.serializedLength(), true);
        return WasmStatus.Ok;
      },
      proxy_get_property(pathPtr: number, pathLen: number, outPtr: number, outLen: number) {
        const batch = vm.env.propertyBatches === false ? undefined : vm.batchNames(pathPtr, pathLen);
        if (batch) return vm.giveProperties(batch, outPtr, outLen);
        const value = vm.lookUpProperty(pathPtr, pathLen);
        if (value === undefined) return WasmStatus.NotFound;
        return vm.giveValue(value, outPtr, outLen);
      },
      proxy_continue_stream(type: number) {
        const s = vm.effectiveStream();
        if (!s) return WasmStatus.NotFound;
        if (type === StreamType.Request) s.continued = true;
        const c = s.connection;
        if (c && type === StreamType.Downstream && !c.closeDownstream) {
          c.continued = true;
          release(c.downstream);
        }
        if (c && type === StreamType.Upstream) release(c.upstream);
        return WasmStatus.Ok;
      },
      proxy_close_stream(type: number) {
        const s = vm.effectiveStream();
        if (!s) return WasmStatus.NotFound;
        const c = s.connection;
        if (c && type === StreamType.Downstream) {
          // Envoy closes without flushing: what the module held is dropped.
          c.closeDownstream = true;
          c.downstream.held = new Uint8Array();
        }
        if (c && type === StreamType.Upstream) c.closeUpstream = true;
        return WasmStatus.Ok;
      },
      proxy_send_local_response(status: number, dPtr: number, dLen: number, bPtr: number, bLen: number, hPtr: number, hLen: number, grpcStatus: number) {
        const s = vm.effectiveStream();
        if (!s) return WasmStatus.NotFound;
        s.localReply = {
          status,
          // Envoy replaces spaces in details so log parsers do not split them.
          details: vm.text(dPtr, dLen).replace(/ /g, "_"),
          body: vm.text(bPtr, bLen),
          headers: hLen > 0 ? decodePairs(vm.bytesAt(hPtr, hLen)) : [],
          grpcStatus,
        };
        return WasmStatus.Ok;
      },
      proxy_grpc_call(
        cPtr: number, cLen: number, sPtr: number, sLen: number, mPtr: number, mLen: number,
        mdPtr: number, mdLen: number, msgPtr: number, msgLen: number, timeoutMs: number, outToken: number,
      ) {
        const token = vm.nextToken++;
        const call: GrpcCall = {
          token,
          rootId: vm.rootOf(vm.current),
          cluster: vm.text(cPtr, cLen),
          service: vm.text(sPtr, sLen),
          method: vm.text(mPtr, mLen),
          metadata: mdLen > 0 ? decodePairs(vm.bytesAt(mdPtr, mdLen)) : [],
          message: vm.bytesAt(msgPtr, msgLen).slice(),
          timeoutMs,
        };
        vm.memory.setUint32(outToken, token, true);
        vm.env.grpcCall(call);
        return WasmStatus.Ok;
      },
      proxy_grpc_cancel(token: number) {
        vm.env.grpcCancel?.(token);
        return WasmStatus.Ok;
      },
      proxy_grpc_close() {
        return WasmStatus.Ok;
      },
      proxy_get_status(outCode: number, outPtr: number, outLen: number) {
        vm.memory.setUint32(outCode, vm.lastStatus.code, true);
        return vm.giveValue(vm.lastStatus.message, outPtr, outLen);
      },
      proxy_set_effective_context(id: number) {
        if (!vm.streams.has(id) && !vm.roots.has(id)) return WasmStatus.BadArgument;
        vm.current = id;
        return WasmStatus.Ok;
      },
      proxy_done() {
        const rootId = vm.rootOf(vm.current);
        if (!vm.pendingDone.delete(rootId)) return WasmStatus.NotFound;
        vm.afterCallback.push(() => {
          vm.deleteRoot(rootId);
          vm.env.rootDone?.(rootId);
        });
        return WasmStatus.Ok;
      },
      proxy_define_metric(kind: number, nPtr: number, nLen: number, outId: number) {
        const name = vm.text(nPtr, nLen);
        let id = [...vm.metrics].find(([, m]) => m.name === name)?.[0];
        if (id === undefined) {
          id = vm.metrics.size + 1;
          vm.metrics.set(id, { name, kind: kind as MetricKind, value: 0n });
        }
        vm.memory.setUint32(outId, id, true);
        return WasmStatus.Ok;
      },
      proxy_increment_metric(id: number, delta: bigint) {
        const m = vm.metrics.get(id);
        if (!m) return WasmStatus.NotFound;
        if (m.kind === MetricKind.Counter && delta <= 0n) return WasmStatus.BadArgument;
        m.value += delta;
        return WasmStatus.Ok;
      },
      proxy_record_metric(id: number, value: bigint) {
        const m = vm.metrics.get(id);
        if (!m) return WasmStatus.NotFound;
        m.value = m.kind === MetricKind.Gauge ? value : m.value + value;
        return WasmStatus.Ok;
      },
      proxy_get_metric(id: number, out: number) {
        const m = vm.metrics.get(id);
        if (!m) return WasmStatus.NotFound;
        vm.memory.setBigUint64(out, m.value, true);
        return WasmStatus.Ok;
      },
    } as unknown as Record<string, (...args: never[]) => number>;
  }
}

const NO_BYTES = new Uint8Array();

/** Bytes of module memory as they were, for recognizing them again (ProxyWasmVm.holds). */
interface Snapshot {
  bytes: Buffer;
  /** The whole 32-bit words of `bytes`. */
  words: Int32Array;
}

/** A text decoded from module memory, kept for its address (headerText). */
interface KeptText extends Snapshot {
  text: string;
  lower: string | undefined;
}
/** Texts longer than this are decoded each time; at most this many are kept. */
const MAX_KEPT_TEXT = 256;
const MAX_KEPT_TEXTS = 64;

/** A batched property read as the module asks it: its path, the dotted names, each name as UTF-8, and room for the values of one read. */
interface PropertyBatch extends Snapshot {
  names: readonly string[];
  keys: readonly Buffer[];
  values: Array<PropertyValue | undefined>;
}
/** Whether module memory at `at` starts with `bytes` (a few hundred bytes at most: a loop costs less than Buffer#compare's native call). */
function sameBytes(mem: Uint8Array, at: number, bytes: Uint8Array): boolean {
  if (at + bytes.length > mem.length) return false;
  for (let i = 0; i < bytes.length; i++) if (mem[at + i] !== bytes[i]) return false;
  return true;
}

/**
 * The same text as a string V8 keeps once (a property key's form): property
 * sources compare names with literals and look them up as object keys in
 * every request, which then costs a pointer compare instead of reading the text.
 */
function internalized(s: string): string {
  return Object.keys({ [s]: 0 })[0];
}

/** `mesh` NUL `properties` NUL: the path prefix of a batched property read. */
const BATCH_PREFIX = Buffer.from("mesh\0properties\0", "latin1");

/** Room enough for a property value in Envoy's encoding (giveValue): UTF-8 is at most 3 bytes per UTF-16 unit. */
function valueCapacity(value: PropertyValue): number {
  if (typeof value === "string") return value.length * 3;
  if (typeof value === "boolean") return 1;
  if (typeof value === "number" || typeof value === "bigint") return 8;
  return value.length;
}

/** Writes a property value in Envoy's encoding at `at`; returns the bytes written. */
function writeValue(mem: Buffer, view: DataView, value: PropertyValue, at: number): number {
  if (typeof value === "string") return writeString(mem, value, at);
  if (typeof value === "boolean") {
    mem[at] = value ? 1 : 0;
    return 1;
  }
  if (typeof value === "number" || typeof value === "bigint") {
    writeInt64(view, at, value);
    return 8;
  }
  mem.set(value, at);
  return value.length;
}
/** Envoy has a few dozen properties; a module asking for more names than this gets them converted each time. */
const MAX_DOTTED_NAMES = 256;

/** Writes an int64 (little-endian) without a BigInt for the safe non-negative integers sizes and codes are. */
function writeInt64(view: DataView, at: number, value: number | bigint): void {
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) {
    view.setUint32(at, value % 0x1_0000_0000, true);
    view.setUint32(at + 4, Math.floor(value / 0x1_0000_0000), true);
  } else {
    view.setBigInt64(at, BigInt(value), true);
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  const nonEmpty = parts.filter((p) => p.length > 0);
  if (nonEmpty.length === 1) return nonEmpty[0];
  const out = new Uint8Array(nonEmpty.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of nonEmpty) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function release(direction: DataDirection): void {
  if (direction.held.length > 0) direction.released.push(direction.held);
  direction.held = new Uint8Array();
}

function takeReleased(direction: DataDirection): Uint8Array {
  const out = concat(direction.released);
  direction.released = [];
  return out;
}

/** Property value encodings Envoy uses (proxy-wasm.md §1.5). */
export const propertyValue = {
  string: (s: string) => encoder.encode(s),
  bool: (b: boolean) => Uint8Array.of(b ? 1 : 0),
  int64: (n: bigint | number) => {
    const out = new Uint8Array(8);
    new DataView(out.buffer).setBigInt64(0, BigInt(n), true);
    return out;
  },
};
