// The public types of the `mesh-policy-filter` package (docs/embedding.md).
// Self-contained on purpose: the generated declarations ship only this
// folder's public files, so nothing here may name a type of the rest of the
// host. Extend only with optional fields.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import type { Registry } from "prom-client";

/**
 * The hub client configuration: a YAML/JSON file, a folder of them (every
 * `.yaml`, `.yml` and `.json` file, sorted), or the documents as objects
 * (one document, a list of them, or a `kind: List`). The kinds are those a
 * sidecar reads: HttpClientConfig, HTTPAPISpec, HTTPAPISpecBinding,
 * QuotaSpec, QuotaSpecBinding (apiVersion `config.mesh.io/v1alpha2`).
 */
export type FilterConfig = string | ConfigDocument | readonly ConfigDocument[];

/** One resource document as users write it in YAML. */
export interface ConfigDocument {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [field: string]: unknown };
  spec?: unknown;
  [field: string]: unknown;
}

/** Mutual TLS to the hub: PEM files read once, at createFilter. */
export interface HubTlsOptions {
  /** Roots that sign the hub's certificate (the only trust anchors). */
  caFile: string;
  /** This server's certificate chain. */
  certFile: string;
  keyFile: string;
  /**
   * The identity the hub must prove: a URI SAN equal to it or ending with
   * `/<hubIdentity>` (e.g. `sa/mesh-hub-service-account`). Without it the
   * hub's certificate is checked against its host name as usual.
   */
  hubIdentity?: string;
}

/** Where the hub is, with its addresses as `HOST:PORT`, `[V6]:PORT` or `unix:///PATH`. */
export interface HubOptions {
  /** The address of every hub call (both clusters) unless `check`/`report` say otherwise. */
  address?: string;
  /** The address of the configuration's `checkCluster` (Check calls). */
  check?: string;
  /** The address of the configuration's `reportCluster` (Report calls). */
  report?: string;
  /** Mutual TLS; default plain text. */
  tls?: HubTlsOptions;
}

export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFunction = (level: LogLevel, message: string) => void;

export interface FilterOptions {
  /** The hub client configuration (FilterConfig). */
  config: FilterConfig;
  /** The hub: one address for every call, or HubOptions. */
  hub: string | HubOptions;
  /**
   * The destination service requests are checked as (the service name a
   * binding selects, as `mesh.destination_service`); default the
   * configuration's `defaultDestinationService`.
   */
  service?: string;
  /** The filter's counters are registered in this prom-client registry (and removed at close). */
  registry?: Registry;
  /** Prefix of those metric names; default none (`hub_client_total_check_calls_total`, as the sidecar's). */
  metricsPrefix?: string;
  /** Where the filter's messages go; default warnings and errors to stderr. */
  log?: LogFunction;
  /** The longest wait of `close()` for the last reports, in milliseconds (default 6000). */
  closeTimeoutMs?: number;
  /** The filter.wasm to run; default the one shipped in the package. */
  wasm?: string;
}

/** A header value as Node gives it. */
export type HeaderValue = string | readonly string[] | number | undefined;

/** One request as the filter checks it. */
export interface CheckRequest {
  method: string;
  /** The request target: path and query (`/pets/1?key=k`). */
  path: string;
  /** Header names in any case; `host` (or `authority`) becomes `:authority`. */
  headers?: Readonly<Record<string, HeaderValue>> | ReadonlyArray<readonly [string, string]>;
  /** `host[:port]`; default the `host` header. */
  authority?: string;
  /** `http` (default) or `https`. */
  scheme?: string;
  /** The caller's IP address (`source.ip`). */
  sourceAddress?: string;
  sourcePort?: number;
  /** This server's address and port the request came in on (`destination.ip`). */
  destinationAddress?: string;
  destinationPort?: number;
  /** The caller's identity from its TLS client certificate (a URI SAN such as `spiffe://cluster.local/ns/demo/sa/frontend`): `source.principal`. */
  peerIdentity?: string;
  /** `HTTP/1.1` (default), `HTTP/2`. */
  protocol?: string;
}

/** How a request ended, for its report. */
export interface ReportOutcome {
  /** The response status; default the decision's. */
  status?: number;
  requestBytes?: number;
  responseBytes?: number;
  /** Default the time since the check. */
  durationMs?: number;
  /** The response's headers, reported as `response.headers` (names in any case). */
  headers?: Readonly<Record<string, HeaderValue>>;
}

/** The filter's answer for one request. */
export interface Decision {
  /** Whether the request may be served. */
  allowed: boolean;
  /** The status to answer a denied request with (403, 429, 503, …); 200 when allowed. */
  status: number;
  /** The body to answer a denied request with (`PERMISSION_DENIED:<message>`); empty when allowed. */
  body: string;
  /**
   * Denied: the headers of the answer. Allowed: the request headers the
   * filter added or changed (forwarded attributes), names lower-case.
   */
  headers: Record<string, string>;
  /**
   * Reports the request to the hub once its response is done. Call it once;
   * later calls do nothing. A decision never reported is reported by close().
   */
  report(outcome?: ReportOutcome): void;
}

/** The filter's counters (`hub_client.*` of the module, `hub_transport.*` of the host), name → value. */
export type FilterStats = Record<string, number>;

/** A request and response as the middleware takes them: node:http, or HTTP/2 compatibility objects. */
export type NodeRequest = IncomingMessage | Http2ServerRequest;
export type NodeResponse = ServerResponse | Http2ServerResponse;

/** A Connect/Express middleware. */
export type FilterMiddleware = (req: NodeRequest, res: NodeResponse, next: (error?: unknown) => void) => void;

/** What `middleware()` may be told. */
export interface MiddlewareOptions {
  /** Requests the filter does not see (health checks): answered by the app directly. */
  skip?: (req: NodeRequest) => boolean;
}

export interface Filter {
  /** A Connect/Express middleware: denied requests are answered here, allowed ones go on and are reported when their response is done. */
  middleware(options?: MiddlewareOptions): FilterMiddleware;
  /** Checks one request; report the decision when the response is done. */
  check(request: CheckRequest): Promise<Decision>;
  /** The counters now. */
  stats(): FilterStats;
  /** Reports the open decisions, delivers the pending reports (at most `closeTimeoutMs`), stops the timers and hub connections. */
  close(): Promise<void>;
}

/** The Fastify plugin's options: FilterOptions, or a filter made earlier (then closed by its maker). */
export type FastifyFilterOptions = (FilterOptions | { filter: Filter }) & {
  /** Requests the filter does not see. */
  skip?: (url: string, method: string) => boolean;
};
