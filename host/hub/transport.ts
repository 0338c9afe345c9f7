// The hub transport: executes the filter's hub calls (proxy_grpc_call) as
// unary gRPC calls over the project's HTTP/2 client (hub_connection.ts, grpc_wire.ts, ../wire/h2/), with
// the call's NetworkFailPolicy retries (hub-client §6.4).
//
// - One HTTP/2 connection per cluster endpoint, made on first use and kept
//   (keep-alive PINGs, reconnection with a short backoff so a restarted hub is
//   found again within a second or so). A cluster of several endpoints (hub
//   replicas) is used round robin: each attempt goes to the next endpoint, so
//   a retry after a failed attempt goes to another replica.
// - Unary calls on `/${service}/${method}`: the bytes the module encoded go
//   out as they are (one uncompressed gRPC message), and the answer comes back
//   as bytes. A retry re-sends the same bytes, hence the same deduplication id.
// - `x-mesh-retry-policy` is read (retry_policy.ts) and not sent; the other
//   metadata entries are forwarded (`-bin` ones base64 on the wire).
// - Up to `maxRetry` retries on transport errors (attempt_status.ts says which
//   codes those are and why), waiting `retryDelayMs` (base·2ⁿ with a jitter
//   floor of base, capped at max) on the injected clock with the injected
//   random source.
// - Each attempt has its own deadline, `timeoutMs` of the call (5000 ms from
//   the module), enforced by an injected timer and also sent to the hub as
//   `grpc-timeout`. The worst case of a call is therefore bounded by
//   (maxRetry+1)·timeoutMs + Σ waits; a silent hub cannot hang a request.
// - This is the only retry layer, so `attempts` counts what went on the wire.
// - The fail-open/close verdict is not made here: the module makes it when the
//   transport reports the final failure.

import type { OutgoingHttpHeaders } from "node:http2";
import type { GrpcCall } from "../wasm/abi_types.ts";
import { GRPC_CODES } from "../wire/status_codes.ts";
import { attemptStatus, type AttemptStatus } from "./attempt_status.ts";
import { type CancelTimer, type RandomSource, realClock, realRandom, type TransportClock } from "./clock.ts";
import type { Cluster } from "./clusters.ts";
import { metadataHeaders, hubRequestHeaders } from "./grpc_wire.ts";
import { framedMessage } from "../wire/grpc_frame.ts";
import { type CancelAttempt, type ConnectionTiming, HubConnection, type HubTlsOptions } from "./hub_connection.ts";
import { type RetryPolicy, retryDelayMs, retryPolicyFrom } from "../wasm/retry_policy.ts";

export type { HubTlsOptions } from "./hub_connection.ts";

/** Per-attempt deadline when a call carries none (upstream `kGrpcRequestTimeoutMs`). */
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 5000;
/** How long a connection (TCP and TLS) may take to be established (grpc-js's minimum connect timeout). */
export const CONNECT_TIMEOUT_MS = 20_000;
/** HTTP/2 PING interval on a hub connection, so a vanished hub is noticed between calls. */
export const KEEPALIVE_TIME_MS = 30_000;
/** How long a PING may go unanswered before the connection is dropped. */
export const KEEPALIVE_TIMEOUT_MS = 10_000;
/** First wait before reconnecting to a hub that refused or dropped us (grpc-js default 1000). */
export const INITIAL_RECONNECT_BACKOFF_MS = 100;
/** Longest wait between reconnection tries (grpc-js default 120 000: too long for a restarted hub). */
export const MAX_RECONNECT_BACKOFF_MS = 1000;
/** The user agent hub calls carry. */
export const HUB_USER_AGENT = `mesh-hub-transport (node ${process.version})`;

/** How a hub call ended: the hub's answer, or the status of the last failed attempt. */
export type HubCallResult = { ok: true; message: Uint8Array; attempts: number } | { ok: false; code: number; message: string; attempts: number };

/** What `connectVm` needs from a transport. */
export interface HubCaller {
  call(call: GrpcCall): Promise<HubCallResult>;
}

/** One attempt that failed, for logs and host counters. */
export interface FailedAttempt {
  cluster: string;
  method: string;
  /** 1-based attempt number. */
  attempt: number;
  status: AttemptStatus;
  /** How long the attempt took, ms on the transport's clock. */
  durationMs: number;
  /** The wait before the next attempt, when there will be one. */
  retryInMs?: number;
}

export interface HubTransportOptions {
  /** Clusters by name (clusters.ts `parseClusters`). */
  clusters: ReadonlyMap<string, Cluster>;
  clock?: TransportClock;
  random?: RandomSource;
  /** Called for every failed attempt (retried or final). Must not throw. */
  onAttemptFailed?: (attempt: FailedAttempt) => void;
  /** Keep-alive and reconnection timing, over the defaults above. */
  connection?: Partial<ConnectionTiming>;
  /**
   * Mutual TLS of new connections (`--controlPlaneAuthPolicy MUTUAL_TLS`: the
   * workload certificate); undefined, or a function returning undefined: plain
   * text. Read whenever a connection is created, so `renewCredentials()` after
   * a certificate rotation takes effect.
   */
  credentials?: () => HubTlsOptions | undefined;
}

/** One attempt in flight, so `close()` can end it. */
interface InFlight {
  cancel(): void;
}

/** What calls of one shape (service, method, metadata, deadline) are sent with. */
interface CallShape {
  headers: OutgoingHttpHeaders;
  policy: RetryPolicy;
  timeoutMs: number;
}

/** Call shapes remembered; past this many (metadata that changes per call) the memory starts over. */
const CALL_SHAPES_KEPT = 64;

type Outcome = { ok: true; message: Uint8Array } | { ok: false; status: AttemptStatus };

const CLOSED: Outcome = { ok: false, status: { code: GRPC_CODES.CANCELLED, message: "hub transport closed", retryable: false } };

/**
 * Carries the filter's hub calls to named clusters.
 *
 * @example
 * const transport = new HubTransport({ clusters: parseClusters(["hub_server=127.0.0.1:9091"]) });
 * const result = await transport.call(grpcCallFromTheModule);
 * if (result.ok) vm.grpcReceive(call.rootId, call.token, result.message);
 */
export class HubTransport implements HubCaller {
  private readonly clusters: ReadonlyMap<string, Cluster>;
  private readonly clock: TransportClock;
  private readonly random: RandomSource;
  private readonly onAttemptFailed: (attempt: FailedAttempt) => void;
  private readonly timing: ConnectionTiming;
  private readonly credentials: () => HubTlsOptions | undefined;
  /** Per cluster (by name): its endpoints' connections, made on first use, and the endpoint the next attempt goes to. */
  private readonly connections = new Map<string, { next: number; byEndpoint: Array<HubConnection | undefined> }>();
  private readonly inFlight = new Set<InFlight>();
  /** Call shapes by key (`shapeOf`). */
  private readonly shapes = new Map<string, CallShape | string>();
  private closed = false;

  constructor(options: HubTransportOptions) {
    this.clusters = options.clusters;
    this.clock = options.clock ?? realClock;
    this.random = options.random ?? realRandom;
    this.onAttemptFailed = options.onAttemptFailed ?? (() => {});
    this.credentials = options.credentials ?? (() => undefined);
    this.timing = {
      connectTimeoutMs: CONNECT_TIMEOUT_MS,
      keepaliveTimeMs: KEEPALIVE_TIME_MS,
      keepaliveTimeoutMs: KEEPALIVE_TIMEOUT_MS,
      initialBackoffMs: INITIAL_RECONNECT_BACKOFF_MS,
      maxBackoffMs: MAX_RECONNECT_BACKOFF_MS,
      ...options.connection,
    };
  }

  /**
   * Runs a hub call to completion: the first OK answer, or the last failure
   * once retries are spent or a failure is not retryable. Never rejects.
   * Failures before any attempt (unknown cluster, bad metadata, closed
   * transport) report `attempts: 0`.
   */
  async call(call: GrpcCall): Promise<HubCallResult> {
    const fail = (code: number, message: string, attempts = 0): HubCallResult => ({ ok: false, code, message, attempts });
    if (this.closed) return fail(GRPC_CODES.UNAVAILABLE, "hub transport closed");
    const cluster = this.clusters.get(call.cluster);
    if (!cluster) {
      const known = [...this.clusters.keys()].join(", ") || "none";
      return fail(GRPC_CODES.UNAVAILABLE, `unknown cluster ${JSON.stringify(call.cluster)} (configured: ${known}); pass --cluster ${call.cluster}=HOST:PORT`);
    }
    const shape = this.shapeOf(call);
    if (typeof shape === "string") return fail(GRPC_CODES.INTERNAL, shape);
    const { headers, policy, timeoutMs } = shape;
    const framed = framedMessage(call.message);

    for (let attempt = 1; ; attempt++) {
      if (this.closed) return fail(GRPC_CODES.CANCELLED, "hub transport closed", attempt - 1);
      const started = this.clock.now();
      const outcome = await this.attempt(cluster, headers, framed, timeoutMs);
      if (outcome.ok) return { ok: true, message: outcome.message, attempts: attempt };
      const status = outcome.status;
      const retriesMade = attempt - 1;
      const retry = status.retryable && retriesMade < policy.maxRetry && !this.closed;
      const retryInMs = retry ? retryDelayMs(policy, retriesMade, this.random()) : undefined;
      this.report({ cluster: cluster.name, method: call.method, attempt, status, durationMs: this.clock.now() - started, retryInMs });
      if (retryInMs === undefined) return fail(status.code, status.message, attempt);
      await this.clock.sleep(retryInMs);
    }
  }

  /**
   * Closes every connection. Attempts in flight are cancelled and their calls
   * end with CANCELLED `hub transport closed`; a call waiting to retry ends so
   * when its wait is over; later calls fail at once with UNAVAILABLE.
   */
  close(): void {
    this.closed = true;
    for (const attempt of [...this.inFlight]) attempt.cancel();
    for (const { byEndpoint } of this.connections.values()) for (const connection of byEndpoint) connection?.close();
    this.connections.clear();
  }

  /**
   * New calls go out on new connections made with fresh credentials (after
   * the workload certificate rotated); the old connections are closed once
   * the calls on them had time to finish.
   */
  renewCredentials(): void {
    // The round robin goes on where it was.
    for (const slot of this.connections.values()) {
      for (const connection of slot.byEndpoint) connection?.retire();
      slot.byEndpoint = [];
    }
  }

  /**
   * The headers, retry policy and deadline of a call of this shape, or why its
   * metadata is refused. Made once per shape: the filter's calls come in a
   * few (Check, Report, quota; the same metadata each time), and the same
   * headers object lets the connection reuse its encoded header block.
   */
  private shapeOf(call: GrpcCall): CallShape | string {
    let key = `${call.service.length}:${call.service}${call.method.length}:${call.method}${call.timeoutMs}`;
    for (const [name, value] of call.metadata) key += `;${name.length}:${name}${value.length}:${value}`;
    let shape = this.shapes.get(key);
    if (shape !== undefined) return shape;
    let metadata: Record<string, string | string[]>;
    try {
      metadata = metadataHeaders(call.metadata);
    } catch (e) {
      shape = `hub call metadata refused: ${(e as Error).message}`;
    }
    if (shape === undefined) {
      const timeoutMs = call.timeoutMs > 0 ? call.timeoutMs : DEFAULT_ATTEMPT_TIMEOUT_MS;
      shape = {
        headers: Object.freeze(hubRequestHeaders(`/${call.service}/${call.method}`, metadata!, timeoutMs, HUB_USER_AGENT)),
        policy: retryPolicyFrom(call.metadata),
        timeoutMs,
      };
    }
    if (this.shapes.size >= CALL_SHAPES_KEPT) this.shapes.clear();
    this.shapes.set(key, shape);
    return shape;
  }

  /** The connection to the cluster's next endpoint (round robin). */
  private connection(cluster: Cluster): HubConnection {
    const endpoints = cluster.endpoints ?? [cluster];
    let slot = this.connections.get(cluster.name);
    if (slot === undefined) {
      slot = { next: 0, byEndpoint: [] };
      this.connections.set(cluster.name, slot);
    }
    const i = slot.next % endpoints.length;
    slot.next = i + 1;
    let connection = slot.byEndpoint[i];
    if (connection === undefined) {
      connection = new HubConnection(endpoints[i].address, endpoints[i].target, this.credentials(), this.timing, this.random);
      slot.byEndpoint[i] = connection;
    }
    return connection;
  }

  private attempt(cluster: Cluster, headers: OutgoingHttpHeaders, framed: Buffer, timeoutMs: number): Promise<Outcome> {
    return new Promise((resolve) => {
      let settled = false;
      let cancelDeadline: CancelTimer = () => {};
      let cancelAttempt: CancelAttempt = () => {};
      const settle = (value: Outcome) => {
        if (settled) return;
        settled = true;
        cancelDeadline();
        this.inFlight.delete(entry);
        resolve(value);
      };
      const entry: InFlight = {
        cancel: () => {
          cancelAttempt();
          settle(CLOSED);
        },
      };
      cancelAttempt = this.connection(cluster).unary(headers, framed, (outcome) => {
        if (outcome.ok) settle(outcome);
        else
          settle({
            ok: false,
            status: attemptStatus({ code: outcome.status.code, details: outcome.status.details, answered: outcome.answered, timedOut: false }),
          });
      });
      if (settled) return;
      this.inFlight.add(entry);
      cancelDeadline = this.clock.setTimer(timeoutMs, () => {
        cancelAttempt();
        settle({ ok: false, status: attemptStatus({ code: GRPC_CODES.DEADLINE_EXCEEDED, details: "deadline exceeded", answered: false, timedOut: true }) });
      });
    });
  }

  private report(attempt: FailedAttempt): void {
    try {
      this.onAttemptFailed(attempt);
    } catch {
      // an observer's bug must not break hub calls
    }
  }
}
