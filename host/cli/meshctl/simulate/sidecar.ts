import type { AgentOptions } from "../../../proxy/agent_options.ts";
import type { FilterModule } from "../../../wasm/filter_module.ts";
import type { SimulateCa } from "./ca.ts";
import type { AgentEnvironment } from "../../../proxy/agent_options.ts";
import { SIDECAR_LOG_SCOPES, startProxy } from "../../../proxy/agent_command.ts";
import { MemoryLogger } from "./memory_logger.ts";

/** One sidecar of a scenario: what `disco-agent proxy` would be started with (docs/sidecar.md "Security"). */
export interface SidecarSpec {
  /** Variables of meshctl's environment the agent applies (spec 2 column CT, e.g. DISCO_ENABLE_FALLTHROUGH_ROUTE). */
  agentEnv?: AgentEnvironment;
  name: string;
  namespace: string;
  configDir: string;
  /** The CA: the sidecar gets a token for its service account and the CA's root, as startSecureWorkload gives a process, and reaches the CA in this process (`caTransport`); the run's sidecars of one identity share a certificate (SimulateCa.certificate). */
  ca: SimulateCa;
  serviceAccount: string;
  labels: Record<string, string>;
  /** The container port the inbound listener stands for (gateway: the Gateway server port). */
  containerPort: number;
  appPort: number;
  /** `--endpoint` values. */
  endpoints: string[];
  meshConfigFile: string;
  trustDomain: string;
  gateway: boolean;
  /** The run's filter module, shared by its sidecars for their configuration checks. */
  checks: FilterModule;
}

export interface SimulatedSidecar {
  inbound: number;
  outbound: number;
  /** The admin listener's loopback port (/config_dump). */
  adminPort: number;
  stop(): Promise<void>;
}

/**
 * Starts a scenario's sidecar inside meshctl: the sidecar `disco-agent proxy`
 * runs (agent_command.ts `startProxy`, the same code and settings), without
 * the cost of a Node process per sidecar. Every listener is on an ephemeral
 * loopback port. A sidecar that cannot start throws with its log lines.
 */
export async function startSimulatedSidecar(s: SidecarSpec): Promise<SimulatedSidecar> {
  const logger = new MemoryLogger(SIDECAR_LOG_SCOPES);
  const tokenPath = await s.ca.tokenFile(s.namespace, s.serviceAccount);
  // The values `disco-agent proxy --inboundPort 0 --outboundPort 0 --proxyAdminPort 0 --appPort … --containerPort … --configDir …
  // --caAddress … --tokenPath … --caRootCert … --controlPlaneAuthPolicy NONE --serviceAccount … --labels … --workloadKeyAlgorithm ECDSA --meshConfigFile … [--gateway] --endpoint … --trustDomain …`
  // parses to; the others are the command's defaults.
  const opts: AgentOptions = {
    proxyAdminPort: 0,
    statusPort: 0,
    inboundPort: 0,
    outboundPort: 0,
    appPort: s.appPort,
    appHost: "127.0.0.1",
    bindAddress: "127.0.0.1",
    configDir: s.configDir,
    cluster: [],
    inboundService: "",
    drainDuration: 0,
    parentShutdownDuration: 60_000,
    id: "",
    ip: "",
    domain: "",
    serviceCluster: "mesh-proxy",
    proxyLogLevel: "warning",
    caAddress: s.ca.address,
    tokenPath,
    caRootCert: s.ca.rootCertFile,
    // No TLS to a CA in the same process: the token travels with each request (as with mesh_ca --grpc-plaintext).
    controlPlaneAuthPolicy: "NONE",
    hubIdentity: "",
    trustDomain: s.trustDomain,
    serviceAccount: s.serviceAccount,
    labels: Object.entries(s.labels)
      .map(([k, v]) => `${k}=${v}`)
      .join(","),
    meshConfigFile: s.meshConfigFile,
    endpoint: s.endpoints,
    containerPort: s.containerPort,
    gateway: s.gateway,
    jwtClockSkewSeconds: 0,
    workloadCertTtl: 0,
    // Fast keys: a scenario is about policy, not key strength.
    workloadKeyAlgorithm: "ECDSA",
  };
  const started = await startProxy(
    opts,
    logger,
    { ...s.agentEnv, POD_NAME: s.name, POD_NAMESPACE: s.namespace },
    { checks: s.checks, caTransport: s.ca.transport, requestCertificate: s.ca.certificate },
  );
  if ("exitCode" in started) throw new Error(`the sidecar of ${s.namespace}/${s.name} (port ${s.containerPort}) did not start:\n${logger.lines.join("\n")}`);
  let stopping: Promise<void> | undefined;
  return {
    inbound: started.addresses.inbound,
    outbound: started.addresses.outbound,
    adminPort: started.addresses.admin,
    stop: () => (stopping ??= started.stop(0)),
  };
}
