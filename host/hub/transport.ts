// The hub transport: executes the filter's hub calls (proxy_grpc_call) over
// @grpc/grpc-js, with the call's NetworkFailPolicy retries (hub-client §6.4).
//
// - One channel per cluster endpoint, created on first use and kept (HTTP/2
//   keep-alive pings, reconnection with a short backoff so a restarted hub is
//   found again within a second or so). A cluster of several endpoints (hub
//   replicas) is used round robin: each attempt goes to the next endpoint, so
//   a retry after a failed attempt goes to another replica.
// - Unary calls on `/${service}/${method}` with identity serializers: the bytes
//   the module encoded go out as they are, and the answer comes back as bytes.
//   A retry re-sends the same bytes, hence the same deduplication id.
// - `x-mesh-retry-policy` is read (retry_policy.ts) and not sent; the other
//   metadata entries are forwarded.
// - Up to `maxRetry` retries on transport errors (attempt_status.ts says which
//   codes those are and why), waiting `retryDelayMs` (base·2ⁿ with a jitter
//   floor of base, capped at max) on the injected clock with the injected
//   random source.
// - Each attempt has its own deadline, `timeoutMs` of the call (5000 ms from
//   the module), enforced by an injected timer and also sent to the hub as
//   `grpc-timeout`. The worst case of a call is therefore bounded by
//   (maxRetry+1)·timeoutMs + Σ waits; a silent hub cannot hang a request.
// - grpc-js's own retries are switched off: this is the only retry layer, so
//   `attempts` counts what went on the wire.
// - The fail-open/close verdict is not made here: the module makes it when the
//   transport reports the final failure.

import * as grpc from "@grpc/grpc-js";
import type { GrpcCall } from "../wasm/abi_types.ts";
import { GRPC_CODES } from "../wire/status_codes.ts";
import { attemptStatus, type AttemptStatus } from "./attempt_status.ts";
import { type CancelTimer, type RandomSource, realClock, realRandom, type TransportClock } from "./clock.ts";
import type { Cluster } from "./clusters.ts";
import { RETRY_POLICY_METADATA, retryDelayMs, retryPolicyFrom } from "../wasm/retry_policy.ts";

/** Per-attempt deadline when a call carries none (upstream `kGrpcRequestTimeoutMs`). */
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 5000;
/** HTTP/2 PING interval on a hub connection, so a vanished hub is noticed between calls. */
export const KEEPALIVE_TIME_MS = 30_000;
/** How long a PING may go unanswered before the connection is dropped. */
export const KEEPALIVE_TIMEOUT_MS = 10_000;
/** First wait before reconnecting to a hub that refused or dropped us (grpc-js default 1000). */
export const INITIAL_RECONNECT_BACKOFF_MS = 100;
/** Longest wait between reconnection tries (grpc-js default 120 000: too long for a restarted hub). */
export const MAX_RECONNECT_BACKOFF_MS = 1000;

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
  /** Extra grpc-js channel options, merged over the transport's. */
  channelOptions?: grpc.ChannelOptions;
  /**
   * Credentials of new channels (`--controlPlaneAuthPolicy MUTUAL_TLS`: the
   * workload certificate); default plain text. Read whenever a channel is
   * created, so `renewCredentials()` after a certificate rotation takes effect.
   */
  credentials?: () => grpc.ChannelCredentials;
}

/** How long a channel replaced by renewCredentials() keeps serving calls already on it. */
export const REPLACED_CHANNEL_GRACE_MS = 10_000;

const identity = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
const asBytes = (buffer: Buffer): Uint8Array => new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);

/** One attempt in flight, so `close()` can end it. */
interface InFlight {
  cancel(): void;
}

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
  private readonly channelOptions: grpc.ChannelOptions;
  private readonly credentials: () => grpc.ChannelCredentials;
  private readonly channels = new Map<string, grpc.Client>();
  /** Per cluster: the endpoint the next attempt goes to. */
  private readonly nextEndpoint = new Map<string, number>();
  private readonly inFlight = new Set<InFlight>();
  private closed = false;

  constructor(options: HubTransportOptions) {
    this.clusters = options.clusters;
    this.clock = options.clock ?? realClock;
    this.random = options.random ?? realRandom;
    this.onAttemptFailed = options.onAttemptFailed ?? (() => {});
    this.credentials = options.credentials ?? (() => grpc.credentials.createInsecure());
    this.channelOptions = {
      "grpc.keepalive_time_ms": KEEPALIVE_TIME_MS,
      "grpc.keepalive_timeout_ms": KEEPALIVE_TIMEOUT_MS,
      "grpc.keepalive_permit_without_calls": 1,
      "grpc.initial_reconnect_backoff_ms": INITIAL_RECONNECT_BACKOFF_MS,
      "grpc.max_reconnect_backoff_ms": MAX_RECONNECT_BACKOFF_MS,
      "grpc.enable_retries": 0,
      ...options.channelOptions,
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
    let metadata: grpc.Metadata;
    try {
      metadata = forwardedMetadata(call.metadata);
    } catch (e) {
      return fail(GRPC_CODES.INTERNAL, `hub call metadata refused: ${(e as Error).message}`);
    }
    const policy = retryPolicyFrom(call.metadata);
    const timeoutMs = call.timeoutMs > 0 ? call.timeoutMs : DEFAULT_ATTEMPT_TIMEOUT_MS;
    const path = `/${call.service}/${call.method}`;

    for (let attempt = 1; ; attempt++) {
      if (this.closed) return fail(GRPC_CODES.CANCELLED, "hub transport closed", attempt - 1);
      const started = this.clock.now();
      const outcome = await this.attempt(cluster, path, call.message, metadata, timeoutMs);
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
   * Closes every channel. Attempts in flight are cancelled and their calls end
   * with CANCELLED `hub transport closed`; a call waiting to retry ends so when
   * its wait is over; later calls fail at once with UNAVAILABLE.
   */
  close(): void {
    this.closed = true;
    for (const attempt of [...this.inFlight]) attempt.cancel();
    for (const channel of this.channels.values()) channel.close();
    this.channels.clear();
  }

  /**
   * New calls go out on new channels made with fresh credentials (after the
   * workload certificate rotated); the old channels are closed once the calls
   * on them had time to finish.
   */
  renewCredentials(): void {
    const old = [...this.channels.values()];
    this.channels.clear();
    if (old.length > 0) setTimeout(() => old.forEach((c) => c.close()), REPLACED_CHANNEL_GRACE_MS).unref();
  }

  /** The channel of the cluster's next endpoint (round robin). */
  private channel(cluster: Cluster): grpc.Client {
    const endpoints = cluster.endpoints ?? [cluster];
    const i = (this.nextEndpoint.get(cluster.name) ?? 0) % endpoints.length;
    this.nextEndpoint.set(cluster.name, i + 1);
    const key = `${cluster.name}\u0000${i}`;
    let channel = this.channels.get(key);
    if (!channel) {
      channel = new grpc.Client(endpoints[i].target, this.credentials(), this.channelOptions);
      this.channels.set(key, channel);
    }
    return channel;
  }

  private attempt(
    cluster: Cluster,
    path: string,
    message: Uint8Array,
    metadata: grpc.Metadata,
    timeoutMs: number,
  ): Promise<{ ok: true; message: Uint8Array } | { ok: false; status: AttemptStatus }> {
    return new Promise((resolve) => {
      let answered = false;
      let timedOut = false;
      let cancelledByClose = false;
      let settled = false;
      let cancelDeadline: CancelTimer = () => {};
      const entry: InFlight = {
        cancel: () => {
          cancelledByClose = true;
          call.cancel();
        },
      };
      const settle = (value: { ok: true; message: Uint8Array } | { ok: false; status: AttemptStatus }) => {
        if (settled) return;
        settled = true;
        cancelDeadline();
        this.inFlight.delete(entry);
        resolve(value);
      };
      const call = this.channel(cluster).makeUnaryRequest<Uint8Array, Buffer>(
        path,
        identity,
        (b: Buffer) => b,
        message,
        metadata.clone(),
        // The hub learns the deadline too (grpc-timeout); our timer is the authority.
        { deadline: Date.now() + timeoutMs },
        (error, response) => {
          if (cancelledByClose) {
            settle({ ok: false, status: { code: GRPC_CODES.CANCELLED, message: "hub transport closed", retryable: false } });
          } else if (!error && response) {
            settle({ ok: true, message: asBytes(response) });
          } else if (!error) {
            settle({ ok: false, status: { code: GRPC_CODES.INTERNAL, message: "hub answered without a message", retryable: false } });
          } else {
            // A trailers-only status from the hub carries its response headers (content-type …) in the metadata.
            const heard = answered || (error.metadata !== undefined && Object.keys(error.metadata.getMap()).length > 0);
            settle({ ok: false, status: attemptStatus({ code: error.code, details: error.details, answered: heard, timedOut }) });
          }
        },
      );
      call.on("metadata", () => {
        answered = true;
      });
      if (settled) return;
      this.inFlight.add(entry);
      cancelDeadline = this.clock.setTimer(timeoutMs, () => {
        timedOut = true;
        call.cancel();
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

/** The call's metadata without the retry policy entry, as grpc-js Metadata; throws on a key grpc-js refuses. */
export function forwardedMetadata(entries: ReadonlyArray<readonly [string, string]>): grpc.Metadata {
  const metadata = new grpc.Metadata();
  for (const [key, value] of entries) {
    const name = key.toLowerCase();
    if (name === RETRY_POLICY_METADATA) continue;
    // Binary entries (`-bin`) travel as raw bytes; grpc-js base64-encodes them on the wire.
    metadata.add(name, name.endsWith("-bin") ? Buffer.from(value, "latin1") : value);
  }
  return metadata;
}
