import type { ConnectionPool } from "../../config/resources/networking.ts";
import type { LocalReply } from "../../wasm/abi_types.ts";

/**
 * DestinationRule `connectionPool` limits of one upstream cluster, as
 * Envoy's circuit breakers apply them to HTTP/1.1: at most `maxConnections`
 * requests on the wire at once (one per connection), at most
 * `http1MaxPendingRequests` more waiting for a connection; a request over
 * both is refused at once with 503 and `x-envoy-overloaded: true` (Envoy's
 * pending-request overflow). Unset limits are Envoy's defaults (1024 each).
 */

/** Envoy's default circuit-breaker thresholds. */
export const DEFAULT_MAX_CONNECTIONS = 1024;
export const DEFAULT_MAX_PENDING_REQUESTS = 1024;

/** Envoy's answer to a request over the limits (response flag UO). */
export const OVERFLOW_REPLY: LocalReply = Object.freeze({
  status: 503,
  details: "upstream_overflow",
  body: "upstream connect error or disconnect/reset before headers. reset reason: overflow",
  headers: [["x-envoy-overloaded", "true"]],
  grpcStatus: -1,
}) as LocalReply;

/** A granted slot: give it back once, when the upstream exchange is over. */
export type Release = () => void;

interface ClusterState {
  active: number;
  readonly waiting: Array<() => void>;
}

/** Admission to the clusters of one sidecar; the state outlives configuration reloads (as Envoy's per-cluster counters do). */
export class ConnectionPools {
  private readonly clusters = new Map<string, ClusterState>();
  /** Requests refused by a limit, by cluster (for /stats: `upstream_rq_pending_overflow`). */
  readonly overflows = new Map<string, number>();

  /**
   * A slot on `cluster` under `limits`: granted now, or once a slot frees
   * (pending), or "overflow" when the pending queue is full.
   */
  admit(cluster: string, limits: ConnectionPool | undefined): Promise<Release> | "overflow" {
    const state = this.clusters.get(cluster) ?? { active: 0, waiting: [] };
    this.clusters.set(cluster, state);
    const maxActive = Math.max(1, limits?.maxConnections ?? DEFAULT_MAX_CONNECTIONS);
    const maxPending = limits?.http1MaxPendingRequests ?? DEFAULT_MAX_PENDING_REQUESTS;
    let released = false;
    const release: Release = () => {
      if (released) return;
      released = true;
      const next = state.waiting.shift();
      // The slot passes straight to the oldest waiting request.
      if (next) next();
      else state.active--;
    };
    if (state.active < maxActive) {
      state.active++;
      return Promise.resolve(release);
    }
    if (state.waiting.length >= maxPending) {
      this.overflows.set(cluster, (this.overflows.get(cluster) ?? 0) + 1);
      return "overflow";
    }
    return new Promise((resolve) => state.waiting.push(() => resolve(release)));
  }

  /** Requests on the wire and waiting, by cluster (for /config_dump). */
  snapshot(): Record<string, { active: number; pending: number; overflows: number }> {
    return Object.fromEntries([...this.clusters].map(([k, s]) => [k, { active: s.active, pending: s.waiting.length, overflows: this.overflows.get(k) ?? 0 }]));
  }
}
