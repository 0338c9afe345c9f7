import { messageType } from "../wire/protos.ts";
import { DEFAULT_RETRY_POLICY, type RetryPolicy, retryDelayMs, retryPolicyFrom } from "./retry_policy.ts";
import { type ConnectionSignals, type PropertyResolver, ProxyWasmVm, propertyValue } from "./abi_host.ts";
import { Action, type GrpcCall, type HeaderList, type LocalReply, MapType, PeerType, StreamType } from "./abi_types.ts";
import { RELEASE_WASM } from "./filter_module.ts";

/** A scripted answer to one attempt of a hub call. */
export type HubAnswer = { respond: Record<string, unknown> } | { fail: { code: number; message: string } };

/** A hub call as the emulator saw it, with every attempt the host's retry policy made. */
export interface EmulatedCall extends GrpcCall {
  decoded: Record<string, any>;
  /** The retry policy the host executes (only with `hostRetries`; none otherwise). */
  policy: RetryPolicy;
  /** The emulator's clock when the module made the call (ns). */
  atNanos: bigint;
  attempts: number;
  /** Waits drawn before each retry, ms. */
  backoffMs: number[];
  answered: boolean;
  /** The module cancelled the call (its connection closed first). */
  cancelled?: boolean;
}

export interface StreamResult {
  id: number;
  action: Action;
  localReply?: LocalReply;
}

export type PropertyValue = string | boolean | number | bigint | Uint8Array;

/** What one piece of TCP data did: the callback's action and what the module asked for since. */
export interface DataResult extends ConnectionSignals {
  action: Action;
  /** Bytes released toward the other side (empty while the module holds them). */
  forwarded: Uint8Array;
}

export interface EmulatorOptions {
  /**
   * Emulate a host that executes the NetworkFailPolicy's retries itself, as
   * our Node host does: the root property `mesh.host_retries` is true and each
   * call's `x-mesh-retry-policy` metadata is executed against the script.
   * Default false: a host like Envoy, where the module retries on its timer.
   */
  hostRetries?: boolean;
  /** Answer batched property reads, as our Node host does (default true); false: NOT_FOUND, as Envoy. */
  propertyBatches?: boolean;
}

/**
 * An in-process proxy-wasm host for tests, in the manner of
 * proxy-wasm-go-sdk's proxytest: it loads the built module, configures it,
 * feeds HTTP streams and TCP connections, answers hub calls from a script
 * (executing the call's retry policy when it emulates a host that retries),
 * fires ticks on an injected clock, shuts the root context down as a proxy
 * does (proxy_on_done / proxy_done), and exposes local replies, header
 * changes, logs and counters.
 */
export class FilterEmulator {
  readonly vm: ProxyWasmVm;
  readonly logs: Array<{ level: string; message: string }> = [];
  readonly calls: EmulatedCall[] = [];
  rootId = 0;
  configured = false;
  nowNanos = 1_763_800_000_000_000_000n;
  tickMs = 0;
  /** When the tick timer fires next (meaningful while tickMs > 0). */
  private nextTickNanos = 0n;
  /** Answers for the next hub call attempts, in order; when empty, calls stay pending. */
  script: HubAnswer[] = [];
  private readonly streamProperties = new Map<number, Record<string, PropertyValue>>();
  /** Every property the module asked the emulator for (its root's and its streams'), by dotted name, in order (a batched read names each of its properties). */
  readonly propertiesAsked: string[] = [];
  /** Random source for backoff jitter. */
  random: () => number = () => 0.5;
  readonly hostRetries: boolean;
  /** The root context called proxy_done after answering false from proxy_on_done. */
  rootDone = false;

  constructor(config: object | string, wasm: string = RELEASE_WASM, options: EmulatorOptions = {}) {
    this.hostRetries = options.hostRetries ?? false;
    const rootProperties = this.resolver(this.hostRetries ? { "mesh.host_retries": true } : {});
    this.vm = new ProxyWasmVm(wasm, {
      rootProperties,
      propertyBatches: options.propertyBatches ?? true,
      rootDone: () => {
        this.rootDone = true;
      },
      log: (level, message) => this.logs.push({ level, message }),
      now: () => this.nowNanos,
      grpcCall: (call) => this.onCall(call),
      // Setting the period re-arms the timer from now, as Envoy's Wasm::setTickPeriod does.
      tickPeriod: (_root, ms) => {
        this.tickMs = ms;
        this.nextTickNanos = this.nowNanos + BigInt(ms) * 1_000_000n;
      },
      grpcCancel: (token) => {
        const call = this.calls.find((c) => c.token === token);
        if (call) call.cancelled = true;
      },
    });
    const { rootId, accepted } = this.vm.startRoot(typeof config === "string" ? config : JSON.stringify(config));
    this.rootId = rootId;
    this.configured = accepted;
  }

  configure(config: object | string): boolean {
    return this.vm.configure(this.rootId, typeof config === "string" ? config : JSON.stringify(config));
  }

  /** Opens a TCP connection with the given properties (`source.address`, `connection.mtls`, …); returns its id. */
  connect(properties: Record<string, PropertyValue> = {}): number {
    const id = this.vm.newConnection(this.rootId, this.resolver({ ...properties }));
    this.drain();
    return id;
  }

  /** Client bytes (a string is sent as UTF-8; a number as that many bytes); hub calls are answered from `script`. */
  downstream(id: number, data: Uint8Array | string | number, endOfStream = false): DataResult {
    const action = this.vm.downstreamData(id, bytesOf(data), endOfStream);
    this.drain();
    return { action, ...this.vm.takeConnectionSignals(id), forwarded: this.vm.takeDownstream(id) };
  }

  /** Server bytes toward the client. */
  upstream(id: number, data: Uint8Array | string | number, endOfStream = false): DataResult {
    const action = this.vm.upstreamData(id, bytesOf(data), endOfStream);
    this.drain();
    return { action, ...this.vm.takeConnectionSignals(id), forwarded: this.vm.takeUpstream(id) };
  }

  /** What the module asked of the connection since the last look, and the client bytes it released meanwhile. */
  connectionSignals(id: number): ConnectionSignals & { forwarded: Uint8Array } {
    return { ...this.vm.takeConnectionSignals(id), forwarded: this.vm.takeDownstream(id) };
  }

  /** Closes a connection (the client by default) and ends its context: close callback, done, log, delete. */
  closeConnection(id: number, peer: PeerType = PeerType.Remote, side: StreamType.Downstream | StreamType.Upstream = StreamType.Downstream): void {
    this.vm.connectionClosed(id, peer, side);
    this.vm.finishConnection(id);
    this.drain();
  }

  /** A counter of the TCP client (`hub_client.tcp.<name>`). */
  tcpCounter(name: string): number {
    return Number(this.vm.metricByName(`hub_client.tcp.${name}`) ?? 0n);
  }

  /**
   * Sends request headers through the filter; hub calls are answered from
   * `script` as they are made. `withBody`: a body follows the headers (they
   * do not end the stream); by default only when `request.size` says so.
   */
  request(headers: HeaderList | Record<string, string>, properties: Record<string, PropertyValue> = {}, withBody?: boolean): StreamResult {
    const props: Record<string, PropertyValue> = { ...properties };
    const id = this.vm.createStream(this.rootId, this.resolver(props));
    this.streamProperties.set(id, props);
    const list: HeaderList = Array.isArray(headers) ? headers : Object.entries(headers);
    const action = this.vm.requestHeaders(id, list, !(withBody ?? hasBody(props["request.size"])));
    this.drain();
    return { id, action, localReply: this.vm.takeLocalReply(id) };
  }

  // Properties by their dotted path, encoded as Envoy encodes them.
  private resolver(props: Record<string, PropertyValue>): PropertyResolver {
    return (path) => {
      const name = path.join(".");
      this.propertiesAsked.push(name);
      const value = props[name];
      if (value === undefined) return undefined;
      if (value instanceof Uint8Array) return value;
      if (typeof value === "string") return propertyValue.string(value);
      if (typeof value === "boolean") return propertyValue.bool(value);
      return propertyValue.int64(value);
    };
  }

  /** Headers the request would reach upstream with. */
  requestHeaders(id: number): HeaderList {
    return this.vm.headers(id, MapType.RequestHeaders);
  }

  continued(id: number): boolean {
    return this.vm.takeContinue(id);
  }

  /**
   * Completes a stream: response headers, then log/done/delete, with the
   * completion properties a proxy has by then (response.code, sizes, …).
   * The response headers end the stream unless `response.size` says a body
   * followed or there are `trailers`.
   */
  finish(id: number, status = 200, headers: HeaderList = [], properties: Record<string, PropertyValue> = {}, trailers: HeaderList = []): HeaderList {
    const props = Object.assign(this.streamProperties.get(id) ?? {}, { "response.code": BigInt(status), ...properties });
    this.vm.responseHeaders(id, [[":status", String(status)], ...headers], !hasBody(props["response.size"]) && trailers.length === 0);
    const out = this.vm.headers(id, MapType.ResponseHeaders);
    if (trailers.length > 0) this.vm.responseTrailers(id, trailers);
    this.vm.finishStream(id);
    this.streamProperties.delete(id);
    this.drain();
    return out;
  }

  /** Moves the clock by `ms`, firing the tick timer each time it falls due (the module may re-arm it from a tick). */
  advance(ms: number): void {
    const target = this.nowNanos + BigInt(ms) * 1_000_000n;
    while (this.tickMs > 0 && this.nextTickNanos <= target) {
      this.nowNanos = this.nextTickNanos > this.nowNanos ? this.nextTickNanos : this.nowNanos;
      this.nextTickNanos = this.nowNanos + BigInt(this.tickMs) * 1_000_000n;
      if (this.vm.hasRoot(this.rootId)) this.vm.tick(this.rootId);
      this.drain();
    }
    this.nowNanos = target;
    this.drain();
  }

  /**
   * The proxy releases the plugin: proxy_on_done on the root, then (when it
   * answered true) proxy_on_delete. Returns true when the root is gone at
   * once; false when the module is still sending — it calls proxy_done later
   * (`rootDone`), after its calls are answered or its wait is over
   * (`advance` fires its ticks meanwhile).
   */
  shutdown(): boolean {
    const done = this.vm.shutdownRoot(this.rootId);
    this.drain();
    return done;
  }

  counter(name: string): number {
    return Number(this.vm.metricByName(`hub_client.${name}`) ?? 0n);
  }

  /** Answers the pending calls from the script (also calls dispatched while answering). */
  drain(): void {
    for (let i = 0; i < this.calls.length; i++) {
      const call = this.calls[i];
      if (call.answered || call.cancelled || this.script.length === 0) continue;
      this.settle(call);
    }
  }

  /** Answers a pending call directly (for tests that hold calls open). */
  answer(call: EmulatedCall, answer: HubAnswer): void {
    this.script.unshift(answer);
    this.settle(call);
  }

  private onCall(call: GrpcCall): void {
    const type = call.method === "Report" ? "mesh.hub.v1.ReportRequest" : "mesh.hub.v1.CheckRequest";
    const decoded = messageType(type).toObject(messageType(type).decode(call.message), { longs: Number, defaults: false }) as Record<string, any>;
    const policy = this.hostRetries ? retryPolicyFrom(call.metadata) : { ...DEFAULT_RETRY_POLICY, maxRetry: 0 };
    this.calls.push({ ...call, decoded, policy, atNanos: this.nowNanos, attempts: 0, backoffMs: [], answered: false });
  }

  // Runs the call's attempts against the script as the host transport would:
  // up to 1 + maxRetry attempts, backoff drawn between them.
  private settle(call: EmulatedCall): void {
    while (this.script.length > 0) {
      const answer = this.script.shift() as HubAnswer;
      call.attempts++;
      if ("respond" in answer) {
        call.answered = true;
        const type = messageType(call.method === "Report" ? "mesh.hub.v1.ReportResponse" : "mesh.hub.v1.CheckResponse");
        this.vm.grpcReceive(call.rootId, call.token, type.encode(type.fromObject(answer.respond)).finish());
        return;
      }
      if (call.attempts > call.policy.maxRetry) {
        call.answered = true;
        this.vm.grpcClose(call.rootId, call.token, answer.fail.code, answer.fail.message);
        return;
      }
      call.backoffMs.push(retryDelayMs(call.policy, call.attempts - 1, this.random()));
    }
  }
}

function bytesOf(data: Uint8Array | string | number): Uint8Array {
  if (typeof data === "number") return new Uint8Array(data).fill(0x61);
  if (typeof data === "string") return new TextEncoder().encode(data);
  return data;
}

/** A body size property that says there is a body (the headers did not end the stream). */
function hasBody(size: PropertyValue | undefined): boolean {
  return (typeof size === "bigint" || typeof size === "number") && size > 0;
}
