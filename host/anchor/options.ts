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

/** Each ignored flag's name and default; a value other than the default is logged as having no effect. */
export const IGNORED_FLAGS: { readonly [K in keyof IgnoredFlags]: { flag: string; default: IgnoredFlags[K]; help: string } } = {
  appendDnsNames: { flag: "--append-dns-names", default: false, help: "append DNS names to certificates for webhook services" },
  anchorStorageNamespace: { flag: "--anchor-storage-namespace", default: DEFAULT_STORAGE_NAMESPACE, help: "authority pod namespace" },
  customDnsNames: { flag: "--custom-dns-names", default: "", help: "comma list of account.namespace:customdns" },
  orchConfig: { flag: "--orch-config", default: "", help: "orchestrator config file path" },
  listenedNamespaces: { flag: "--listened-namespaces", default: "", help: "namespaces the secret controller watches" },
  sdsEnabled: { flag: "--sds-enabled", default: false, help: "SDS enabled" },
  serverOnly: { flag: "--server-only", default: false, help: "serve only, write no orchestrator secrets" },
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
