/**
 * The options of `disco-agent proxy`, decoded once from its flags and
 * variables (host/bin/disco-agent.ts: commander's parsers check each flag's
 * syntax, the command adds what the variables decide) and read typed by the
 * sidecar's start (host/proxy/agent_command.ts). `meshctl x simulate` builds
 * the same object for its in-process sidecars. Durations are milliseconds.
 */
export interface AgentOptions {
  proxyAdminPort: number;
  /** Loopback unless given (a warning when it is not). */
  adminBindAddress?: string;
  statusPort: number;
  inboundPort: number;
  outboundPort: number;
  appPort: number;
  appHost: string;
  bindAddress: string;
  tcpPort?: number;
  tcpAppPort?: number;
  configDir?: string;
  discoveryAddress?: string;
  /** `NAME=HOST:PORT`, repeatable. */
  cluster: string[];
  inboundService: string;
  drainDuration: number;
  parentShutdownDuration: number;
  /** TERMINATION_DRAIN_DURATION_SECONDS, when set: overrides drainDuration on SIGTERM. */
  terminationDrainMs?: number;
  id: string;
  ip: string;
  domain: string;
  serviceCluster: string;
  proxyLogLevel?: string;
  connectTimeout?: number;
  stsPort?: number;
  tokenManagerPlugin?: string;
  metricsdUdpAddress?: string;
  proxyAccessLogService?: string;
  proxyMetricsService?: string;
  outlierLogPath?: string;
  wasm?: string;
  headerReadTimeout?: number;
  idleTimeout?: number;
  maxConnections?: number;
  maxConcurrentRequests?: number;
  caAddress?: string;
  controlPlaneAuthPolicy?: string;
  tokenPath?: string;
  caRootCert?: string;
  hubIdentity?: string;
  discoIdentity?: string;
  trustDomain?: string;
  serviceAccount?: string;
  labels?: string;
  meshConfigFile?: string;
  /** `FQDN:SERVICE_PORT=HOST:PORT[,…]`, repeatable. */
  endpoint?: string[];
  containerPort?: number;
  gateway?: boolean;
  jwtClockSkewSeconds?: number;
  jwksRefetchCooldown?: number;
  workloadCertTtl?: number;
  workloadKeyAlgorithm?: "RSA" | "ECDSA";
  /** SECRET_GRACE_DURATION. */
  secretGraceDuration?: number;
  /** INITIAL_BACKOFF_MSEC. */
  initialBackoffMs?: number;
  /** MESH_ORCH_APP_PROBERS: the app's original probes, replayed on the status port's `/app-health/…` (host/proxy/app_probers.ts). */
  appProbers?: ReadonlyMap<string, import("../inject/app_probes.ts").AppProber>;
  /** ENVOY_STATUS_PORT, ENVOY_PROMETHEUS_PORT: readiness and stats ports in front of the status port (host/proxy/status_ports.ts). */
  statusPorts?: ReadonlyArray<import("./status_ports.ts").StatusPort>;
  /** MESH_META_* and the agent's own keys: the xDS node's metadata (host/proxy/node_metadata.ts). */
  nodeMetadata?: Readonly<Record<string, string>>;
}

/** Environment variables of the seed that apply to the sidecar. */
export interface AgentEnvironment {
  POD_NAME?: string;
  POD_NAMESPACE?: string;
  INSTANCE_IP?: string;
  /** Workload labels `k=v,k=v` when --labels is not given. */
  POD_LABELS?: string;
  /** `true`/`false`: overrides the mesh config's enableFallthroughRoute. */
  DISCO_ENABLE_FALLTHROUGH_ROUTE?: string;
  /** `third-party-jwt` (default) or `first-party-jwt`: picks the default --tokenPath. */
  JWT_POLICY?: string;
  /** Mesh settings YAML when --meshConfigFile is not given. */
  MESH_CONFIG?: string;
  /** `true`/`false`: overrides the mesh settings' enableAutoMtls. */
  MESH_AUTO_MTLS_ENABLED?: string;
  /** Directory that receives key.pem, cert-chain.pem and root-cert.pem on each rotation. */
  OUTPUT_KEY_CERT_TO_DIRECTORY?: string;
  /** `true`: keys written to OUTPUT_KEY_CERT_TO_DIRECTORY are PKCS#8. */
  PKCS8_KEY?: string;
}
