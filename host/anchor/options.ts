import type { TokenSettings } from "./service_account_token.ts";
import { DEFAULT_ROOT_NAMESPACE } from "../config/mesh_config.ts";
import { AnchorConfigError } from "./errors.ts";

/** Defaults of `mesh_ca` (spec 2: mesh_ca, Authentication, Listeners and ports). */
export const DEFAULT_GRPC_PORT = 8060;
export const DEFAULT_MONITORING_PORT = 15014;
export const DEFAULT_TRUST_DOMAIN = "cluster.local";
export const DEFAULT_WORKLOAD_CERT_TTL_MS = 2160 * 3_600_000;
export const DEFAULT_MAX_WORKLOAD_CERT_TTL_MS = 2160 * 3_600_000;
export const DEFAULT_GRACE_PERIOD_RATIO = 0.5;
export const DEFAULT_KEY_SIZE_BITS = 2048;
export const DEFAULT_PROBE_CHECK_INTERVAL_MS = 30_000;
export const DEFAULT_REQUESTED_CA_CERT_TTL_MS = 8760 * 3_600_000;
export const DEFAULT_STORAGE_NAMESPACE = DEFAULT_ROOT_NAMESPACE;
export const DEFAULT_GRPC_HOST_IDENTITIES = "mesh-ca,mesh-anchor";
/** The TLS server name clients check mesh_ca's certificate against (the first of its default --grpc-host-identities). */
export const DEFAULT_CA_SERVER_NAME = "mesh-ca";
/** The `iss` of tokens `mesh_ca token` mints unless told otherwise, and their lifetime. */
export const DEFAULT_LOCAL_ISSUER = "mesh-token-issuer";
export const DEFAULT_TOKEN_TTL_MS = 24 * 3_600_000;
/** How long a graceful shutdown waits for calls in flight before closing connections. */
export const SHUTDOWN_GRACE_MS = 5000;

/** Log scopes of mesh_ca (spec 2, "Log scopes per daemon"). */
export const ANCHOR_LOG_SCOPES = ["all", "configmapcontroller", "default", "monitor", "pkica", "rootcertrotator", "secretcontroller", "serverca"] as const;

/** The ANCHOR_* environment variables mesh_ca reads (environment.ts). */
export interface AnchorEnvironment {
  selfSignedCaCertTtlMs: number;
  /** ≤ 0 disables the root rotator. */
  rootCertCheckIntervalMs: number;
  rootCertGracePeriodPercentile: number;
  rotatorJitter: boolean;
  workloadCertMinGracePeriodMs: number;
  /** Accepted; no effect (no namespace controller). */
  enableNamespacesByDefault: boolean;
}

/** Flags of a spec'd feature this CA does not have: accepted, logged when set, no effect (docs/mesh_ca.md). */
export interface IgnoredFlags {
  appendDnsNames: boolean;
  anchorStorageNamespace: string;
  customDnsNames: string;
  orchConfig: string;
  listenedNamespaces: string;
  sdsEnabled: boolean;
  serverOnly: boolean;
}

/** Everything the root command of mesh_ca was told, typed. */
export interface AnchorServerOptions {
  selfSignedCa: boolean;
  /** Ours: where the self-signed CA is kept across restarts; empty = memory only. */
  selfSignedCaCertDir: string;
  readSigningCertOnly: boolean;
  signingCert: string;
  signingKey: string;
  rootCert: string;
  certChain: string;
  trustDomain: string;
  workloadCertTtlMs: number;
  maxWorkloadCertTtlMs: number;
  workloadCertGracePeriodRatio: number;
  keySize: number;
  pkcs8Keys: boolean;
  org: string;
  /** Ours: namespaces whose identities may be issued; empty = all. */
  allowedNamespaces: readonly string[];
  grpcPort: number;
  /** Ours: the address the gRPC port binds to; default every address. */
  grpcAddress: string;
  /** DNS names of the CA's own TLS certificate (`--grpc-host-identities`). */
  grpcHostIdentities: readonly string[];
  /** Ours: serve gRPC in plain text (local development: no renewal by certificate, tokens travel in clear). */
  grpcPlaintext: boolean;
  /** How service-account tokens are verified (JWT_POLICY, TOKEN_ISSUER, AUDIENCE, --token-jwks). */
  tokens: TokenSettings;
  /**
   * `--trusted-node-accounts` (upstream's CA_TRUSTED_NODE_ACCOUNTS): `<namespace>/<service-account>`
   * of callers that may ask for another workload's certificate (metadata
   * ImpersonatedIdentity): disco-discovery relaying its proxies' renewals. Default none.
   */
  trustedNodeAccounts?: readonly string[];
  monitoringPort: number;
  /** `--enable-profiling`: V8 CPU profiles and heap snapshots at /debug/pprof/ on the monitoring port. */
  enableProfiling: boolean;
  livenessProbePath: string;
  livenessProbeIntervalMs: number;
  probeCheckIntervalMs: number;
  ctrlzPort: number;
  ctrlzAddress: string;
  /** `--experimental-dual-use`: workload certificates carry their identity as subject CommonName too. */
  dualUse: boolean;
  /** `--sign-ca-certs`: CSRs asking for CA:TRUE get CA certificates (chained mesh_ca instances). */
  signCaCerts: boolean;
  /** `--upstream-ca-address`: get this CA's certificate from that mesh_ca instead of holding a root; empty = off. */
  upstreamCaAddress: string;
  /** Ours `--upstream-ca-token`: the service-account token file this CA presents upstream. */
  upstreamCaToken: string;
  /** Ours `--upstream-ca-server-name`: the name the upstream's TLS certificate carries. */
  upstreamCaServerName: string;
  /** `--requested-ca-cert-ttl`: the lifetime asked of the upstream for this CA's certificate. */
  requestedCaCertTtlMs: number;
  ignored: IgnoredFlags;
  env: AnchorEnvironment;
}

/** The ignored flags' defaults: the only values mesh_ca accepts for them (others are refused at start). */
export const IGNORED_FLAG_DEFAULTS: IgnoredFlags = {
  appendDnsNames: false,
  anchorStorageNamespace: DEFAULT_STORAGE_NAMESPACE,
  customDnsNames: "",
  orchConfig: "",
  listenedNamespaces: "",
  sdsEnabled: false,
  serverOnly: false,
};

/** Each ignored flag's name and default; a value other than the default is logged as having no effect. */
export const IGNORED_FLAGS: { readonly [K in keyof IgnoredFlags]: { flag: string; default: IgnoredFlags[K]; help: string } } = {
  appendDnsNames: { flag: "--append-dns-names", default: IGNORED_FLAG_DEFAULTS.appendDnsNames, help: "append DNS names to certificates for webhook services" },
  anchorStorageNamespace: { flag: "--anchor-storage-namespace", default: IGNORED_FLAG_DEFAULTS.anchorStorageNamespace, help: "authority pod namespace" },
  customDnsNames: { flag: "--custom-dns-names", default: IGNORED_FLAG_DEFAULTS.customDnsNames, help: "comma list of account.namespace:customdns" },
  orchConfig: { flag: "--orch-config", default: IGNORED_FLAG_DEFAULTS.orchConfig, help: "orchestrator config file path" },
  listenedNamespaces: { flag: "--listened-namespaces", default: IGNORED_FLAG_DEFAULTS.listenedNamespaces, help: "namespaces the secret controller watches" },
  sdsEnabled: { flag: "--sds-enabled", default: IGNORED_FLAG_DEFAULTS.sdsEnabled, help: "SDS enabled" },
  serverOnly: { flag: "--server-only", default: IGNORED_FLAG_DEFAULTS.serverOnly, help: "serve only, write no orchestrator secrets" },
};

/** `--trusted-node-accounts` / CA_TRUSTED_NODE_ACCOUNTS: `ns/sa[,ns/sa…]`; throws naming the bad entry. */
export function parseTrustedNodeAccounts(text: string, source: string): string[] {
  const entries = text
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean);
  for (const e of entries) {
    if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(e))
      throw new AnchorConfigError(`${source}: expected <namespace>/<service-account>[,…], got ${JSON.stringify(e)}`);
  }
  return entries;
}

/** The ignored flags given a value other than their default (each logged as having no effect). */
export function ignoredFlagsSet(ignored: IgnoredFlags): string[] {
  const set: string[] = [];
  let key: keyof IgnoredFlags;
  for (key in IGNORED_FLAGS) if (ignored[key] !== IGNORED_FLAGS[key].default) set.push(IGNORED_FLAGS[key].flag);
  return set;
}

/**
 * mesh_ca's root flags as commander's parsers leave them (host/bin/mesh_ca.ts;
 * each value already checked by its parser: ports, durations in ms, ratios).
 */
export interface AnchorFlags {
  selfSignedCa: boolean;
  selfSignedCaCertDir: string;
  readSigningCertOnly: boolean;
  signingCert: string;
  signingKey: string;
  rootCert: string;
  certChain: string;
  trustDomain: string;
  workloadCertTtl: number;
  maxWorkloadCertTtl: number;
  workloadCertGracePeriodRatio: number;
  keySize: number;
  pkcs8Keys: boolean;
  org: string;
  experimentalDualUse: boolean;
  signCaCerts: boolean;
  upstreamCaAddress: string;
  upstreamCaToken: string;
  upstreamCaServerName: string;
  requestedCaCertTtl: number;
  allowedNamespaces: string;
  grpcPort: number;
  grpcAddress: string;
  grpcHostIdentities: string;
  grpcPlaintext: boolean;
  /** Undefined: the default of TokenSettings (service_account_token.ts). */
  tokenJwks?: string;
  /** Undefined: CA_TRUSTED_NODE_ACCOUNTS. */
  trustedNodeAccounts?: string;
  monitoringPort: number;
  enableProfiling: boolean;
  livenessProbePath: string;
  livenessProbeInterval: number;
  probeCheckInterval: number;
  ctrlz_port: number;
  ctrlz_address: string;
}

const commaList = (value: string): string[] =>
  value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * mesh_ca's flags decoded once into the server's options; token settings,
 * ANCHOR_* and CA_TRUSTED_NODE_ACCOUNTS come from the environment. Throws
 * AnchorConfigError naming a bad value.
 */
export function anchorServerOptions(flags: AnchorFlags, tokens: TokenSettings, env: AnchorEnvironment, trustedNodeAccountsVariable = ""): AnchorServerOptions {
  return {
    selfSignedCa: flags.selfSignedCa,
    selfSignedCaCertDir: flags.selfSignedCaCertDir,
    readSigningCertOnly: flags.readSigningCertOnly,
    signingCert: flags.signingCert,
    signingKey: flags.signingKey,
    rootCert: flags.rootCert,
    certChain: flags.certChain,
    trustDomain: flags.trustDomain || DEFAULT_TRUST_DOMAIN,
    workloadCertTtlMs: flags.workloadCertTtl,
    maxWorkloadCertTtlMs: flags.maxWorkloadCertTtl,
    workloadCertGracePeriodRatio: flags.workloadCertGracePeriodRatio,
    keySize: flags.keySize,
    pkcs8Keys: flags.pkcs8Keys,
    org: flags.org,
    allowedNamespaces: commaList(flags.allowedNamespaces),
    grpcPort: flags.grpcPort,
    grpcAddress: flags.grpcAddress,
    grpcHostIdentities: commaList(flags.grpcHostIdentities),
    grpcPlaintext: flags.grpcPlaintext,
    tokens,
    trustedNodeAccounts: flags.trustedNodeAccounts
      ? parseTrustedNodeAccounts(flags.trustedNodeAccounts, "--trusted-node-accounts")
      : parseTrustedNodeAccounts(trustedNodeAccountsVariable, "CA_TRUSTED_NODE_ACCOUNTS"),
    monitoringPort: flags.monitoringPort,
    enableProfiling: flags.enableProfiling,
    livenessProbePath: flags.livenessProbePath,
    livenessProbeIntervalMs: flags.livenessProbeInterval,
    probeCheckIntervalMs: flags.probeCheckInterval,
    ctrlzPort: flags.ctrlz_port,
    ctrlzAddress: flags.ctrlz_address,
    dualUse: flags.experimentalDualUse,
    signCaCerts: flags.signCaCerts,
    upstreamCaAddress: flags.upstreamCaAddress,
    upstreamCaToken: flags.upstreamCaToken,
    upstreamCaServerName: flags.upstreamCaServerName,
    requestedCaCertTtlMs: flags.requestedCaCertTtl,
    // Refused at start unless given their defaults (docs/daemon-reference.md).
    ignored: IGNORED_FLAG_DEFAULTS,
    env,
  };
}
