import { type BufferType, type GrpcCall, type LocalReply, type MetricKind, WasmStatus } from "./abi_types.ts";
import type { LogSink } from "./filter_module.ts";
import type { HeaderMap } from "./header_map.ts";
import type { PropertyResolver, StreamProperties } from "./abi_properties.ts";
import { IdTable } from "./id_table.ts";

/** What the embedder provides to the module besides the stream data. */
export interface HostEnvironment {
  log: LogSink;
  /** Wall clock, Unix nanoseconds. */
  now(): bigint;
  /**
   * The same wall clock in whole Unix milliseconds, for a host whose clock
   * has no finer resolution (Date.now()): when given, the module's clock
   * reads it instead of `now`, and its nanoseconds are made without a bigint.
   */
  nowMilliseconds?(): number;
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
export interface DataDirection {
  held: Uint8Array;
  released: Uint8Array[];
}

export interface ConnectionState {
  downstream: DataDirection;
  upstream: DataDirection;
  /** Set when the module called proxy_continue_stream(downstream) since the last takeConnectionSignals. */
  continued: boolean;
  closeDownstream: boolean;
  closeUpstream: boolean;
}

export interface StreamState {
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

/**
 * The host's side of the module's contexts, shared by the VM that drives
 * the callbacks (abi_host.ts) and the host calls (abi_*.ts) that answer the
 * module: roots, streams and connections, the effective context, the
 * buffers a callback may read, metrics, and the last gRPC status.
 */
export class ContextState {
  readonly metrics = new Map<number, Metric>();
  /** Open streams and connections by context id (id_table.ts: not a Map, whose replaced tables keep old entries alive through minor GCs). */
  readonly streams = new IdTable<StreamState>();
  readonly roots = new Set<number>();
  /** Roots whose proxy_on_done answered false: deleted when the module calls proxy_done. */
  readonly pendingDone = new Set<number>();
  /** Effects to run once the current callback has returned (as cpp-host defers a root's deletion after proxy_done). */
  afterCallback: Array<() => void> = [];
  nextToken = 1;
  /** The effective context: the one whose callback runs, or the one the module chose (proxy_set_effective_context). */
  current = 0;
  readonly buffers = new Map<BufferType, Uint8Array>();
  lastStatus: { code: number; message: string } = { code: 0, message: "" };

  /** The stream the module currently acts on (the effective context). */
  effectiveStream(): StreamState | undefined {
    return this.streams.get(this.current);
  }

  rootOf(contextId: number): number {
    return this.roots.has(contextId) ? contextId : (this.streams.get(contextId)?.rootId ?? contextId);
  }
}

/**
 * Context calls: proxy_set_effective_context, and proxy_done (a root that
 * answered false from proxy_on_done is finished: `deleteRoot` runs once the
 * current callback has returned).
 */
export function contextImports(state: ContextState, env: HostEnvironment, deleteRoot: (rootId: number) => void) {
  return {
    proxy_set_effective_context(id: number) {
      if (!state.streams.has(id) && !state.roots.has(id)) return WasmStatus.BadArgument;
      state.current = id;
      return WasmStatus.Ok;
    },
    proxy_done() {
      const rootId = state.rootOf(state.current);
      if (!state.pendingDone.delete(rootId)) return WasmStatus.NotFound;
      state.afterCallback.push(() => {
        deleteRoot(rootId);
        env.rootDone?.(rootId);
      });
      return WasmStatus.Ok;
    },
  };
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
