import type { LocalReply } from "../../wasm/abi_types.ts";
import type { TlsOrigin } from "../../wire/h1/tls_connector.ts";
import type { UpstreamOutcome } from "../cluster/outlier_detection.ts";

/** Where a request goes: a host and port, plain or over TLS (mutual TLS origination), or a local reply; `delayMs`: an injected fault delay first. */
export type RouteDecision =
  | {
      kind: "forward";
      host: string;
      port: number;
      /** The local address to dial from (upstream's inbound passthrough: 127.0.0.6). */
      localAddress?: string;
      tls?: TlsOrigin;
      actions?: ForwardActions;
      upstream?: UpstreamControl;
    }
  | { kind: "reply"; reply: LocalReply; delayMs?: number };

/** What a VirtualService route does to a forwarded request (routes.ts RouteActions). */
export interface ForwardActions {
  readonly path?: string;
  readonly authority?: string;
  readonly setHeaders: ReadonlyArray<readonly [string, string]>;
  readonly addHeaders: ReadonlyArray<readonly [string, string]>;
  readonly removeHeaders: readonly string[];
  readonly responseHeaders: ReadonlyArray<{
    readonly set: Readonly<Record<string, string>>;
    readonly add: Readonly<Record<string, string>>;
    readonly remove: readonly string[];
  }>;
  readonly timeoutMs?: number;
  /** Retries of a request without a body on connection failure and on the 5xx/gateway-error/retriable codes retryOn names. */
  readonly retries?: { readonly attempts: number; readonly perTryTimeoutMs?: number; readonly retryOn: readonly string[] };
  readonly delayMs?: number;
  readonly mirror?: { readonly host: string; readonly port: number };
}

/**
 * The DestinationRule limits of the request's upstream cluster: admission
 * (connection-pool limits; a local reply when over them) and, once the
 * exchange is over, its outcome (outlier detection). `cancelled`: the
 * client went away before an answer; the slot is freed, nothing recorded.
 */
export interface UpstreamControl {
  admit(): Promise<(outcome: UpstreamOutcome | "cancelled") => void> | LocalReply;
  /** `connectionPool.http.maxRequestsPerConnection`: a connection is closed after serving this many. */
  readonly maxRequestsPerConnection?: number;
}

/** The request facts a router decides on (header names lower case, pseudo-headers included or not). */
export interface RouteRequest {
  readonly authority: string;
  readonly method: string;
  readonly path: string;
  readonly headers: ReadonlyArray<readonly [string, string]>;
  /** Where the connection was going before it was redirected to the listener (connection.ts), when it was. */
  readonly destination?: { readonly address: string; readonly port: number };
}
