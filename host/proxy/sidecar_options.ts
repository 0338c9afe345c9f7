import type * as grpc from "@grpc/grpc-js";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Registry } from "prom-client";
import type { PatternChecks } from "../config/resources/hub_client.ts";
import type { SafetyNet } from "../daemon/safety_net.ts";
import type { EndpointFlag } from "../hub/clusters.ts";
import type { HubCaller } from "../hub/transport.ts";
import type { JwksCache } from "../security/jwt/jwks.ts";
import type { Logger } from "../telemetry/logger.ts";
import type { OutlierEvent } from "./cluster/outlier_detection.ts";
import type { AccessRecord } from "./http/connection_manager.ts";
import type { OriginalDestinationSource } from "./listener/connection.ts";
import type { ListenerLimits } from "./listener_limits.ts";
import type { MeshSettings } from "./mesh_config.ts";
import type { WorkloadTls } from "./workload_tls.ts";
import type { XdsNode } from "./xds_config.ts";

/** What the sidecar is built from (host/proxy/agent_command.ts decodes the agent's flags into it). */
export interface SidecarOptions {
  wasm: string;
  /** Where the configuration comes from: this directory (watched), unless `discovery` is given. */
  configDir: string;
  /** The control plane (`--discoveryAddress`): configuration over ADS instead of `configDir`. */
  discovery?: { address: string; node: XdsNode; credentials?: () => grpc.ChannelCredentials };
  /** The inbound, tcp and status listeners: the pod's address (they take traffic from other pods and the kubelet's probes). */
  bindAddress: string;
  /** The outbound listener: loopback, reached by the app of the pod only (listener_addresses.ts). */
  outboundBindAddress: string;
  /** The admin listener (POST /quitquitquit, /healthcheck/fail, /logging): loopback unless --adminBindAddress says otherwise. */
  adminBindAddress: string;
  inboundPort: number;
  outboundPort: number;
  adminPort: number;
  /** 0 = no status listener. */
  statusPort: number;
  /** The status listener's `/app-health/…` paths (host/proxy/app_probers.ts): true when it answered. */
  appProbes?: (path: string, req: IncomingMessage, res: ServerResponse) => boolean;
  /** TCP listener in front of the app's TCP port (TcpClientConfig); -1 = none. */
  tcpPort: number;
  tcpAppPort: number;
  appHost: string;
  appPort: number;
  /** Named upstreams: hub clusters and outbound services (`name` → host:port). */
  clusters: Map<
    string,
    {
      host: string;
      port: number /** Every endpoint when there are several (hub replicas); `host`/`port` is the first. */;
      hosts?: ReadonlyArray<{ host: string; port: number }>;
    }
  >;
  /** Service the inbound listener fronts (selects its ServiceConfig); "" = let the filter decide. */
  inboundService: string;
  hub: HubCaller;
  checks: PatternChecks;
  /** The mesh's DNS domain (`cluster.local` unless `--domain` says otherwise): service hosts are `<name>.<namespace>.svc.<domain>`. */
  meshDomain: string;
  logger: Logger;
  /** What /config_dump shows besides the filter configuration. */
  identity: Record<string, string>;
  /** More counters for /stats (e.g. the hub transport's). */
  extraStats?: () => Map<string, number>;
  /** The agent's own metrics (spec 2), appended to /stats/prometheus on the admin and status ports. */
  metricsRegistry?: Registry;
  /** What /server_info shows as `command_line_options`. */
  commandLineOptions?: Record<string, unknown>;
  /** POST /quitquitquit on the admin port: the agent drains and exits. */
  onQuit?: () => void;
  /** The security path (mTLS, JWT, authorization, gateway routing); absent = the sidecar as before, resources shown but not enforced. */
  security?: SidecarSecurityOptions;
  /** Timeouts and limits of the inbound and outbound listeners, each (`--headerReadTimeout`, `--idleTimeout`, `--maxConnections`, `--maxConcurrentRequests`). */
  limits?: ListenerLimits;
  /** Every ejection and return of an endpoint by outlier detection (`--outlierLogPath`). */
  onOutlierEvent?: (event: OutlierEvent) => void;
  /** Every request of the inbound and outbound listeners once it is over (`--proxyAccessLogService`). */
  onAccess?: (record: AccessRecord) => void;
  /** The process's safety net, when the daemon installed one: request paths run under it, its count is `server.uncaught_request_errors`. */
  safetyNet?: SafetyNet;
  /**
   * The connection stage's source of original destinations (listener/connection.ts): asked once per
   * connection the inbound and outbound listeners accept; undefined answers (not redirected) change nothing.
   */
  originalDestination?: OriginalDestinationSource;
}

/** What the security path needs besides the configuration directory (docs/sidecar.md "Security"). */
export interface SidecarSecurityOptions {
  mesh: MeshSettings;
  tls: WorkloadTls;
  /** `--endpoint` registry, keyed by `host:servicePort`. */
  endpoints: ReadonlyMap<string, EndpointFlag>;
  /** Ingress gateway mode (`--gateway`). */
  gateway: boolean;
  /** The container port the inbound listener stands for (gateway: the Gateway server port). */
  containerPort: number;
  name: string;
  namespace: string;
  serviceAccount: string;
  /** From `--labels` / `POD_LABELS`; undefined = the Pod document's labels. */
  labels?: Record<string, string>;
  jwks: JwksCache;
  clockSkewSeconds: number;
}

export interface SidecarAddresses {
  inbound: number;
  outbound: number;
  admin: number;
  status: number;
  /** -1 when there is no TCP listener. */
  tcp: number;
  /** The agent's token exchange service (`--stsPort`), when served. */
  sts?: number;
}
