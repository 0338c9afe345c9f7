import { ProxyWasmVm, type StreamProperties, WasmTrap } from "../../wasm/abi_host.ts";
import { Action, type GrpcCall, type HeaderList, type LocalReply, MapType, MetricKind, PeerType, StreamType } from "../../wasm/abi_types.ts";
import type { LogSink } from "../../wasm/filter_module.ts";
import { IdTable } from "../../wasm/id_table.ts";
import { type AnswerSink, connectVm, hostRetriesProperty } from "../../hub/dispatch.ts";
import type { HubCaller } from "../../hub/transport.ts";

export interface FilterHostOptions {
  wasm: string;
  /** Carries each hub call (with its retries) to the hub. */
  hub: HubCaller;
  log: LogSink;
  now?: () => bigint;
  /** Whether requests in flight when the module traps are let through (FAIL_OPEN) or refused. */
  failOpenOnTrap: () => boolean;
  /** The longest wait of close() for the last report batches (default SHUTDOWN_FLUSH_WAIT_MS). */
  shutdownFlushWaitMs?: number;
}

/** What the filter decided for a request's headers. */
export type RequestDecision =
  | { kind: "continue"; id: number; headers: HeaderList }
  | { kind: "reply"; id: number; reply: LocalReply }
  /** The module failed; `failOpen` says whether to deliver without it. */
  | { kind: "failed"; failOpen: boolean };

interface Waiter {
  resolve(decision: RequestDecision): void;
}

/** What the filter let through on a TCP connection since the last look. */
export interface ConnectionUpdate {
  /** Client bytes to forward upstream. */
  forward: Uint8Array;
  /** The filter closed the connection (denied, or FAIL_CLOSE). */
  close: boolean;
}

const TRAP_REPLY: LocalReply = { status: 503, details: "wasm_fail_stream", body: "filter failed", headers: [], grpcStatus: -1 };
/**
 * Longest wait at shutdown for the module to finish sending its last report
 * batches (it bounds its own wait at 5 s; this is the host's backstop).
 */
export const SHUTDOWN_FLUSH_WAIT_MS = 6000;

/**
 * The wall clock in Unix nanoseconds, at Date.now()'s millisecond
 * resolution: the module reads it several times per request, and within a
 * millisecond the same bigint serves (no new one per read).
 */
function wallClockNanos(): () => bigint {
  let ms = -1;
  let ns = 0n;
  return () => {
    const now = Date.now();
    if (now !== ms) {
      ms = now;
      ns = BigInt(now) * 1_000_000n;
    }
    return ns;
  };
}

/**
 * Runs build/filter.wasm for a sidecar: one VM and root context, hub calls
 * carried by the transport, ticks on real timers, and a VM re-created when
 * the module traps — the process never dies of it; requests caught in the
 * trap follow the configured fail policy.
 */
export class FilterHost {
  private vm!: ProxyWasmVm;
  private rootId = 0;
  private configuration = "";
  private tickTimer: NodeJS.Timeout | undefined;
  /** Streams paused for the hub, by id (an IdTable: see host/wasm/id_table.ts for why not a Map). */
  private readonly waiting = new IdTable<Waiter>();
  /** TCP connections held by the filter, told when a hub answer releases them. */
  private readonly watchedConnections = new Map<number, (update: ConnectionUpdate) => void>();
  /** VMs re-created after traps, for /stats. */
  restarts = 0;

  constructor(private readonly options: FilterHostOptions) {}

  /** Applies a plugin configuration; false (and the old one keeps serving) when the module refuses it. */
  configure(configuration: string): boolean {
    if (!this.vm) return this.start(configuration);
    const accepted = this.guard(() => this.vm.configure(this.rootId, configuration), false);
    if (accepted) this.configuration = configuration;
    return accepted;
  }

  get activeConfiguration(): string {
    return this.configuration;
  }

  /** The filter's counters (proxy metrics the module defined), name → value. */
  metrics(): Map<string, bigint> {
    const out = new Map<string, bigint>();
    if (this.vm) for (const m of this.vm.metrics.values()) out.set(m.name, m.value);
    return out;
  }

  /** The names of the filter's metrics that are gauges (the others are counters). */
  gauges(): Set<string> {
    const out = new Set<string>();
    if (this.vm) for (const m of this.vm.metrics.values()) if (m.kind === MetricKind.Gauge) out.add(m.name);
    return out;
  }

  /**
   * Runs request headers through the filter (`namesLowerCase`: the caller
   * vouches that every name is, and they are not checked again). A decision
   * the filter made at once is returned as it is, so the caller goes on in
   * the same turn; a promise when the filter paused for the hub.
   */
  onRequestHeaders(headers: HeaderList, properties: StreamProperties, namesLowerCase = false): RequestDecision | Promise<RequestDecision> {
    try {
      const id = this.vm.createStream(this.rootId, properties);
      const action = this.vm.requestHeaders(id, headers, false, namesLowerCase);
      const immediate = this.settled(id, action === Action.Continue);
      if (immediate) return immediate;
      return new Promise<RequestDecision>((resolve) => this.waiting.set(id, { resolve }));
    } catch (e) {
      return this.trapped(e);
    }
  }

  /** Response headers (names lower-case) through the filter (route-directive header operations). */
  onResponseHeaders(id: number, headers: HeaderList): HeaderList {
    // guard() spelled out: the per-request calls make no closure.
    try {
      const vm = this.vm;
      if (!vm.hasStream(id)) return headers;
      vm.responseHeaders(id, headers, false, true);
      return vm.headers(id, MapType.ResponseHeaders);
    } catch (e) {
      this.trapped(e);
      return headers;
    }
  }

  /** Stream end: log (the report), done, delete. `properties` now answers response.code and sizes. */
  finish(id: number): void {
    this.waiting.delete(id);
    try {
      const vm = this.vm;
      if (vm.hasStream(id)) vm.finishStream(id);
    } catch (e) {
      this.trapped(e);
    }
  }

  // ---------- TCP connections (TcpClientConfig)

  /** A new client connection; `onUpdate` hears of bytes released or a close decided later (after the hub answers). */
  openConnection(properties: StreamProperties, onUpdate: (update: ConnectionUpdate) => void): number | undefined {
    return this.guard(() => {
      const id = this.vm.newConnection(this.rootId, properties);
      this.watchedConnections.set(id, onUpdate);
      return id;
    }, undefined);
  }

  /** Client bytes; returns what may be forwarded now (nothing while the check is pending). */
  clientData(id: number, bytes: Uint8Array, endOfStream: boolean): ConnectionUpdate {
    return this.guard(
      () => {
        this.vm.downstreamData(id, bytes, endOfStream);
        return this.connectionUpdate(id);
      },
      { forward: bytes, close: !this.options.failOpenOnTrap() },
    );
  }

  /** Server bytes; returns what may go to the client. */
  serverData(id: number, bytes: Uint8Array, endOfStream: boolean): Uint8Array {
    return this.guard(() => {
      this.vm.upstreamData(id, bytes, endOfStream);
      return this.vm.takeUpstream(id);
    }, bytes);
  }

  /** Either side closed: the close report, then the connection's context ends. */
  closeConnection(id: number, side: "client" | "server"): void {
    this.watchedConnections.delete(id);
    this.guard(() => {
      if (!this.vm.isConnection(id)) return;
      this.vm.connectionClosed(id, PeerType.Remote, side === "client" ? StreamType.Downstream : StreamType.Upstream);
      this.vm.finishConnection(id);
    }, undefined);
  }

  private connectionUpdate(id: number): ConnectionUpdate {
    const signals = this.vm.takeConnectionSignals(id);
    return { forward: this.vm.takeDownstream(id), close: signals.closeDownstream };
  }

  /**
   * Releases the plugin as a proxy does: proxy_on_done on the root context.
   * When the module answers false (its last report batches are in flight)
   * ticks and hub answers keep reaching it until it calls proxy_done, or at
   * most SHUTDOWN_FLUSH_WAIT_MS; then the root is deleted. Resolves when it is.
   */
  async close(): Promise<void> {
    for (const [id, w] of this.waiting) w.resolve({ kind: "reply", id, reply: TRAP_REPLY });
    this.waiting.clear();
    const vm = this.vm;
    if (!vm) return;
    const done = new Promise<void>((resolve) => {
      this.onRootDone = resolve;
    });
    const immediate = this.guard(() => vm.shutdownRoot(this.rootId), true);
    if (!immediate && !vm.failed) {
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.options.shutdownFlushWaitMs ?? SHUTDOWN_FLUSH_WAIT_MS);
      });
      await Promise.race([done, waited]);
      clearTimeout(timer);
      if (vm.isRootPendingDone(this.rootId)) this.options.log("warn", "the filter did not finish its last report batches in time");
    }
    this.onRootDone = undefined;
    if (this.tickTimer) clearInterval(this.tickTimer);
    this.tickTimer = undefined;
  }

  private onRootDone: (() => void) | undefined;

  private start(configuration: string): boolean {
    let grpcCall: (call: GrpcCall) => void = () => {};
    // A VM that replaces a trapped one numbers its contexts on from the old
    // one's: the exchanges still in flight hold the old one's stream ids.
    const vm = new ProxyWasmVm(
      this.options.wasm,
      {
        log: this.options.log,
        now: this.options.now ?? wallClockNanos(),
        // The same clock for the module's reads, without a bigint per new millisecond.
        nowMilliseconds: this.options.now === undefined ? Date.now : undefined,
        grpcCall: (call) => grpcCall(call),
        tickPeriod: (rootId, ms) => this.scheduleTicks(vm, rootId, ms),
        // The hub transport executes each call's NetworkFailPolicy retries: the module must not retry too.
        rootProperties: hostRetriesProperty,
        rootDone: () => this.onRootDone?.(),
      },
      this.vm?.upcomingContextId,
    );
    // Answers reach only the current VM; after delivering one, the streams it
    // released are woken. A trap while delivering re-creates the VM.
    const host = this;
    const sink: AnswerSink = {
      get failed() {
        return vm !== host.vm || vm.failed;
      },
      grpcReceive: (rootId, token, message) => {
        vm.grpcReceive(rootId, token, message);
        this.wakeWaiting();
      },
      grpcClose: (rootId, token, code, message) => {
        vm.grpcClose(rootId, token, code, message);
        this.wakeWaiting();
      },
    };
    grpcCall = connectVm(sink, this.options.hub, {
      onUndelivered: (u) => {
        if (u.reason === "callback-threw" && u.error instanceof WasmTrap) this.trapped(u.error);
      },
    });
    const { rootId, accepted } = vm.startRoot(configuration);
    if (!accepted) return false;
    if (this.vm) this.vm.failed = true;
    this.vm = vm;
    this.rootId = rootId;
    this.configuration = configuration;
    return true;
  }

  // After a hub answer the module has continued or answered some paused
  // stream (the effective context tells the VM which); find it.
  private wakeWaiting(): void {
    for (const [id, notify] of this.watchedConnections) {
      if (!this.vm.isConnection(id)) continue;
      const update = this.connectionUpdate(id);
      if (update.forward.length > 0 || update.close) notify(update);
    }
    for (const [id, waiter] of this.waiting) {
      const decision = this.settled(id, false);
      if (decision) {
        this.waiting.delete(id);
        waiter.resolve(decision);
      }
    }
  }

  private settled(id: number, continuedNow: boolean): RequestDecision | undefined {
    const reply = this.vm.takeLocalReply(id);
    if (reply) return { kind: "reply", id, reply };
    if (continuedNow || this.vm.takeContinue(id)) return { kind: "continue", id, headers: this.vm.headers(id, MapType.RequestHeaders) };
    return undefined;
  }

  private scheduleTicks(vm: ProxyWasmVm, rootId: number, ms: number): void {
    if (this.tickTimer) clearInterval(this.tickTimer);
    this.tickTimer = undefined;
    if (ms <= 0) return;
    this.tickTimer = setInterval(() => {
      if (vm !== this.vm) return;
      this.guard(() => vm.tick(rootId), undefined);
      this.wakeWaiting();
    }, ms);
    this.tickTimer.unref();
  }

  private guard<T>(fn: () => T, fallback: T): T {
    try {
      return fn();
    } catch (e) {
      this.trapped(e);
      return fallback;
    }
  }

  // A trap kills the instance: every paused request is failed by the fail
  // policy, and a fresh VM takes over with the last good configuration.
  private trapped(e: unknown): RequestDecision {
    if (!(e instanceof WasmTrap)) throw e;
    const failOpen = this.options.failOpenOnTrap();
    this.options.log("critical", `${e.message}; re-creating the filter VM`);
    for (const [, w] of this.waiting) w.resolve({ kind: "failed", failOpen });
    this.waiting.clear();
    for (const [, notify] of this.watchedConnections) notify({ forward: new Uint8Array(), close: !failOpen });
    this.watchedConnections.clear();
    const configuration = this.configuration;
    this.vm.failed = true;
    this.restarts++;
    if (!this.start(configuration)) this.options.log("critical", "the filter VM could not be re-created");
    return { kind: "failed", failOpen };
  }
}
