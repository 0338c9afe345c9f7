import * as grpc from "@grpc/grpc-js";
import { request as httpRequest } from "node:http";
import { type ExtAuthzGrpcProvider, type ExtAuthzHttpProvider, type ExtAuthzProvider, headerAllowed } from "../../config/extension_providers.ts";
import { AUTHORIZATION_SERVICE, envoyService } from "../../wire/envoy_grpc.ts";

/**
 * The client side of an external authorizer (CUSTOM AuthorizationPolicy),
 * as Envoy's ext_authz filter configured by upstream's control plane:
 * - envoyExtAuthzHttp: the request's method and `pathPrefix` + path are sent
 *   with Host, Authorization, Content-Length (0: the body is not sent) and
 *   the headers `includeRequestHeadersInCheck` names, plus
 *   `includeAdditionalHeadersInCheck`; 200 allows (response headers named
 *   by `headersToUpstreamOnAllow` go to the upstream request), any other
 *   status below 500 denies with the authorizer's status, body and headers
 *   (those `headersToDownstreamOnDeny` names, all when it names none);
 * - envoyExtAuthzGrpc: `envoy.service.auth.v3.Authorization/Check`; status
 *   OK allows (`ok_response` headers applied), anything else denies with
 *   `denied_response` (status 403 when it gives none);
 * - no answer within `timeout`, a transport error or a 5xx from the HTTP
 *   authorizer: `failOpen` allows, else `statusOnError` (403) with an empty body.
 * I/O only; which requests are checked is the engine's business.
 */

export interface ExtAuthzCheck {
  readonly method: string;
  /** Normalized path with query, as forwarded. */
  readonly path: string;
  readonly authority: string;
  readonly scheme: string;
  /** Request headers without pseudo-headers. */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly source: { readonly address: string; readonly port: number; readonly principal?: string };
  readonly destination: { readonly address: string; readonly port: number; readonly principal?: string };
  readonly requestId?: string;
}

export type ExtAuthzVerdict =
  | {
      readonly kind: "allow";
      readonly setHeaders: ReadonlyArray<readonly [string, string]>;
      readonly removeHeaders: readonly string[];
      readonly failedOpen?: string;
    }
  | {
      readonly kind: "deny";
      readonly status: number;
      readonly body: string;
      readonly headers: ReadonlyArray<readonly [string, string]>;
      readonly error?: string;
    };

/** Where a provider's `service:port` is reached (the sidecar's registry; the name itself otherwise). */
export type ResolveService = (service: string, port: number) => { host: string; port: number };

const DEFAULT_ALLOWED = ["host", "authorization", "content-length"];
/** Never copied from an authorizer's response (connection-level, or set by the proxy). */
const NOT_COPIED = new Set(["connection", "keep-alive", "transfer-encoding", "content-length", "host", "date", "server"]);

function onError(p: ExtAuthzProvider, why: string): ExtAuthzVerdict {
  if (p.failOpen) return { kind: "allow", setHeaders: [], removeHeaders: [], failedOpen: why };
  return { kind: "deny", status: p.statusOnError, body: "", headers: [], error: why };
}

function checkHttp(p: ExtAuthzHttpProvider, c: ExtAuthzCheck, resolve: ResolveService): Promise<ExtAuthzVerdict> {
  const target = resolve(p.service, p.port);
  const headers: Record<string, string> = {};
  for (const [k, v] of c.headers) {
    const name = k.toLowerCase();
    if (!DEFAULT_ALLOWED.includes(name) && !headerAllowed(p.includeRequestHeadersInCheck, name)) continue;
    headers[name] = headers[name] !== undefined ? `${headers[name]},${v}` : v;
  }
  Object.assign(headers, Object.fromEntries(Object.entries(p.includeAdditionalHeadersInCheck).map(([k, v]) => [k.toLowerCase(), v])));
  headers.host = c.authority;
  headers["content-length"] = "0";
  return new Promise((resolveVerdict) => {
    const req = httpRequest({ host: target.host, port: target.port, method: c.method, path: p.pathPrefix + c.path, headers, timeout: p.timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (d: Buffer) => chunks.push(d));
      res.on("error", (e) => resolveVerdict(onError(p, `response: ${e.message}`)));
      res.on("end", () => {
        const status = res.statusCode ?? 0;
        const got = Object.entries(res.headers).flatMap(([k, v]) =>
          v === undefined ? [] : (Array.isArray(v) ? v : [v]).map((x) => [k, x] as [string, string]),
        );
        if (status === 200) {
          resolveVerdict({ kind: "allow", setHeaders: got.filter(([k]) => headerAllowed(p.headersToUpstreamOnAllow, k)), removeHeaders: [] });
        } else if (status >= 500 || status < 200) {
          resolveVerdict(onError(p, `authorizer answered ${status}`));
        } else {
          const toClient = got.filter(
            ([k]) => !NOT_COPIED.has(k) && (p.headersToDownstreamOnDeny.length === 0 || headerAllowed(p.headersToDownstreamOnDeny, k)),
          );
          resolveVerdict({ kind: "deny", status, body: Buffer.concat(chunks).toString("utf8"), headers: toClient });
        }
      });
    });
    req.on("timeout", () => req.destroy(new Error(`no answer within ${p.timeoutMs} ms`)));
    req.on("error", (e) => resolveVerdict(onError(p, e.message)));
    req.end();
  });
}

type HeaderValueOption = { header?: { key?: string; value?: string }; append?: { value?: boolean } };

function grpcHeaders(list: unknown): Array<[string, string]> {
  return ((list as HeaderValueOption[] | undefined) ?? []).flatMap((h) =>
    h.header?.key ? [[h.header.key.toLowerCase(), h.header.value ?? ""] as [string, string]] : [],
  );
}

const timestamp = (ms: number) => ({ seconds: String(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1_000_000 });
const socketAddress = (a: { address: string; port: number }) => ({
  socket_address: { address: a.address.replace(/^::ffff:(?=\d+\.)/, ""), port_value: a.port },
});

/** The CheckRequest of a request (`envoy.service.auth.v3.AttributeContext`, the proto's field names). */
export function checkRequest(c: ExtAuthzCheck, now: number): Record<string, unknown> {
  const headers: Record<string, string> = { ":method": c.method, ":path": c.path, ":authority": c.authority, ":scheme": c.scheme };
  for (const [k, v] of c.headers) headers[k.toLowerCase()] = headers[k.toLowerCase()] !== undefined ? `${headers[k.toLowerCase()]},${v}` : v;
  const q = c.path.indexOf("?");
  return {
    attributes: {
      source: { address: socketAddress(c.source), ...(c.source.principal ? { principal: c.source.principal } : {}) },
      destination: { address: socketAddress(c.destination), ...(c.destination.principal ? { principal: c.destination.principal } : {}) },
      request: {
        time: timestamp(now),
        http: {
          ...(c.requestId ? { id: c.requestId } : {}),
          method: c.method,
          headers,
          path: c.path,
          host: c.authority,
          scheme: c.scheme,
          ...(q >= 0 ? { query: c.path.slice(q + 1) } : {}),
          size: "0",
          protocol: "HTTP/1.1",
        },
      },
    },
  };
}

type CheckClient = grpc.Client & {
  Check(req: unknown, meta: grpc.Metadata, opts: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r?: CheckResponse) => void): void;
};

interface CheckResponse {
  status?: { code?: number; message?: string };
  denied_response?: { status?: { code?: number }; headers?: unknown; body?: string };
  ok_response?: { headers?: unknown; headers_to_remove?: string[] };
}

/**
 * The external authorizers of one sidecar: gRPC channels are kept per
 * address; `now` is injected for the CheckRequest's time.
 */
export class ExtAuthzClient {
  private readonly channels = new Map<string, CheckClient>();
  private static service: grpc.ServiceClientConstructor | undefined;

  constructor(
    private readonly resolve: ResolveService,
    private readonly now: () => number = Date.now,
  ) {}

  check(p: ExtAuthzProvider, c: ExtAuthzCheck): Promise<ExtAuthzVerdict> {
    return p.kind === "envoyExtAuthzHttp" ? checkHttp(p, c, this.resolve) : this.checkGrpc(p, c);
  }

  private checkGrpc(p: ExtAuthzGrpcProvider, c: ExtAuthzCheck): Promise<ExtAuthzVerdict> {
    const target = this.resolve(p.service, p.port);
    const key = target.host.includes(":") ? `[${target.host}]:${target.port}` : `${target.host}:${target.port}`;
    let client = this.channels.get(key);
    if (!client) {
      ExtAuthzClient.service ??= envoyService(AUTHORIZATION_SERVICE.file, AUTHORIZATION_SERVICE.service, Number);
      client = new ExtAuthzClient.service(key, grpc.credentials.createInsecure()) as unknown as CheckClient;
      this.channels.set(key, client);
    }
    const call = client;
    return new Promise((resolveVerdict) => {
      call.Check(checkRequest(c, this.now()), new grpc.Metadata(), { deadline: Date.now() + p.timeoutMs }, (e, r) => {
        if (e || !r) return resolveVerdict(onError(p, e ? `${grpc.status[e.code] ?? e.code}: ${e.details}` : "no response"));
        if ((r.status?.code ?? 0) === 0) {
          return resolveVerdict({
            kind: "allow",
            setHeaders: grpcHeaders(r.ok_response?.headers),
            removeHeaders: (r.ok_response?.headers_to_remove ?? []).map((h) => h.toLowerCase()),
          });
        }
        const d = r.denied_response;
        resolveVerdict({ kind: "deny", status: d?.status?.code || 403, body: d?.body ?? "", headers: grpcHeaders(d?.headers) });
      });
    });
  }

  close(): void {
    for (const c of this.channels.values()) c.close();
    this.channels.clear();
  }
}
