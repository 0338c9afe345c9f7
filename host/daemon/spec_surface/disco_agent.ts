import { PROXY_LOGGER_SCOPES } from "../../proxy/proxy_loggers.ts";
import { parseGoDuration } from "../duration.ts";
import { envReader } from "../env_values.ts";
import { type NotApplicable, na } from "./not_applicable.ts";

/**
 * disco-agent's part of spec 2 that this build does not apply, with the
 * reason (docs/daemon-reference.md lists every flag and variable of the
 * spec with its status). The agent here runs the sidecar in-process: there
 * is no separate proxy binary, bootstrap file, SDS server or orchestrator.
 */
const IN_PROCESS = "the sidecar runs in this process: there is no proxy binary or bootstrap file to generate";
const NO_TRACING = "the sidecar emits no traces (no tracer)";
const NO_ORCH = "needs an orchestrator API";
const DISCOVERY = "shapes what discovery pushes: not the agent's to apply";
const NO_SDS = "workload certificates are held in-process: there is no SDS server";

export const AGENT_NOT_APPLICABLE_FLAGS: readonly NotApplicable[] = [
  na("--binaryPath", "value", "/usr/local/bin/proxy", IN_PROCESS),
  na("--configPath", "value", "/etc/mesh/proxy", IN_PROCESS),
  na("--controlPlaneBootstrap", "bool", "false", IN_PROCESS),
  na("--customConfigFile", "value", "", IN_PROCESS),
  na("--templateFile", "value", "", IN_PROCESS),
  na("--dnsRefreshRate", "value", "300s", "upstream addresses are resolved per connection: there are no STRICT_DNS bootstrap clusters"),
  na(
    "--disableInternalTelemetry",
    "bool",
    "false",
    "upstream it sets disable_report_calls in the generated bootstrap (the hub reports of the proxy's own bootstrap listeners, as control-plane components run them); this sidecar generates no bootstrap: reports are turned off with the hub client's disableReportCalls (HttpClientConfig, ServiceConfig)",
  ),
  na("--serviceregistry", "value", "Orch", "the registry is the documents of --configDir and --endpoint", ["Mock"]),
  na("--tracerAAgentAddress", "value", "", NO_TRACING),
  na("--tracerBAccessToken", "value", "", NO_TRACING),
  na("--tracerBAddress", "value", "", NO_TRACING),
  na("--tracerBCacertPath", "value", "", NO_TRACING),
  na("--tracerBSecure", "bool", "false", NO_TRACING),
  na("--tracerCAddress", "value", "", NO_TRACING),
];

/** Spec 2 variables of the agent (AG) this build does not apply. */
export const AGENT_NOT_APPLICABLE_ENV: readonly NotApplicable[] = [
  na("CA_PROVIDER", "value", "Anchor", "the only certificate provider is mesh_ca (--caAddress / CA_ADDR)"),
  na("ENABLE_INGRESS_GATEWAY_SDS", "bool", "false", NO_SDS),
  na("HOSTED_CLUSTER_URL", "value", "", NO_ORCH),
  na("INGRESS_GATEWAY_FALLBACK_SECRET", "value", "gateway-fallback", `${NO_SDS}; gateway secrets need an orchestrator API`),
  na("INGRESS_GATEWAY_NAMESPACE", "value", "", `${NO_SDS}; gateway secrets need an orchestrator API`),
  na("MESHD_ADDR", "value", "", "there is no combined control plane"),
  na("MESH_BOOTSTRAP", "value", "", IN_PROCESS),
  na("MESH_BOOTSTRAP_OVERRIDE", "value", "", IN_PROCESS),
  na("MESH_GPRC_MAXRECVMSGSIZE", "value", "4194304", "the agent serves no gRPC (no SDS server)"),
  na("MESH_GPRC_MAXSTREAMS", "value", "100000", "the agent serves no gRPC (no SDS server)"),
  na("MESH_META_TLS_CLIENT_CERT_CHAIN", "value", "/etc/certs/cert-chain.pem", "certificates come from mesh_ca, not files"),
  na("MESH_META_TLS_SERVER_CERT_CHAIN", "value", "/etc/certs/cert-chain.pem", "certificates come from mesh_ca, not files"),
  na("MESH_META_TLS_CLIENT_KEY", "value", "/etc/certs/key.pem", "certificates come from mesh_ca, not files"),
  na("MESH_META_TLS_SERVER_KEY", "value", "/etc/certs/key.pem", "certificates come from mesh_ca, not files"),
  na("MESH_META_TLS_CLIENT_ROOT_CERT", "value", "/etc/certs/root-cert.pem", "certificates come from mesh_ca, not files"),
  na("MESH_META_TLS_SERVER_ROOT_CERT", "value", "/etc/certs/root-cert.pem", "certificates come from mesh_ca, not files"),
  na("MESH_NAMESPACE", "value", "", "the workload's namespace is POD_NAMESPACE"),
  na("NAMESPACE", "value", "mesh-system", "there is no node agent: the workload's namespace is POD_NAMESPACE"),
  na("PLUGINS", "value", "", "no cloud credential plugins"),
  na("SDS_ENABLED", "bool", "false", NO_SDS),
  na("SDS_UDS_PATH", "value", "unix:/var/run/sds/uds_path", NO_SDS),
  na("SECRET_JOB_RUN_INTERVAL", "value", "10m0s", "renewal is timed to the certificate, not polled"),
  na("SECRET_WATCHER_RESYNC_PERIOD", "value", "", NO_ORCH),
  na("STALED_CONNECTION_RECYCLE_RUN_INTERVAL", "value", "5m0s", NO_SDS),
  na("CLOUDTRACER_TRACING_DEBUG", "bool", "false", NO_TRACING),
  na("CLOUDTRACER_TRACING_ENABLED", "bool", "false", NO_TRACING),
  na("CLOUDTRACER_TRACING_MAX_NUMBER_OF_ANNOTATIONS", "value", "200", NO_TRACING),
  na("CLOUDTRACER_TRACING_MAX_NUMBER_OF_ATTRIBUTES", "value", "200", NO_TRACING),
  na("CLOUDTRACER_TRACING_MAX_NUMBER_OF_MESSAGE_EVENTS", "value", "200", NO_TRACING),
  na("USE_MESH_JWT_FILTER", "bool", "false", "JWT is verified by the sidecar's own engine (docs/security.md)"),
  // Shared discovery-behaviour variables (AG, DI, CT) that shape what discovery pushes.
  ...(
    [
      ["DISCO_BLOCK_HTTP_ON_443", "bool", "true"],
      ["DISCO_CERT_DIR", "value", ""],
      ["DISCO_CERT_PROVIDER", "value", "anchor"],
      ["DISCO_DEBOUNCE_AFTER", "value", "100ms"],
      ["DISCO_DEBOUNCE_MAX", "value", "10s"],
      ["DISCO_DEBUG_ADSZ_CONFIG", "bool", "false"],
      ["DISCO_DISTRIBUTION_HISTORY_RETENTION", "value", "1m0s"],
      ["DISCO_ENABLE_CONFIG_DISTRIBUTION_TRACKING", "bool", "true"],
      ["DISCO_ENABLE_CRD_VALIDATION", "bool", "false"],
      ["DISCO_ENABLE_EDS_DEBOUNCE", "bool", "true"],
      ["DISCO_ENABLE_EDS_FOR_HEADLESS_SERVICES", "bool", "false"],
      ["DISCO_ENABLE_HEADLESS_SERVICE_POD_LISTENERS", "bool", "true"],
      ["DISCO_ENABLE_SQLDB_FILTER", "bool", "false"],
      ["DISCO_ENABLE_PROTOCOL_SNIFFING_FOR_INBOUND", "bool", "true"],
      ["DISCO_ENABLE_PROTOCOL_SNIFFING_FOR_OUTBOUND", "bool", "true"],
      ["DISCO_ENABLE_KVSTORE_FILTER", "bool", "false"],
      ["DISCO_ENABLE_TCP_METADATA_EXCHANGE", "bool", "true"],
      ["DISCO_ENABLE_RPC_FILTER", "bool", "false"],
      ["DISCO_FILTER_GATEWAY_CLUSTER_CONFIG", "bool", "false"],
      ["DISCO_HTTP10", "bool", "false"],
      ["DISCO_INBOUND_PROTOCOL_DETECTION_TIMEOUT", "value", "1s"],
      ["DISCO_INITIAL_FETCH_TIMEOUT", "value", "0s"],
      ["DISCO_PUSH_THROTTLE", "value", "100"],
      ["DISCO_RESPECT_DNS_TTL", "bool", "true"],
      ["DISCO_RESTRICT_POD_UP_TRAFFIC_LOOP", "bool", "true"],
      ["DISCO_SCOPE_GATEWAY_TO_NAMESPACE", "bool", "false"],
      ["DISCO_SCOPE_PUSHES", "bool", "true"],
      ["DISCO_SIDECAR_USE_REMOTE_ADDRESS", "bool", "false"],
      ["DISCO_SKIP_VALIDATE_TRUST_DOMAIN", "bool", "false"],
      ["DISCO_TRACE_SAMPLING", "value", "100"],
      ["DISCO_USE_ENDPOINT_SLICE", "bool", "false"],
    ] as const
  ).map(([name, type, dflt]) => na(name, type, dflt, DISCOVERY)),
];

/** The spec 2 variables the agent reads (docs/daemon-reference.md), decoded. */
export interface AgentVariables {
  /** CA_ADDR: mesh_ca's address when --caAddress is not given. */
  caAddress?: string;
  /** TRUST_DOMAIN: when --trust-domain is not given. */
  trustDomain?: string;
  /** SECRET_TTL (default 24h0m0s): the requested workload certificate lifetime when --workloadCertTtl is not given. */
  secretTtlMs: number;
  /** SECRET_GRACE_DURATION, when set: renew that long before expiry instead of at the grace period mesh_ca states. */
  secretGraceMs?: number;
  /** INITIAL_BACKOFF_MSEC (default 0): each certificate request waits a random 0 … that many ms first (thundering herd). */
  initialBackoffMs: number;
  /** PKCS8_KEY: keys written by OUTPUT_KEY_CERT_TO_DIRECTORY are PKCS#8 (else PKCS#1 for RSA, SEC1 for EC). */
  pkcs8Key: boolean;
  /** OUTPUT_KEY_CERT_TO_DIRECTORY: where key.pem, cert-chain.pem and root-cert.pem are written on each rotation; empty = nowhere. */
  outputKeyCertDirectory: string;
  /** MESH_CONFIG: mesh settings YAML, when --meshConfigFile is not given. */
  meshConfig?: string;
  /** MESH_AUTO_MTLS_ENABLED, when set: overrides the mesh settings' enableAutoMtls. */
  autoMtls?: boolean;
  /** TERMINATION_DRAIN_DURATION_SECONDS, when set: how long requests in flight may finish after SIGTERM (else --drainDuration). */
  terminationDrainMs?: number;
}

export const DEFAULT_SECRET_TTL_MS = 24 * 3_600_000;

/** Reads the AG variables this build applies; throws naming the variable on a bad value. */
export function agentVariables(env: NodeJS.ProcessEnv): AgentVariables {
  const read = envReader(env);
  const set = read.text;
  const bool = (name: string): boolean | undefined => (set(name) === undefined ? undefined : read.bool(name, false));
  const ttlText = set("SECRET_TTL");
  let secretTtlMs = DEFAULT_SECRET_TTL_MS;
  if (ttlText !== undefined) {
    const ms = parseGoDuration(ttlText);
    if (ms === undefined || ms <= 0) throw new Error(`SECRET_TTL=${JSON.stringify(ttlText)}: expected a positive duration such as "24h0m0s"`);
    secretTtlMs = ms;
  }
  const graceText = set("SECRET_GRACE_DURATION");
  let secretGraceMs: number | undefined;
  if (graceText !== undefined) {
    secretGraceMs = parseGoDuration(graceText);
    if (secretGraceMs === undefined || secretGraceMs <= 0)
      throw new Error(`SECRET_GRACE_DURATION=${JSON.stringify(graceText)}: expected a positive duration such as "12h0m0s"`);
  }
  const backoffText = set("INITIAL_BACKOFF_MSEC");
  const initialBackoffMs = backoffText === undefined ? 0 : Number(backoffText);
  if (!/^\d+$/.test(backoffText ?? "0") || !Number.isSafeInteger(initialBackoffMs))
    throw new Error(`INITIAL_BACKOFF_MSEC=${JSON.stringify(backoffText)}: expected a non-negative integer of milliseconds`);
  const caAddress = set("CA_ADDR");
  const trustDomain = set("TRUST_DOMAIN");
  const meshConfig = set("MESH_CONFIG");
  const autoMtls = bool("MESH_AUTO_MTLS_ENABLED");
  const drainSeconds = set("TERMINATION_DRAIN_DURATION_SECONDS") === undefined ? undefined : read.int("TERMINATION_DRAIN_DURATION_SECONDS", 0, 0, 2_147_483);
  return {
    ...(caAddress !== undefined ? { caAddress } : {}),
    ...(trustDomain !== undefined ? { trustDomain } : {}),
    secretTtlMs,
    ...(secretGraceMs !== undefined ? { secretGraceMs } : {}),
    initialBackoffMs,
    pkcs8Key: bool("PKCS8_KEY") ?? false,
    outputKeyCertDirectory: set("OUTPUT_KEY_CERT_TO_DIRECTORY") ?? "",
    ...(meshConfig !== undefined ? { meshConfig } : {}),
    ...(autoMtls !== undefined ? { autoMtls } : {}),
    ...(drainSeconds !== undefined ? { terminationDrainMs: drainSeconds * 1000 } : {}),
  };
}

/** `--proxyLogLevel` (Envoy's levels) as a level of the logger. */
export const PROXY_LOG_LEVELS = ["trace", "debug", "info", "warning", "error", "critical", "off"] as const;
export type ProxyLogLevel = (typeof PROXY_LOG_LEVELS)[number];
export function loggerLevelOf(level: ProxyLogLevel): "debug" | "info" | "warn" | "error" | "fatal" | "none" {
  return ({ trace: "debug", debug: "debug", info: "info", warning: "warn", error: "error", critical: "fatal", off: "none" } as const)[level];
}

/**
 * `--proxyComponentLogLevel comp:level,…` → scope → Envoy level. Throws
 * naming the flag on an unknown component or level.
 */
export function parseProxyComponentLevels(text: string): Map<string, ProxyLogLevel> {
  const out = new Map<string, ProxyLogLevel>();
  for (const item of text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const colon = item.indexOf(":");
    const name = item.slice(0, colon);
    const level = item.slice(colon + 1) as ProxyLogLevel;
    const scope = colon > 0 && Object.hasOwn(PROXY_LOGGER_SCOPES, name) ? PROXY_LOGGER_SCOPES[name] : undefined;
    if (scope === undefined)
      throw new Error(
        `--proxyComponentLogLevel: unknown component in ${JSON.stringify(item)} (expected <component>:<level>; components: ${Object.keys(PROXY_LOGGER_SCOPES).join(", ")})`,
      );
    if (!PROXY_LOG_LEVELS.includes(level))
      throw new Error(`--proxyComponentLogLevel: unknown level in ${JSON.stringify(item)} (levels: ${PROXY_LOG_LEVELS.join(", ")})`);
    out.set(scope, level);
  }
  return out;
}
