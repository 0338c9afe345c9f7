import type { Field } from "../decode.ts";
import { attempt, attemptEach, noErrorsYet } from "../problems.ts";
import { type Attributes, decodeAttributes, encodeAttributes } from "./attributes.ts";

/** The regex engine and template parser the filter itself uses, so config load refuses exactly what the filter would. */
export interface PatternChecks {
  template(text: string): string;
  regex(pattern: string): string;
}

export interface StringMatch {
  exact?: string;
  prefix?: string;
  regex?: string;
}

export interface ApiKey {
  query?: string;
  header?: string;
  cookie?: string;
}

export interface HttpApiSpecPattern {
  attributes?: Attributes;
  httpMethod?: string;
  uriTemplate?: string;
  regex?: string;
}

export interface HttpApiSpec {
  attributes?: Attributes;
  patterns: HttpApiSpecPattern[];
  apiKeys: ApiKey[];
}

export interface MeshService {
  name?: string;
  namespace?: string;
  domain?: string;
  service?: string;
  labels?: Record<string, string>;
}

export interface SpecReference {
  name: string;
  namespace?: string;
}

export interface HttpApiSpecBinding {
  services: MeshService[];
  apiSpecs: SpecReference[];
}

export interface QuotaSpecBinding {
  services: MeshService[];
  quotaSpecs: SpecReference[];
}

export interface QuotaRule {
  match: Array<{ clause: Record<string, StringMatch> }>;
  quotas: Array<{ quota: string; charge: number }>;
}

export interface QuotaSpec {
  rules: QuotaRule[];
}

export type FailPolicy = "FAIL_OPEN" | "FAIL_CLOSE";

export interface NetworkFailPolicy {
  policy: FailPolicy;
  maxRetry: number;
  baseRetryWaitMs?: number;
  maxRetryWaitMs?: number;
}

export interface TransportConfig {
  disableCheckCache: boolean;
  disableQuotaCache: boolean;
  disableReportBatch: boolean;
  networkFailPolicy?: NetworkFailPolicy;
  statsUpdateIntervalMs?: number;
  checkCluster?: string;
  reportCluster?: string;
  attributesForHubProxy?: Attributes;
  reportBatchMaxEntries?: number;
  reportBatchMaxTimeMs?: number;
  /** Reports kept for resending while the hub is unreachable (filter default 10 000; 0 = keep none). */
  reportBufferMaxEntries?: number;
  /** Bytes of encoded report batches kept for resending (filter default 8 MiB; 0 = keep none). */
  reportBufferMaxBytes?: number;
}

export interface ServiceConfig {
  disableCheckCalls: boolean;
  disableReportCalls: boolean;
  hubAttributes?: Attributes;
  httpApiSpec: HttpApiSpec[];
  quotaSpec: QuotaSpec[];
  networkFailPolicy?: NetworkFailPolicy;
  forwardAttributes?: Attributes;
}

export interface TcpClientConfig {
  transport?: TransportConfig;
  hubAttributes?: Attributes;
  disableCheckCalls: boolean;
  disableReportCalls: boolean;
  connectionQuotaSpec?: QuotaSpec;
  reportIntervalMs?: number;
}

export interface HttpClientConfig {
  transport?: TransportConfig;
  serviceConfigs: Record<string, ServiceConfig>;
  defaultDestinationService?: string;
  hubAttributes?: Attributes;
  forwardAttributes?: Attributes;
  ignoreForwardedAttributes: boolean;
}

const MAX_UINT32 = 4_294_967_295;
const MAX_INT32 = 2_147_483_647;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export function decodeStringMatch(f: Field, checks: PatternChecks): StringMatch {
  f.allowOnly(["exact", "prefix", "regex"]);
  const which = f.oneOf(["exact", "prefix", "regex"] as const) as "exact" | "prefix" | "regex";
  const text = f.get(which).string();
  if (which === "regex") {
    const problem = checks.regex(text);
    if (problem) f.get("regex").invalid(problem);
  }
  return { [which]: text };
}

export function decodeHttpApiSpec(spec: Field, checks: PatternChecks): HttpApiSpec {
  spec.allowOnly(["attributes", "patterns", "apiKeys"]);
  // Each part is attempted on its own, so `meshctl validate` reports every error of a document.
  const patterns = attemptEach(spec.get("patterns"), (p) => {
    attempt(p, (f) => f.allowOnly(["attributes", "httpMethod", "uriTemplate", "regex"]));
    const which = p.oneOf(["uriTemplate", "regex"] as const) as "uriTemplate" | "regex";
    const text = attempt(p, () => {
      const t = p.get(which).nonEmptyString();
      const problem = which === "uriTemplate" ? checks.template(t) : checks.regex(t);
      if (problem) p.get(which).invalid(problem);
      return t;
    });
    const method = attempt(p.get("httpMethod"), (f) => {
      const m = f.optionalString();
      if (m !== undefined && !/^(\*|[!#$%&'*+.^_`|~0-9A-Za-z-]+)$/.test(m)) f.fail("an HTTP method name such as GET, or *");
      return m;
    });
    return { attributes: attempt(p.get("attributes"), decodeAttributes), httpMethod: method, [which]: text } as HttpApiSpecPattern;
  });
  const apiKeys = attemptEach(spec.get("apiKeys"), (k) => {
    k.allowOnly(["query", "header", "cookie"]);
    const which = k.oneOf(["query", "header", "cookie"] as const) as "query" | "header" | "cookie";
    return { [which]: k.get(which).nonEmptyString() } as ApiKey;
  });
  return { attributes: attempt(spec.get("attributes"), decodeAttributes), patterns, apiKeys };
}

export function decodeMeshService(f: Field): MeshService {
  f.allowOnly(["name", "namespace", "domain", "service", "labels"]);
  const s: MeshService = {
    name: f.get("name").optionalString(),
    namespace: f.get("namespace").optionalString(),
    domain: f.get("domain").optionalString(),
    service: f.get("service").optionalString(),
    labels: f.get("labels").present ? f.get("labels").stringMap() : undefined,
  };
  if (!s.name && !s.service) f.invalid("expected name or service");
  if (s.namespace !== undefined && !DNS1123_LABEL.test(s.namespace)) f.get("namespace").fail("a DNS-1123 label");
  return s;
}

function decodeReferences(f: Field): SpecReference[] {
  return f.nonEmptyList().map((r) => {
    r.allowOnly(["name", "namespace"]);
    const namespace = r.get("namespace").optionalString();
    if (namespace !== undefined && !DNS1123_LABEL.test(namespace)) r.get("namespace").fail("a DNS-1123 label");
    return { name: r.get("name").nonEmptyString(), namespace };
  });
}

export function decodeHttpApiSpecBinding(spec: Field): HttpApiSpecBinding {
  spec.allowOnly(["services", "apiSpecs"]);
  return { services: attemptEach(spec.get("services"), decodeMeshService, true), apiSpecs: attempt(spec.get("apiSpecs"), decodeReferences) };
}

export function decodeQuotaSpecBinding(spec: Field): QuotaSpecBinding {
  spec.allowOnly(["services", "quotaSpecs"]);
  return { services: attemptEach(spec.get("services"), decodeMeshService, true), quotaSpecs: attempt(spec.get("quotaSpecs"), decodeReferences) };
}

export function decodeQuotaSpec(spec: Field, checks: PatternChecks): QuotaSpec {
  spec.allowOnly(["rules"]);
  const rules = attemptEach(spec.get("rules"), (rule) => {
    attempt(rule, (f) => f.allowOnly(["match", "quotas"]));
    const match = attemptEach(rule.get("match"), (m) => {
      m.allowOnly(["clause"]);
      const clause: Record<string, StringMatch> = {};
      for (const [name, sm] of m.get("clause").entries()) clause[name] = decodeStringMatch(sm, checks);
      return { clause };
    });
    const quotas = attemptEach(
      rule.get("quotas"),
      (q) => {
        attempt(q, (f) => f.allowOnly(["quota", "charge"]));
        return { quota: attempt(q.get("quota"), (f) => f.nonEmptyString()), charge: attempt(q.get("charge"), (f) => f.integer(1, MAX_INT32, 1)) };
      },
      true,
    );
    return { match, quotas };
  });
  return { rules };
}

export function decodeNetworkFailPolicy(f: Field): NetworkFailPolicy | undefined {
  if (!f.present) return undefined;
  attempt(f, (x) => x.allowOnly(["policy", "maxRetry", "baseRetryWait", "maxRetryWait"]));
  const p: NetworkFailPolicy = {
    policy: attempt(f.get("policy"), (x) => x.enumOf(["FAIL_OPEN", "FAIL_CLOSE"] as const, "FAIL_OPEN")),
    maxRetry: attempt(f.get("maxRetry"), (x) => x.integer(0, MAX_UINT32, 0)),
    baseRetryWaitMs: attempt(f.get("baseRetryWait"), (x) => (x.present ? x.durationMs() : undefined)),
    maxRetryWaitMs: attempt(f.get("maxRetryWait"), (x) => (x.present ? x.durationMs() : undefined)),
  };
  if (!noErrorsYet(f)) return p;
  if ((p.baseRetryWaitMs ?? 80) < 0) f.get("baseRetryWait").fail("a non-negative duration");
  if ((p.baseRetryWaitMs ?? 80) > (p.maxRetryWaitMs ?? 1000)) f.get("maxRetryWait").invalid("expected a duration no shorter than baseRetryWait");
  return p;
}

export function decodeTransportConfig(f: Field): TransportConfig | undefined {
  if (!f.present) return undefined;
  attempt(f, (x) =>
    x.allowOnly([
      "disableCheckCache",
      "disableQuotaCache",
      "disableReportBatch",
      "networkFailPolicy",
      "statsUpdateInterval",
      "checkCluster",
      "reportCluster",
      "attributesForHubProxy",
      "reportBatchMaxEntries",
      "reportBatchMaxTime",
      "reportBufferMaxEntries",
      "reportBufferMaxBytes",
    ]),
  );
  const optionalMs = (name: string) => attempt(f.get(name), (x) => (x.present ? x.durationMs() : undefined));
  const optionalName = (name: string) => attempt(f.get(name), (x) => (x.present ? x.nonEmptyString() : undefined));
  return {
    disableCheckCache: attempt(f.get("disableCheckCache"), (x) => x.bool()),
    disableQuotaCache: attempt(f.get("disableQuotaCache"), (x) => x.bool()),
    disableReportBatch: attempt(f.get("disableReportBatch"), (x) => x.bool()),
    networkFailPolicy: decodeNetworkFailPolicy(f.get("networkFailPolicy")),
    statsUpdateIntervalMs: optionalMs("statsUpdateInterval"),
    checkCluster: optionalName("checkCluster"),
    reportCluster: optionalName("reportCluster"),
    attributesForHubProxy: attempt(f.get("attributesForHubProxy"), decodeAttributes),
    reportBatchMaxEntries: attempt(f.get("reportBatchMaxEntries"), (x) => (x.present ? x.integer(0, MAX_UINT32) : undefined)),
    reportBatchMaxTimeMs: optionalMs("reportBatchMaxTime"),
    reportBufferMaxEntries: attempt(f.get("reportBufferMaxEntries"), (x) => (x.present ? x.integer(0, MAX_UINT32) : undefined)),
    reportBufferMaxBytes: attempt(f.get("reportBufferMaxBytes"), (x) => (x.present ? x.integer(0, MAX_UINT32) : undefined)),
  };
}

export function decodeServiceConfig(f: Field, checks: PatternChecks): ServiceConfig {
  attempt(f, (x) =>
    x.allowOnly([
      "disableCheckCalls",
      "disableReportCalls",
      "hubAttributes",
      "mixerAttributes",
      "httpApiSpec",
      "quotaSpec",
      "networkFailPolicy",
      "forwardAttributes",
    ]),
  );
  return {
    disableCheckCalls: attempt(f.get("disableCheckCalls"), (x) => x.bool()),
    disableReportCalls: attempt(f.get("disableReportCalls"), (x) => x.bool()),
    hubAttributes: attempt(hubAttributesField(f), decodeAttributes),
    httpApiSpec: attemptEach(f.get("httpApiSpec"), (s) => decodeHttpApiSpec(s, checks)),
    quotaSpec: attemptEach(f.get("quotaSpec"), (s) => decodeQuotaSpec(s, checks)),
    networkFailPolicy: decodeNetworkFailPolicy(f.get("networkFailPolicy")),
    forwardAttributes: attempt(f.get("forwardAttributes"), decodeAttributes),
  };
}

// The upstream name `mixerAttributes` is accepted as an alias of hubAttributes.
function hubAttributesField(f: Field): Field {
  if (f.get("mixerAttributes").present && !f.get("hubAttributes").present) return f.get("mixerAttributes");
  return f.get("hubAttributes");
}

export function decodeHttpClientConfig(f: Field, checks: PatternChecks): HttpClientConfig {
  attempt(f, (x) =>
    x.allowOnly([
      "transport",
      "serviceConfigs",
      "defaultDestinationService",
      "hubAttributes",
      "mixerAttributes",
      "forwardAttributes",
      "ignoreForwardedAttributes",
    ]),
  );
  const serviceConfigs: Record<string, ServiceConfig> = {};
  for (const [name, s] of attempt(f.get("serviceConfigs"), (x) => x.entries()) ?? []) serviceConfigs[name] = attempt(s, (x) => decodeServiceConfig(x, checks));
  return {
    transport: attempt(f.get("transport"), decodeTransportConfig),
    serviceConfigs,
    defaultDestinationService: attempt(f.get("defaultDestinationService"), (x) => x.optionalString()),
    hubAttributes: attempt(hubAttributesField(f), decodeAttributes),
    forwardAttributes: attempt(f.get("forwardAttributes"), decodeAttributes),
    ignoreForwardedAttributes: attempt(f.get("ignoreForwardedAttributes"), (x) => x.bool()),
  };
}

export function decodeTcpClientConfig(f: Field, checks: PatternChecks): TcpClientConfig {
  attempt(f, (x) =>
    x.allowOnly(["transport", "hubAttributes", "mixerAttributes", "disableCheckCalls", "disableReportCalls", "connectionQuotaSpec", "reportInterval"]),
  );
  return {
    transport: attempt(f.get("transport"), decodeTransportConfig),
    hubAttributes: attempt(hubAttributesField(f), decodeAttributes),
    disableCheckCalls: attempt(f.get("disableCheckCalls"), (x) => x.bool()),
    disableReportCalls: attempt(f.get("disableReportCalls"), (x) => x.bool()),
    connectionQuotaSpec: attempt(f.get("connectionQuotaSpec"), (x) => (x.present ? decodeQuotaSpec(x, checks) : undefined)),
    // Under 1 s is raised to 1 s by the filter (the spec's floor).
    reportIntervalMs: attempt(f.get("reportInterval"), (x) => (x.present ? x.durationMs() : undefined)),
  };
}

// ---- Back to the JSON the filter's configuration takes (camelCase, durations as "N.NNNs").

function durationText(ms: number | undefined): string | undefined {
  return ms === undefined ? undefined : `${(ms / 1000).toFixed(9).replace(/\.?0+$/, "")}s`;
}

function encodeFailPolicy(p: NetworkFailPolicy | undefined): object | undefined {
  if (!p) return undefined;
  return { policy: p.policy, maxRetry: p.maxRetry, baseRetryWait: durationText(p.baseRetryWaitMs), maxRetryWait: durationText(p.maxRetryWaitMs) };
}

function encodeTransport(t: TransportConfig | undefined): object | undefined {
  return (
    t && {
      disableCheckCache: t.disableCheckCache,
      disableQuotaCache: t.disableQuotaCache,
      disableReportBatch: t.disableReportBatch,
      networkFailPolicy: encodeFailPolicy(t.networkFailPolicy),
      statsUpdateInterval: durationText(t.statsUpdateIntervalMs),
      checkCluster: t.checkCluster,
      reportCluster: t.reportCluster,
      attributesForHubProxy: encodeAttributes(t.attributesForHubProxy),
      reportBatchMaxEntries: t.reportBatchMaxEntries,
      reportBatchMaxTime: durationText(t.reportBatchMaxTimeMs),
      reportBufferMaxEntries: t.reportBufferMaxEntries,
      reportBufferMaxBytes: t.reportBufferMaxBytes,
    }
  );
}

export function encodeTcpClientConfig(c: TcpClientConfig): object {
  return {
    transport: encodeTransport(c.transport),
    hubAttributes: encodeAttributes(c.hubAttributes),
    disableCheckCalls: c.disableCheckCalls,
    disableReportCalls: c.disableReportCalls,
    connectionQuotaSpec: c.connectionQuotaSpec,
    reportInterval: durationText(c.reportIntervalMs),
  };
}

export function encodeHttpClientConfig(c: HttpClientConfig): object {
  return {
    transport: encodeTransport(c.transport),
    serviceConfigs: Object.fromEntries(
      Object.entries(c.serviceConfigs).map(([name, s]) => [
        name,
        {
          disableCheckCalls: s.disableCheckCalls,
          disableReportCalls: s.disableReportCalls,
          hubAttributes: encodeAttributes(s.hubAttributes),
          httpApiSpec: s.httpApiSpec.map(encodeHttpApiSpec),
          quotaSpec: s.quotaSpec,
          networkFailPolicy: encodeFailPolicy(s.networkFailPolicy),
          forwardAttributes: encodeAttributes(s.forwardAttributes),
        },
      ]),
    ),
    defaultDestinationService: c.defaultDestinationService,
    hubAttributes: encodeAttributes(c.hubAttributes),
    forwardAttributes: encodeAttributes(c.forwardAttributes),
    ignoreForwardedAttributes: c.ignoreForwardedAttributes,
  };
}

export function encodeHttpApiSpec(s: HttpApiSpec): object {
  return {
    attributes: encodeAttributes(s.attributes),
    patterns: s.patterns.map((p) => ({ ...p, attributes: encodeAttributes(p.attributes) })),
    apiKeys: s.apiKeys,
  };
}
