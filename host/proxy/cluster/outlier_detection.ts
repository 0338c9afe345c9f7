import type { OutlierDetection } from "../../config/resources/networking.ts";

/**
 * DestinationRule `outlierDetection` as Envoy applies it to one cluster's
 * endpoints: `consecutive5xxErrors` 5xx answers in a row (a connection
 * failure counts as a 503) or `consecutiveGatewayErrors` 502/503/504 in a
 * row eject the endpoint for `baseEjectionTime` times the number of times it
 * has been ejected, unless `maxEjectionPercent` of the cluster's endpoints
 * are already out. Any other answer resets the counts. Ejected endpoints
 * are not chosen; with all of them out the call gets 503 "no healthy
 * upstream" (upstream's `minHealthPercent` default 0: no panic mode). The
 * sweep `interval` is not modelled: an endpoint returns exactly when its
 * ejection time is over. Time is injected. Every ejection and return is
 * told to `onEvent` (`--outlierLogPath`, outlier_event_log.ts).
 */

/** Upstream's defaults: eject after 5 consecutive 5xx for 30 s, at most 10% of the endpoints. */
export const DEFAULT_CONSECUTIVE_5XX = 5;
export const DEFAULT_BASE_EJECTION_MS = 30_000;
export const DEFAULT_MAX_EJECTION_PERCENT = 10;

/** What an upstream exchange ended with: the status, or a connection failure. */
export type UpstreamOutcome = number | "connect-failure";

/** Envoy's OutlierEjectionType of the two detectors modelled here. */
export type OutlierEjectionType = "CONSECUTIVE_5XX" | "CONSECUTIVE_GATEWAY_FAILURE";

/** An ejection or a return of an endpoint (Envoy's OutlierDetectionEvent, envoy.data.cluster.v3). */
export interface OutlierEvent {
  action: "EJECT" | "UNEJECT";
  /** For EJECT: which detector ejected it. */
  type?: OutlierEjectionType;
  cluster: string;
  /** `host:port`. */
  endpoint: string;
  /** Times the endpoint has been ejected so far. */
  numEjections: number;
  /** Whether the ejection took the endpoint out of the pool (always, here: enforcement is 100%). */
  enforced: boolean;
  /** When it happened (ms since the epoch). */
  at: number;
  /** Whole seconds since the endpoint's previous action (an EJECT: its last return; an UNEJECT: its ejection); none before the first. */
  secsSinceLastAction?: number;
}

export interface OutlierDetectorOptions {
  now?: () => number;
  onEvent?: (event: OutlierEvent) => void;
  /** Runs `fn` after `ms` (the return of an ejected endpoint); default an unref'd setTimeout. */
  schedule?: (fn: () => void, ms: number) => { cancel(): void };
}

interface EndpointState {
  consecutive5xx: number;
  consecutiveGateway: number;
  ejections: number;
  ejectedUntil: number;
  /** When the last ejection began and, once it is over and told, when the endpoint returned. */
  ejectedAt?: number;
  returnedAt?: number;
  /** The return of the current ejection, until it is told. */
  pendingReturn?: { cancel(): void };
}

function unrefTimeout(fn: () => void, ms: number): { cancel(): void } {
  const t = setTimeout(fn, ms);
  t.unref();
  return { cancel: () => clearTimeout(t) };
}

export class OutlierDetector {
  private readonly endpoints = new Map<string, EndpointState>();
  private readonly now: () => number;

  constructor(private readonly options: OutlierDetectorOptions = {}) {
    this.now = options.now ?? Date.now;
  }

  /** Whether `endpoint` (an address key) of `cluster` is ejected now. */
  ejected(cluster: string, endpoint: string): boolean {
    return (this.endpoints.get(`${cluster}|${endpoint}`)?.ejectedUntil ?? 0) > this.now();
  }

  /**
   * Records one exchange with an endpoint of a cluster of `size` endpoints
   * under `policy`; returns true when it ejected the endpoint.
   */
  record(cluster: string, endpoint: string, size: number, policy: OutlierDetection | undefined, outcome: UpstreamOutcome): boolean {
    if (!policy) return false;
    const key = `${cluster}|${endpoint}`;
    const state = this.endpoints.get(key) ?? { consecutive5xx: 0, consecutiveGateway: 0, ejections: 0, ejectedUntil: 0 };
    this.endpoints.set(key, state);
    const status = outcome === "connect-failure" ? 503 : outcome;
    if (status < 500) {
      state.consecutive5xx = 0;
      state.consecutiveGateway = 0;
      return false;
    }
    state.consecutive5xx++;
    if (status === 502 || status === 503 || status === 504) state.consecutiveGateway++;
    else state.consecutiveGateway = 0;
    const by5xx =
      state.consecutive5xx >= (policy.consecutive5xxErrors ?? DEFAULT_CONSECUTIVE_5XX) && (policy.consecutive5xxErrors ?? DEFAULT_CONSECUTIVE_5XX) > 0;
    const byGateway =
      policy.consecutiveGatewayErrors !== undefined && policy.consecutiveGatewayErrors > 0 && state.consecutiveGateway >= policy.consecutiveGatewayErrors;
    if (!by5xx && !byGateway) return false;
    if (state.ejectedUntil > this.now()) return false;
    const ejectedNow = [...this.endpoints].filter(([k, s]) => k.startsWith(`${cluster}|`) && s.ejectedUntil > this.now()).length;
    if ((100 * ejectedNow) / Math.max(1, size) >= (policy.maxEjectionPercent ?? DEFAULT_MAX_EJECTION_PERCENT)) return false;
    state.pendingReturn?.cancel();
    this.tellReturn(cluster, endpoint, state);
    const now = this.now();
    state.ejections++;
    state.ejectedAt = now;
    state.ejectedUntil = now + (policy.baseEjectionTimeMs ?? DEFAULT_BASE_EJECTION_MS) * state.ejections;
    state.consecutive5xx = 0;
    state.consecutiveGateway = 0;
    const onEvent = this.options.onEvent;
    if (onEvent) {
      onEvent({
        action: "EJECT",
        type: by5xx ? "CONSECUTIVE_5XX" : "CONSECUTIVE_GATEWAY_FAILURE",
        cluster,
        endpoint,
        numEjections: state.ejections,
        enforced: true,
        at: now,
        ...(state.returnedAt !== undefined ? { secsSinceLastAction: Math.floor((now - state.returnedAt) / 1000) } : {}),
      });
      state.pendingReturn = (this.options.schedule ?? unrefTimeout)(() => this.tellReturn(cluster, endpoint, state), state.ejectedUntil - now);
    }
    return true;
  }

  /** Tells the return of the endpoint's last ejection, once (at the moment its ejection time ended). */
  private tellReturn(cluster: string, endpoint: string, state: EndpointState): void {
    if (state.ejectedAt === undefined || (state.returnedAt !== undefined && state.returnedAt >= state.ejectedAt)) return;
    state.pendingReturn = undefined;
    state.returnedAt = state.ejectedUntil;
    this.options.onEvent?.({
      action: "UNEJECT",
      cluster,
      endpoint,
      numEjections: state.ejections,
      enforced: false,
      at: state.ejectedUntil,
      secsSinceLastAction: Math.floor((state.ejectedUntil - state.ejectedAt) / 1000),
    });
  }

  /** Stops the timers of pending returns (the sidecar is stopping). */
  close(): void {
    for (const state of this.endpoints.values()) state.pendingReturn?.cancel();
  }

  /** Ejected endpoints and until when (ms since the epoch), for /config_dump. */
  snapshot(): Record<string, { ejections: number; ejectedUntil: number | null }> {
    return Object.fromEntries(
      [...this.endpoints].map(([k, s]) => [k, { ejections: s.ejections, ejectedUntil: s.ejectedUntil > this.now() ? s.ejectedUntil : null }]),
    );
  }
}
