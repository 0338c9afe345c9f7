import type { Subscription } from "./ads_subscription.ts";

/** The proxy on the other end of a stream, as its Node message says. */
export interface ProxyNode {
  readonly id: string;
  readonly cluster: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  /** Node.user_agent_name: `envoy`, `gRPC Node Pure JS`, `disco-agent`, … (host/discovery/proxy_kind.ts). */
  readonly userAgentName: string;
  /** The workload identity the caller's certificate proved on the secure port (`spiffe://<td>/ns/<ns>/sa/<sa>`); none on the plain-text one. */
  readonly identity?: { readonly uri: string; readonly namespace: string; readonly serviceAccount: string };
}

/** What happened on the streams, for counters and logs (all optional). */
export interface AdsObserver {
  connected?(node: ProxyNode): void;
  disconnected?(node: ProxyNode): void;
  /**
   * A response was sent (`push`: caused by a change, not by a request):
   * written, or waiting its turn within the write limit (host/discovery/ads_flow.ts);
   * `buildMs`: selecting, encoding and handing it over.
   */
  sent?(node: ProxyNode, type: string, version: string, resources: number, push: boolean, buildMs: number): void;
  /** Writing a response failed (the stream is closed). */
  sendFailed?(node: ProxyNode, type: string, error: Error): void;
  acked?(node: ProxyNode, type: string, version: string): void;
  nacked?(node: ProxyNode, type: string, version: string, message: string): void;
  /** A proxy has acknowledged or refused every response of a push: `sinceChangeMs` after the change that caused it. */
  converged?(node: ProxyNode, sinceChangeMs: number): void;
  /** A stream refused before any response (its caller's certificate), with the reason. */
  refused?(peer: string, problem: string): void;
  /** A request answering a response that was already superseded (an expired nonce): ignored. */
  expiredNonce?(node: ProxyNode, type: string): void;
  /** A request that could not be handled: the stream is closed with the error. */
  internalError?(error: Error): void;
  /** A proxy's turn in the push queue came, `waitedMs` after the push that queued it. */
  dequeued?(node: ProxyNode, waitedMs: number): void;
}

/** How pushes reach the proxies (DISCO_PUSH_THROTTLE, DISCO_SCOPE_PUSHES). */
export interface PushPolicy {
  /** Proxies pushed to per turn of the event loop; the others wait in the push queue for the next turns. */
  readonly throttle: number;
  /** true: a proxy is sent only what changed for it; false: every push re-sends every subscription of every proxy. */
  readonly scoped: boolean;
  /** DiscoveryResponse.control_plane.identifier: who answers (upstream's JSON: component, instance, build). */
  readonly identifier?: string;
  /**
   * DISCO_ENABLE_CONFIG_DISTRIBUTION_TRACKING: the configuration version the
   * resources are computed from right now. When given, nonces start with it
   * (`<version>-<n>`, upstream's meaningful nonces) and each subscription
   * records the version it acknowledged: that of its last response, or of a
   * later push that found nothing changed for it (host/discovery/distribution.ts).
   */
  readonly configVersion?: () => number;
  /** DISCO_DEBUG_ADSZ_CONFIG: keep what was last sent on each subscription, for /debug/adsz. */
  readonly keepSent?: boolean;
  /** Response bytes written to all streams and not yet out to their sockets before further responses wait (host/discovery/ads_flow.ts; default 4 MiB). */
  readonly writeLimitBytes?: number;
  /** A write in flight this long stops counting against writeLimitBytes (a proxy that does not read; default 2 s). */
  readonly parkWritesAfterMs?: number;
}

export const DEFAULT_PUSH_POLICY: PushPolicy = { throttle: Number.MAX_SAFE_INTEGER, scoped: true };

/** A proxy waiting for its turn in the push queue. */
export interface QueuedPush {
  readonly enqueuedAt: number;
  readonly changedAt: number;
}

/** Who may open a stream on one gRPC server (the secure port checks the caller's certificate). */
export interface StreamAccess {
  /** Why a caller with this certificate SAN is refused (PERMISSION_DENIED), or undefined to let it in. */
  peerProblem(peerSubjectAltName: string | undefined): string | undefined;
  /** The workload identity of a caller let in. */
  peerIdentity(peerSubjectAltName: string | undefined): ProxyNode["identity"];
}

/** One connected proxy (for the debug pages). */
export interface ConnectionState {
  readonly id: string;
  readonly node: ProxyNode;
  readonly connectedAt: Date;
  readonly subscriptions: ReadonlyMap<string, Readonly<Subscription>>;
}
