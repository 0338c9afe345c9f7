import type { Catalog } from "./catalog.ts";
import { Field } from "./decode.ts";
import { ConfigError } from "./errors.ts";
import { type ConfigProblem, formatConfigProblem } from "./problems.ts";

/**
 * meshConfig `extensionProviders` (upstream's MeshConfig.ExtensionProvider):
 * the external authorizers a CUSTOM AuthorizationPolicy names by
 * `provider.name`. The two authorizer kinds are decoded in full; the other
 * kinds upstream defines (tracers, access loggers, …) are recognised by name
 * so an upstream mesh config is accepted, and kept only as `other`.
 */

interface ExtAuthzCommon {
  readonly name: string;
  /** Host name of the authorizer (`ext-authz.foo.svc.cluster.local`), and its service port. */
  readonly service: string;
  readonly port: number;
  /** Upstream default 600 s. */
  readonly timeoutMs: number;
  /** Allow the request when the authorizer cannot be reached or errs (default false). */
  readonly failOpen: boolean;
  /** Envoy re-selects the route after the authorizer changed headers (the Node host routes after authorization anyway). */
  readonly clearRouteCache: boolean;
  /** Status of the reply when the authorizer errs and failOpen is false (default 403). */
  readonly statusOnError: number;
  /** includeRequestBodyInCheck: the request body, up to this many bytes, goes to the authorizer. */
  readonly requestBody?: { readonly maxRequestBytes: number; readonly allowPartialMessage: boolean; readonly packAsBytes: boolean };
}

export interface ExtAuthzHttpProvider extends ExtAuthzCommon {
  readonly kind: "envoyExtAuthzHttp";
  readonly pathPrefix: string;
  /** Request headers sent to the authorizer besides Host, Method, Path, Content-Length and Authorization. */
  readonly includeRequestHeadersInCheck: readonly string[];
  readonly includeAdditionalHeadersInCheck: Readonly<Record<string, string>>;
  /** Authorizer response headers copied to the upstream request on allow, and to the client on deny / allow. */
  readonly headersToUpstreamOnAllow: readonly string[];
  readonly headersToDownstreamOnDeny: readonly string[];
  readonly headersToDownstreamOnAllow: readonly string[];
}

export interface ExtAuthzGrpcProvider extends ExtAuthzCommon {
  readonly kind: "envoyExtAuthzGrpc";
}

export type ExtAuthzProvider = ExtAuthzHttpProvider | ExtAuthzGrpcProvider;

export interface ExtensionProviders {
  readonly authorizers: ReadonlyMap<string, ExtAuthzProvider>;
  /** Providers of the other kinds: name → kind. */
  readonly other: ReadonlyMap<string, string>;
}

export const NO_EXTENSION_PROVIDERS: ExtensionProviders = Object.freeze({ authorizers: new Map(), other: new Map() });

const AUTHZ_KINDS = ["envoyExtAuthzHttp", "envoyExtAuthzGrpc"] as const;
/** Upstream's other provider kinds: accepted, not used by the authorization path. */
const OTHER_KINDS = [
  "zipkin",
  "lightstep",
  "datadog",
  "stackdriver",
  "opencensus",
  "skywalking",
  "opentelemetry",
  "prometheus",
  "envoyFileAccessLog",
  "envoyHttpAls",
  "envoyTcpAls",
  "envoyOtelAls",
  "sds",
] as const;
export const DEFAULT_EXT_AUTHZ_TIMEOUT_MS = 600_000;
const DEFAULT_STATUS_ON_ERROR = 403;

/** Upstream decodes a mesh config strictly: an unknown field (a typo) is an error, not a warning. */
function only(f: Field, known: readonly string[]): void {
  for (const key of Object.keys(f.object())) if (!known.includes(key)) f.get(key).invalid(`unknown field (known: ${known.join(", ")})`);
}

function headerList(f: Field): readonly string[] {
  return Object.freeze(
    f.list().map((item) => {
      const s = item.nonEmptyString().toLowerCase();
      const stars = s.split("*").length - 1;
      if (stars > 1 || (stars === 1 && !s.startsWith("*") && !s.endsWith("*"))) item.fail("a header name, `prefix*`, `*suffix` or `*`");
      return s;
    }),
  );
}

/** Whether a header name matches one of upstream's header patterns (case-insensitive). */
export function headerAllowed(patterns: readonly string[], name: string): boolean {
  const n = name.toLowerCase();
  return patterns.some((p) => p === "*" || (p.endsWith("*") ? n.startsWith(p.slice(0, -1)) : p.startsWith("*") ? n.endsWith(p.slice(1)) : n === p));
}

function common(name: string, f: Field): ExtAuthzCommon {
  const service = f.get("service").nonEmptyString();
  const port = f.get("port").integer(1, 65535);
  const timeoutMs = f.get("timeout").present ? f.get("timeout").durationMs() : DEFAULT_EXT_AUTHZ_TIMEOUT_MS;
  if (timeoutMs <= 0) f.get("timeout").fail("a positive duration");
  const status = f.get("statusOnError");
  const statusOnError = status.present ? status.integer(100, 599) : DEFAULT_STATUS_ON_ERROR;
  const body = f.get("includeRequestBodyInCheck");
  let requestBody: ExtAuthzCommon["requestBody"];
  if (body.present) {
    only(body, ["maxRequestBytes", "allowPartialMessage", "packAsBytes"]);
    requestBody = Object.freeze({
      maxRequestBytes: body.get("maxRequestBytes").integer(0, 2 ** 32 - 1, 0),
      allowPartialMessage: body.get("allowPartialMessage").bool(false),
      packAsBytes: body.get("packAsBytes").bool(false),
    });
  }
  return {
    name,
    service,
    port,
    timeoutMs,
    failOpen: f.get("failOpen").bool(false),
    clearRouteCache: f.get("clearRouteCache").bool(false),
    statusOnError,
    ...(requestBody ? { requestBody } : {}),
  };
}

function decodeHttp(name: string, f: Field): ExtAuthzHttpProvider {
  only(f, [
    "service",
    "port",
    "timeout",
    "pathPrefix",
    "failOpen",
    "clearRouteCache",
    "statusOnError",
    "includeRequestHeadersInCheck",
    "includeHeadersInCheck",
    "includeAdditionalHeadersInCheck",
    "includeRequestBodyInCheck",
    "headersToUpstreamOnAllow",
    "headersToDownstreamOnDeny",
    "headersToDownstreamOnAllow",
  ]);
  const pathPrefix = f.get("pathPrefix").optionalString() ?? "";
  if (pathPrefix !== "" && !pathPrefix.startsWith("/")) f.get("pathPrefix").fail("a path prefix starting with /");
  // includeHeadersInCheck is the deprecated name of includeRequestHeadersInCheck.
  const included = f.get("includeRequestHeadersInCheck").present ? f.get("includeRequestHeadersInCheck") : f.get("includeHeadersInCheck");
  return Object.freeze({
    kind: "envoyExtAuthzHttp" as const,
    ...common(name, f),
    pathPrefix,
    includeRequestHeadersInCheck: headerList(included),
    includeAdditionalHeadersInCheck: Object.freeze(f.get("includeAdditionalHeadersInCheck").stringMap()),
    headersToUpstreamOnAllow: headerList(f.get("headersToUpstreamOnAllow")),
    headersToDownstreamOnDeny: headerList(f.get("headersToDownstreamOnDeny")),
    headersToDownstreamOnAllow: headerList(f.get("headersToDownstreamOnAllow")),
  });
}

function decodeGrpc(name: string, f: Field): ExtAuthzGrpcProvider {
  only(f, ["service", "port", "timeout", "failOpen", "clearRouteCache", "statusOnError", "includeRequestBodyInCheck"]);
  return Object.freeze({ kind: "envoyExtAuthzGrpc" as const, ...common(name, f) });
}

/**
 * Decodes `extensionProviders` of a mesh config (the field itself); throws
 * ConfigError naming the field path (`extensionProviders[1].envoyExtAuthzHttp.port`).
 *
 * @example decodeExtensionProviders(Field.root(mesh, { file, warnings: [] }).get("extensionProviders")).authorizers.get("sample-ext-authz-http")?.port // 8000
 */
export function decodeExtensionProviders(list: Field): ExtensionProviders {
  const authorizers = new Map<string, ExtAuthzProvider>();
  const other = new Map<string, string>();
  for (const item of list.list()) {
    item.object();
    const kinds = [...AUTHZ_KINDS, ...OTHER_KINDS];
    only(item, ["name", ...kinds]);
    const nameField = item.get("name");
    const name = nameField.nonEmptyString();
    if (authorizers.has(name) || other.has(name)) nameField.invalid(`duplicate extension provider name ${JSON.stringify(name)}`);
    const kind = item.oneOf(kinds);
    if (kind === "envoyExtAuthzHttp") authorizers.set(name, decodeHttp(name, item.get(kind)));
    else if (kind === "envoyExtAuthzGrpc") authorizers.set(name, decodeGrpc(name, item.get(kind)));
    else other.set(name, kind!);
  }
  return Object.freeze({ authorizers, other });
}

/** The same from a parsed mesh config object (`{}` when none); ConfigError names `file` and the field. */
export function extensionProvidersOf(meshConfig: Record<string, unknown>, file: string): ExtensionProviders {
  const f = Field.root(meshConfig, { file, warnings: [] }).get("extensionProviders");
  return f.present ? decodeExtensionProviders(f) : NO_EXTENSION_PROVIDERS;
}

/**
 * CUSTOM AuthorizationPolicies whose `provider.name` is not an authorizer of
 * the mesh config: one error each, on `spec.provider.name`.
 */
export function unknownProviderProblems(catalog: Pick<Catalog, "byKind">, providers: ExtensionProviders): ConfigProblem[] {
  const known = [...providers.authorizers.keys()];
  return catalog.byKind.AuthorizationPolicy.flatMap((p): ConfigProblem[] => {
    const name = p.spec.provider;
    if (p.spec.action !== "CUSTOM" || name === undefined || providers.authorizers.has(name)) return [];
    const kind = providers.other.get(name);
    const why = kind
      ? `extension provider ${JSON.stringify(name)} is a provider of kind ${kind}, not an external authorizer (envoyExtAuthzHttp or envoyExtAuthzGrpc)`
      : `unknown extension provider ${JSON.stringify(name)} (meshConfig extensionProviders has ${known.length > 0 ? known.map((k) => JSON.stringify(k)).join(", ") : "no external authorizer"})`;
    return [{ severity: "error", file: p.origin.file, resource: p.id, fieldPath: "spec.provider.name", message: why }];
  });
}

/** unknownProviderProblems as a ConfigError (the first), for loaders that refuse a configuration. */
export function checkProviders(catalog: Pick<Catalog, "byKind">, providers: ExtensionProviders): void {
  const [first, ...rest] = unknownProviderProblems(catalog, providers);
  if (!first) return;
  const e = new ConfigError({ file: first.file || undefined, resource: first.resource }, first.fieldPath, "");
  e.message = [first, ...rest].map(formatConfigProblem).join("; ");
  throw e;
}
