import type { OutlierDetection } from "../config/resources/networking.ts";

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
 * ejection time is over. Time is injected.
 */

/** Upstream's defaults: eject after 5 consecutive 5xx for 30 s, at most 10% of the endpoints. */
export const DEFAULT_CONSECUTIVE_5XX = 5;
export const DEFAULT_BASE_EJECTION_MS = 30_000;
export const DEFAULT_MAX_EJECTION_PERCENT = 10;

/** What an upstream exchange ended with: the status, or a connection failure. */
export type UpstreamOutcome = number | "connect-failure";

interface EndpointState {
  consecutive5xx: number;
  consecutiveGateway: number;
  ejections: number;
  ejectedUntil: number;
}

export class OutlierDetector {
  private readonly endpoints = new Map<string, EndpointState>();

  constructor(private readonly now: () => number = Date.now) {}

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
    const by5xx = state.consecutive5xx >= (policy.consecutive5xxErrors ?? DEFAULT_CONSECUTIVE_5XX) && (policy.consecutive5xxErrors ?? DEFAULT_CONSECUTIVE_5XX) > 0;
    const byGateway = policy.consecutiveGatewayErrors !== undefined && policy.consecutiveGatewayErrors > 0 && state.consecutiveGateway >= policy.consecutiveGatewayErrors;
    if (!by5xx && !byGateway) return false;
    if (state.ejectedUntil > this.now()) return false;
    const ejectedNow = [...this.endpoints].filter(([k, s]) => k.startsWith(`${cluster}|`) && s.ejectedUntil > this.now()).length;
    if ((100 * ejectedNow) / Math.max(1, size) >= (policy.maxEjectionPercent ?? DEFAULT_MAX_EJECTION_PERCENT)) return false;
    state.ejections++;
    state.ejectedUntil = this.now() + (policy.baseEjectionTimeMs ?? DEFAULT_BASE_EJECTION_MS) * state.ejections;
    state.consecutive5xx = 0;
    state.consecutiveGateway = 0;
    return true;
  }

  /** Ejected endpoints and until when (ms since the epoch), for /config_dump. */
  snapshot(): Record<string, { ejections: number; ejectedUntil: number | null }> {
    return Object.fromEntries([...this.endpoints].map(([k, s]) => [k, { ejections: s.ejections, ejectedUntil: s.ejectedUntil > this.now() ? s.ejectedUntil : null }]));
  }
}
