import { bindNamed } from "../daemon/bind.ts";
import type * as grpc from "@grpc/grpc-js";
import { createServer, type Server } from "node:http";
import { formatConfigProblem } from "../config/problems.ts";
import type { PatternChecks } from "../config/resources/hub_client.ts";
import type { Logger, ScopedLogger } from "../telemetry/logger.ts";
import { closeServer, listen } from "../telemetry/http_listen.ts";
import { createAdminServer } from "./admin.ts";
import { ConfigDirWatcher, type LoadedConfig, describeFilterProblem } from "../config/config_dir.ts";
import { type XdsNode, XdsConfigSource } from "./xds_config.ts";
import { FilterHost } from "./filter_host.ts";
import type { HubCaller } from "../hub/transport.ts";
import { HttpProxy } from "./http_proxy.ts";
import { TcpProxy } from "./tcp_proxy.ts";
import { buildConfigDump } from "./config_dump.ts";
import type { EndpointFlag } from "../hub/clusters.ts";
import type { JwksCache } from "../security/jwt/jwks.ts";
import type { Workload } from "../security/workload.ts";
import type { MeshSettings } from "./mesh_config.ts";
import { DEFAULT_PATH_NORMALIZATION } from "../security/authz/path.ts";
import type { ListenerLimits } from "./listener_limits.ts";
import { MtlsListener } from "./mtls_listener.ts";
import { clusterName } from "../mesh/cluster_names.ts";
import { SecurityPolicy, type ServedRoute, type UpstreamCluster } from "./security_policy.ts";
import type { WorkloadTls } from "./workload_tls.ts";
import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";
import type { HeaderList } from "../wasm/abi_types.ts";
import type { AccessRecord, RouteDecision, SecurityStageResult, UpstreamControl } from "./http_proxy.ts";
import { ConnectionPools, OVERFLOW_REPLY } from "./connection_pool.ts";
import { OutlierDetector, type OutlierEvent } from "./outlier_detection.ts";
import { serverForSni } from "../mesh/gateway_tls.ts";
import type { Registry } from "prom-client";
import { buildInfo } from "../daemon/version.ts";
import { splitPem } from "../anchor/client.ts";
import type { ClusterInfo, ListenerInfo, ServerState } from "./admin_envoy.ts";
import { statsToPrometheus } from "./stats_exposition.ts";
import { checkProviders } from "../config/extension_providers.ts";
import { ExtAuthzClient } from "../security/authz/ext_authz.ts";
import type { SafetyNet } from "../daemon/safety_net.ts";
import type { Socket } from "node:net";
import { buildRegistry } from "../mesh/registry.ts";
import { type CaptureRegistry, type Destination, routeCapturedOutbound } from "./listener/capture_routing.ts";
import { CapturedOutboundListener } from "./listener/captured_outbound.ts";
import { INBOUND_PASSTHROUGH_SOURCE } from "../capture/iptables_rules.ts";

export { DEFAULT_ADMIN_PORT, DEFAULT_INBOUND_PORT, DEFAULT_OUTBOUND_PORT } from "./defaults.ts";
/** The stable first stdout line tests and tools read the bound ports from. */
export const LISTENING_LINE_PREFIX = "disco-agent listening ";

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
  appProbes?: (path: string, req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => boolean;
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
   * Where a connection was going before the pod's capture rules redirected it (host/capture/original_destination.ts);
   * undefined for one that was not redirected. Absent: every connection is handled as a direct one.
   */
  originalDestination?: (socket: Socket) => Destination | undefined;
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

/**
 * The Node sidecar: inbound listener in front of the local app, outbound
 * listener for the app's calls, the filter module on both, configuration
 * from a watched directory, and the admin port.
 */
export class Sidecar {
  private readonly log: ScopedLogger;
  private readonly filter: FilterHost;
  private readonly inbound: HttpProxy;
  private readonly outbound: HttpProxy;
  private readonly admin: Server;
  private readonly status: Server | undefined;
  private readonly watcher: ConfigDirWatcher | XdsConfigSource;
  private loaded: LoadedConfig | undefined;
  private configErrors = 0;
  private configApplied = 0;
  private draining = false;
  /** POST /healthcheck/fail: readiness fails (Envoy's DRAINING) while traffic is still served. */
  private healthCheckFailed = false;
  private readonly startedAt = Date.now();
  private readonly tcp: TcpProxy | undefined;
  private readonly mtls: MtlsListener | undefined;
  /** The outbound listener's capture stage: redirected connections routed by their original destination. */
  private readonly capturedOutbound: CapturedOutboundListener | undefined;
  private captureRegistry: CaptureRegistry = { services: [] };
  private policy: SecurityPolicy | undefined;
  /** The log scopes of spec 2 whose concern lives here (docs/daemon-reference.md "Log scopes"). */
  private readonly scopes: Record<"rbac" | "authn" | "sds" | "model" | "validation", ScopedLogger>;
  private readonly securityStats = new Map<string, number>();
  /** The external authorizers of CUSTOM policies, reached through the `--endpoint` registry (the service name itself otherwise). */
  private readonly extAuthz = new ExtAuthzClient((service, port) => {
    const ep = [...(this.options.security?.endpoints.values() ?? [])].find((e) => e.host === service && e.servicePort === port);
    return ep ? { host: ep.address.host, port: ep.address.port } : { host: service, port };
  });
  addresses: SidecarAddresses = { inbound: 0, outbound: 0, admin: 0, status: 0, tcp: -1 };

  constructor(private readonly options: SidecarOptions) {
    this.appUpstream = Object.freeze({ host: options.appHost, port: options.appPort });
    this.log = options.logger.scope("default");
    this.scopes = {
      rbac: options.logger.scope("rbac"),
      authn: options.logger.scope("authn"),
      sds: options.logger.scope("sds"),
      model: options.logger.scope("model"),
      validation: options.logger.scope("validation"),
    };
    this.outliers = new OutlierDetector(options.onOutlierEvent ? { onEvent: options.onOutlierEvent } : {});
    const filterLog = options.logger.scope("filter");
    this.filter = new FilterHost({
      wasm: options.wasm,
      hub: options.hub,
      log: (level, message) => {
        if (level === "critical" || level === "error") filterLog.error(message);
        else if (level === "warn") filterLog.warn(message);
        else if (level === "info") filterLog.info(message);
        else filterLog.debug(message);
      },
      failOpenOnTrap: () => this.loaded?.bundle.clientConfig?.transport?.networkFailPolicy?.policy !== "FAIL_CLOSE",
    });
    const proxyLog = (level: "debug" | "info" | "warn" | "error", message: string) => this.log[level](message);
    // Mesh settings are read once at start (--meshConfigFile); without the security path, the upstream default.
    const pathNormalization = () => options.security?.mesh.pathNormalization ?? DEFAULT_PATH_NORMALIZATION;
    // The same for every inbound request: one frozen object, not one per request.
    const inboundProperties: Readonly<Record<string, string>> = Object.freeze(
      options.inboundService ? { "mesh.destination_service": options.inboundService } : ({} as Record<string, string>),
    );
    this.inbound = new HttpProxy({
      name: "inbound",
      filter: this.filter,
      upstream: (_authority, socket) => this.inboundUpstream(socket),
      properties: () => inboundProperties,
      onLog: proxyLog,
      pathNormalization,
      limits: options.limits,
      onAccess: options.onAccess,
      safetyNet: options.safetyNet,
      acceptedElsewhere: options.security !== undefined,
      ...(options.security
        ? {
            beforeFilter: (req, headers) => this.inboundStage(req, headers),
            ...(options.security.gateway ? { route: (request) => this.routeOf(this.policy!.gatewayRoute(request)) } : {}),
          }
        : {}),
    });
    this.outbound = new HttpProxy({
      name: "outbound",
      filter: this.filter,
      upstream: (authority) => {
        const host = hostOf(authority);
        const cluster = options.clusters.get(host) ?? options.clusters.get(authority);
        if (cluster) return cluster;
        const port = Number(authority.slice(host.length + 1)) || 80;
        return host ? { host, port } : null;
      },
      properties: (authority) => this.outboundProperties(hostOf(authority)),
      onLog: proxyLog,
      pathNormalization,
      limits: options.limits,
      onAccess: options.onAccess,
      safetyNet: options.safetyNet,
      ...(options.security
        ? {
            beforeFilter: async (_req: IncomingMessage, headers: HeaderList): Promise<SecurityStageResult> => ({
              kind: "continue",
              headers: this.policy!.outboundHeaders(headers),
              properties: {},
              mtls: false,
            }),
            route: (request) => this.routeOf(this.policy!.outbound(request, options.clusters)),
          }
        : {}),
    });
    if (options.originalDestination) {
      this.capturedOutbound = new CapturedOutboundListener({
        http: this.outbound.server,
        originalDestination: options.originalDestination,
        route: (d) => routeCapturedOutbound(this.captureRegistry, d, options.security?.mesh.outboundTrafficPolicy ?? "ALLOW_ANY"),
        onLog: proxyLog,
      });
    }
    if (options.security?.gateway) {
      // A gateway port speaks what its Gateway servers say: HTTPS (tls.mode SIMPLE, the credential by SNI) or plain HTTP; read per connection.
      const servers = () => this.policy?.gatewayTls().filter((s) => s.cert !== undefined) ?? [];
      this.mtls = new MtlsListener({
        http: this.inbound.server,
        mode: () => (servers().length > 0 ? "STRICT" : "DISABLE"),
        tls: () => ({ key: "", cert: "", ca: "" }),
        serverCertificate: (sni) => {
          const s = serverForSni(servers(), sni);
          return s ? { cert: s.cert!, key: s.key! } : null;
        },
        onLog: proxyLog,
        firstBytesTimeoutMs: this.inbound.guard.limits.headerReadTimeoutMs,
        onTimeout: () => this.inbound.guard.headerTimeout(),
      });
      this.inbound.guard.guardAccepts(this.mtls.server);
    } else if (options.security) {
      const sec = options.security;
      this.mtls = new MtlsListener({
        http: this.inbound.server,
        mode: () => this.policy?.serverMode.mode ?? "STRICT",
        tls: () => sec.tls.serverOptions(),
        onLog: proxyLog,
        firstBytesTimeoutMs: this.inbound.guard.limits.headerReadTimeoutMs,
        onTimeout: () => this.inbound.guard.headerTimeout(),
      });
      this.inbound.guard.guardAccepts(this.mtls.server);
      this.scopes.sds.debug(
        `workload certificate handed to the inbound listener: serial ${sec.tls.current.serialNumber}, expires ${sec.tls.current.expiresAt.toISOString()}`,
      );
      const previous = sec.tls.options.onRotated;
      sec.tls.options.onRotated = (c) => {
        previous?.(c);
        this.mtls?.refresh();
        this.scopes.sds.info(`workload certificate handed to the listeners: serial ${c.serialNumber}, expires ${c.expiresAt.toISOString()}`);
      };
    }
    if (options.tcpPort >= 0) {
      this.tcp = new TcpProxy({
        filter: this.filter,
        upstream: { host: options.appHost, port: options.tcpAppPort },
        onLog: proxyLog,
        safetyNet: options.safetyNet,
      });
    }
    this.admin = createAdminServer({
      configDump: () => this.configDump(),
      stats: () => this.stats(),
      gauges: () => GAUGE_STATS,
      registry: options.metricsRegistry,
      ready: () => this.ready(),
      serverInfo: () => ({
        version: buildInfo().version,
        state: this.state(),
        startedAt: this.startedAt,
        node: { id: options.identity.id ?? "", cluster: options.identity.serviceCluster ?? "", metadata: { ...options.identity } },
        commandLineOptions: options.commandLineOptions ?? {},
      }),
      clusters: () => this.clusterInfo(),
      listeners: () => this.listenerInfo(),
      certificates: () => {
        if (!options.security) return undefined;
        const c = options.security.tls.current;
        return { certChainPem: splitPem(c.certChainPem), rootPems: splitPem(c.rootPem) };
      },
      quit: () => options.onQuit?.(),
      setHealthCheckFailed: (failed) => {
        if (failed !== this.healthCheckFailed) this.log.info(failed ? "/healthcheck/fail: readiness now fails" : "/healthcheck/ok: readiness restored");
        this.healthCheckFailed = failed;
      },
      logLevels: () => options.logger.currentLevels(),
      setLogLevel: (scope, level) => {
        try {
          for (const s of scope ? [scope] : options.logger.scopes) options.logger.setLevel(s, level);
          return undefined;
        } catch (e) {
          return (e as Error).message;
        }
      },
    });
    if (options.statusPort > 0) {
      this.status = createServer((req, res) => {
        const path = (req.url ?? "/").split("?")[0];
        if (options.appProbes?.(path, req, res)) return;
        if (path === "/stats/prometheus") {
          // upstream's agent serves the merged proxy and agent metrics here for scrapers
          statsToPrometheus(this.stats(), GAUGE_STATS, options.metricsRegistry).then(
            (body) => res.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" }).end(body),
            (e: Error) => res.writeHead(500).end(e.message),
          );
          return;
        }
        res.writeHead(path === "/healthz/ready" && this.ready() ? 200 : path === "/healthz/ready" ? 503 : 404).end();
      });
    }
    const reject = (problem: string) => {
      this.configErrors++;
      this.scopes.validation.error(problem);
    };
    this.watcher = options.discovery
      ? new XdsConfigSource(
          options.discovery.address,
          options.discovery.node,
          options.checks,
          options.meshDomain,
          (c) => this.apply(c),
          reject,
          this.log,
          options.discovery.credentials,
        )
      : new ConfigDirWatcher(options.configDir, options.checks, options.meshDomain, (c) => this.apply(c), reject);
  }

  /** Loads the configuration and opens every listener; throws when the first configuration is unusable. */
  async start(): Promise<SidecarAddresses> {
    if (!(await this.watcher.start()))
      throw new Error(
        `no usable configuration from ${this.options.discovery ? `the control plane at ${this.options.discovery.address}` : this.options.configDir}`,
      );
    const o = this.options;
    const at = (address: string, port: number | undefined) => `${address}:${port}`;
    const admin = await bindNamed("--proxyAdminPort", at(o.adminBindAddress, o.adminPort), listen(this.admin, o.adminPort, o.adminBindAddress));
    const inbound = await bindNamed(
      "--inboundPort",
      at(o.bindAddress, o.inboundPort),
      this.mtls ? listenTcp(this.mtls, o.inboundPort, o.bindAddress).then((port) => ({ port })) : listen(this.inbound.server, o.inboundPort, o.bindAddress),
    );
    const outbound = await bindNamed(
      "--outboundPort",
      at(o.outboundBindAddress, o.outboundPort),
      this.capturedOutbound
        ? listenTcp(this.capturedOutbound, o.outboundPort, o.outboundBindAddress).then((port) => ({ port }))
        : listen(this.outbound.server, o.outboundPort, o.outboundBindAddress),
    );
    const status = this.status
      ? await bindNamed("--statusPort", at(o.bindAddress, o.statusPort), listen(this.status, o.statusPort, o.bindAddress))
      : { port: 0 };
    const tcp = this.tcp ? await bindNamed("--tcpPort", at(o.bindAddress, o.tcpPort), listenTcp(this.tcp, o.tcpPort!, o.bindAddress)) : -1;
    this.addresses = { inbound: inbound.port, outbound: outbound.port, admin: admin.port, status: status.port, tcp };
    return this.addresses;
  }

  /** Stops accepting, lets requests in flight finish (up to `drainMs`), flushes reports, closes. */
  /** Rereads the configuration directory now (SIGHUP); a bad file keeps the last good configuration. */
  reloadConfiguration(): boolean {
    if (this.watcher instanceof XdsConfigSource) {
      this.log.info("the configuration comes from the control plane, which pushes every change: nothing to reread");
      return true;
    }
    return this.watcher.reloadNow();
  }

  async drain(drainMs: number): Promise<void> {
    this.draining = true;
    // server.close stops accepting but lets requests in flight finish.
    const closing = Promise.all([this.inbound.server, this.outbound.server].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    this.tcp?.server.close();
    this.mtls?.close();
    this.capturedOutbound?.close();
    for (const server of [this.inbound.server, this.outbound.server]) server.closeIdleConnections();
    const deadline = Date.now() + drainMs;
    while (this.inbound.stats.active + this.outbound.stats.active > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    for (const server of [this.inbound.server, this.outbound.server]) server.closeAllConnections();
    await closing;
    this.watcher.stop();
    // The filter sends its last report batches and waits (bounded) for the hub to take them.
    await this.filter.close();
    this.inbound.close();
    this.outbound.close();
    this.outliers.close();
    this.extAuthz.close();
    this.admin.closeAllConnections();
    await closeServer(this.admin);
    if (this.status) await closeServer(this.status);
  }

  private apply(config: LoadedConfig): boolean {
    let policy: SecurityPolicy | undefined;
    if (this.options.security) {
      try {
        policy = this.buildPolicy(config);
      } catch (e) {
        this.configErrors++;
        this.scopes.validation.error(`security configuration refused: ${(e as Error).message}; keeping the last good one`);
        return false;
      }
    }
    if (!this.filter.configure(config.plugin)) {
      this.configErrors++;
      this.scopes.validation.error(`configuration refused by the filter; keeping the last good one (files: ${config.files.join(", ")})`);
      return false;
    }
    this.loaded = config;
    if (this.capturedOutbound) {
      const endpoints = [...(this.options.security?.endpoints.values() ?? [])].map((e) => ({
        address: e.address.host,
        port: e.address.port,
        protocol: "http",
      }));
      this.captureRegistry = { services: buildRegistry(config.mesh.byKind, { domain: this.options.meshDomain }).services, endpoints };
    }
    if (policy) {
      this.policy = policy;
      const m = policy.serverMode;
      this.log.info(
        `security applied: inbound port ${policy.identity.containerPort} mTLS ${m.mode} (${m.scope}${m.policy ? ` ${m.policy}` : ""})${m.ignoredPortLevel ? `; portLevelMtls of ${m.ignoredPortLevel} ignored: port bound to no service` : ""}`,
      );
    }
    this.configApplied++;
    for (const w of config.bundle.warnings) this.log.warn(w);
    for (const w of config.mesh.warnings) this.log.warn(formatConfigProblem(w));
    this.scopes.model.info(`configuration applied from ${config.files.length} file(s)`);
    if (this.scopes.model.enabled("debug")) {
      const kinds = Object.entries(config.mesh.byKind)
        .filter(([, list]) => list.length > 0)
        .map(([kind, list]) => `${kind}=${list.length}`);
      this.scopes.model.debug(`configuration model: ${config.documents.length} document(s); ${kinds.join(" ") || "no mesh resources"}`);
    }
    return true;
  }

  private buildPolicy(config: LoadedConfig): SecurityPolicy {
    const sec = this.options.security!;
    const pod = config.mesh.byKind.Pod.find((p) => p.name === sec.name && p.namespace === sec.namespace);
    const ports = pod ? pod.spec.containers.flatMap((c) => c.ports) : [];
    const workload: Workload = Object.freeze({
      name: sec.name,
      namespace: sec.namespace,
      labels: sec.labels ?? pod?.labels ?? {},
      serviceAccount: sec.serviceAccount,
      ports: ports.some((p) => p.containerPort === sec.containerPort) ? ports : [...ports, { containerPort: sec.containerPort, protocol: "TCP" as const }],
      sidecar: true,
    });
    // A CUSTOM policy naming no external authorizer of the mesh config is refused, naming spec.provider.name.
    checkProviders(config.mesh, sec.mesh.extensionProviders);
    return new SecurityPolicy(
      config.mesh,
      sec.mesh,
      { workload, containerPort: sec.containerPort, gateway: sec.gateway },
      sec.endpoints,
      sec.jwks,
      sec.clockSkewSeconds,
      Math.random,
      (cluster, endpoint) => this.outliers.ejected(cluster, endpoint),
      this.extAuthz,
    );
  }

  private bump(name: string): void {
    this.securityStats.set(name, (this.securityStats.get(name) ?? 0) + 1);
  }

  // The outbound listener's properties per destination host: one frozen
  // object for all of a host's requests, which also lets the filter's host
  // reuse their serialized answers (RequestProperties.answersKey); past the
  // bound a new host gets an object of its own each time.
  private readonly outboundPropertiesByHost = new Map<string, Readonly<Record<string, string>>>();

  private outboundProperties(host: string): Readonly<Record<string, string>> {
    let known = this.outboundPropertiesByHost.get(host);
    if (known === undefined) {
      known = Object.freeze({ "mesh.destination_service": host });
      if (this.outboundPropertiesByHost.size < OUTBOUND_PROPERTIES_KEPT) this.outboundPropertiesByHost.set(host, known);
    }
    return known;
  }

  /** Original destinations of the inbound listener's connections, read once per connection. */
  private readonly inboundDestinations = new WeakMap<Socket, Destination | null>();
  /** --appHost:--appPort, where every inbound request goes without capture. */
  private readonly appUpstream: { readonly host: string; readonly port: number };

  /**
   * Where an inbound request goes: a captured connection to the app on its
   * original destination (the pod's address and the port the peer called),
   * dialled from 127.0.0.6 as upstream's inbound passthrough does (the
   * capture rules leave that source alone); any other to --appHost:--appPort.
   */
  private inboundUpstream(socket: Socket): { host: string; port: number; localAddress?: string } {
    const source = this.options.originalDestination;
    if (!source) return this.appUpstream;
    // A TLS connection's destination is that of the TCP socket it wraps.
    const accepted = (socket as Socket & { _parent?: Socket | null })._parent ?? socket;
    let d = this.inboundDestinations.get(accepted);
    if (d === undefined) {
      d = source(accepted) ?? null;
      this.inboundDestinations.set(accepted, d);
    }
    return d ? { host: d.address, port: d.port, localAddress: INBOUND_PASSTHROUGH_SOURCE } : this.appUpstream;
  }

  /** The inbound security stage: mTLS identity, XFCC, JWT, authorization; every denial logged with its reason and counted. */
  private async inboundStage(req: IncomingMessage, headers: HeaderList): Promise<SecurityStageResult> {
    const policy = this.policy!;
    const socket = req.socket as TLSSocket;
    const r = await policy.inbound({ headers, socket }, socket, socket.encrypted ? this.options.security!.tls.localCertificate : undefined);
    const peer = `${socket.remoteAddress}:${socket.remotePort}`;
    if (this.scopes.authn.enabled("debug")) {
      this.scopes.authn.debug(
        `${req.method} ${req.url} from ${peer}: ${socket.encrypted ? "mutual TLS" : "plain text"} (peer authentication ${policy.serverMode.mode})${r.authn ? `, request authentication ${r.authn.outcome}` : ""}`,
      );
    }
    if (r.authn) this.bump(`jwt_authn.${r.authn.outcome}`);
    if (r.extAuthz) {
      const x = r.extAuthz;
      this.bump(`ext_authz.${x.outcome}`);
      if (x.error) this.log.warn(`ext_authz ${x.provider} ${x.outcome} for ${req.method} ${req.url} from ${peer}: ${x.error}`);
    }
    if (r.decision?.audited) {
      const a = r.decision.audited;
      this.bump("rbac.audited");
      this.scopes.rbac.info(`rbac audited ${req.method} ${req.url} from ${peer}: policy=${a.policy} rule=${a.ruleIndex}`);
    }
    const accessLogHint = r.decision?.audited !== undefined;
    if (r.decision) {
      const d = r.decision;
      this.bump(`rbac.${d.allowed ? "allowed" : "denied"}`);
      this.bump(`rbac.reason.${d.reason}`);
      if (d.policy) this.bump(`rbac.policy.${d.policy}.rule_${d.ruleIndex}.${d.allowed ? "allowed" : "denied"}`);
      const line = `rbac ${d.allowed ? "allowed" : "denied"} ${req.method} ${req.url} from ${peer}: reason=${d.reason} policy=${d.policy ?? "-"} rule=${d.ruleIndex ?? "-"} action=${d.action ?? "-"}`;
      if (d.allowed) this.scopes.rbac.debug(line);
      else this.scopes.rbac.info(line);
    }
    if (r.kind === "reply") {
      if (r.stage === "authn" && r.authn?.outcome === "denied")
        this.scopes.authn.info(`jwt_authn denied ${req.method} ${req.url} from ${peer}: ${r.authn.status} ${r.authn.body}`);
      return { kind: "reply", reply: r.reply, accessLogHint };
    }
    this.bump(socket.encrypted ? "inbound.mtls_requests" : "inbound.plaintext_requests");
    // A gateway's HTTPS is server-only TLS, not mesh mutual TLS.
    return {
      kind: "continue",
      headers: r.headers,
      properties: r.properties,
      mtls: socket.encrypted === true && !this.options.security!.gateway,
      accessLogHint,
    };
  }

  private routeOf(r: ReturnType<SecurityPolicy["outbound"]>): RouteDecision {
    this.bump(`route.${r.kind === "reply" ? `local_reply_${r.reply.status}` : r.route.split("|")[0] || "forward"}`);
    if (r.served) this.recordServed(r.served);
    if (r.kind === "reply") return { kind: "reply", reply: r.reply, delayMs: r.delayMs };
    const upstream = r.upstream && this.upstreamControl(r.upstream);
    if (!r.mtls) {
      if (r.endpoint) this.bump("outbound.plaintext");
      return { kind: "forward", host: r.host, port: r.port, actions: r.actions, upstream };
    }
    this.bump("outbound.mtls");
    const ep = r.endpoint!;
    return {
      kind: "forward",
      host: r.host,
      port: r.port,
      tls: this.options.security!.tls.clientOptions(ep.host, ep.servicePort, this.policy!.expectedIdentity(ep)),
      actions: r.actions,
      upstream,
    };
  }

  /** Connection-pool admission and outlier detection for one request to a cluster (docs/sidecar.md "Circuit breaking"). */
  private upstreamControl(u: UpstreamCluster): UpstreamControl | undefined {
    if (!u.connectionPool && !u.outlierDetection) return undefined;
    return {
      maxRequestsPerConnection: u.connectionPool?.maxRequestsPerConnection || undefined,
      admit: () => {
        const slot = this.pools.admit(u.cluster, u.connectionPool);
        if (slot === "overflow") {
          this.bump("upstream_rq_pending_overflow");
          return OVERFLOW_REPLY;
        }
        return slot.then((release) => (outcome) => {
          release();
          if (outcome === "cancelled") return;
          if (this.outliers.record(u.cluster, u.endpoint, u.size, u.outlierDetection, outcome)) {
            this.bump("outlier_detection.ejections_enforced_total");
            this.log.warn(`outlier detection: ${u.endpoint} of ${u.cluster} ejected after consecutive errors`);
          }
        });
      },
    };
  }

  /** Connection-pool counters and outlier state of the upstream clusters: kept across configuration reloads. */
  readonly pools = new ConnectionPools();
  readonly outliers: OutlierDetector;

  /** The last routes VirtualServices chose (newest last), for /config_dump and simulate. */
  readonly servedRoutes: Array<ServedRoute & { count: number }> = [];

  private recordServed(s: ServedRoute): void {
    const key = (x: ServedRoute) => `${x.virtualService}|${x.routeIndex}|${x.destination}`;
    const i = this.servedRoutes.findIndex((x) => key(x) === key(s));
    const count = i >= 0 ? this.servedRoutes.splice(i, 1)[0].count + 1 : 1;
    this.servedRoutes.push({ ...s, count });
    if (this.servedRoutes.length > 64) this.servedRoutes.shift();
  }

  private ready(): boolean {
    return this.loaded !== undefined && !this.draining && !this.healthCheckFailed;
  }

  /** envoy.admin.v3.ServerInfo.State: a failed health check reads DRAINING, as in Envoy. */
  private state(): ServerState {
    if (this.loaded === undefined) return "INITIALIZING";
    return this.draining || this.healthCheckFailed ? "DRAINING" : "LIVE";
  }

  /** Configurations refused since start (`config.errors`). */
  get rejectedConfigs(): number {
    return this.configErrors;
  }

  /** VirtualServices of the applied configuration. */
  get virtualServices(): number {
    return this.loaded?.mesh.byKind.VirtualService?.length ?? 0;
  }

  /** Upstream clusters with Envoy's names: `inbound|<port>||` for the app, `--cluster` names, `outbound|<port>||<host>` per `--endpoint`. */
  private clusterInfo(): ClusterInfo[] {
    const o = this.options;
    return [
      { name: `inbound|${o.appPort}||`, hosts: [{ address: o.appHost, port: o.appPort }] },
      ...(this.tcp ? [{ name: `inbound|${o.tcpAppPort}||tcp`, hosts: [{ address: o.appHost, port: o.tcpAppPort }] }] : []),
      ...[...o.clusters].map(([name, c]) => ({ name, hosts: (c.hosts ?? [c]).map((h) => ({ address: h.host, port: h.port })) })),
      ...[...(o.security?.endpoints.values() ?? [])].map((e) => ({
        name: clusterName(e.host, e.servicePort),
        hosts: [{ address: e.address.host, port: e.address.port }],
      })),
    ];
  }

  private listenerInfo(): ListenerInfo[] {
    const a = this.addresses;
    const o = this.options;
    const at = (name: string, port: number, address = o.bindAddress) => ({ name, address, port });
    return [
      at("inbound", a.inbound),
      at("outbound", a.outbound, o.outboundBindAddress),
      ...(this.tcp ? [at("tcp", a.tcp)] : []),
      at("admin", a.admin, o.adminBindAddress),
      ...(this.status ? [at("status", a.status)] : []),
    ];
  }

  /** The admin `/config_dump` (config_dump.ts). */
  private configDump(): unknown {
    return buildConfigDump({
      options: this.options,
      addresses: this.addresses,
      loaded: this.loaded,
      hasTcp: this.tcp !== undefined,
      hasStatus: this.status !== undefined,
      policy: this.policy,
      servedRoutes: this.servedRoutes,
    });
  }

  /** Every stat of /stats and which are gauges (the statsd sink's source). */
  statsSnapshot(): { values: Map<string, number | bigint>; gauges: ReadonlySet<string> } {
    return { values: this.stats(), gauges: GAUGE_STATS };
  }

  private stats(): Map<string, number | bigint> {
    const out = new Map<string, number | bigint>();
    for (const [name, value] of this.filter.metrics()) out.set(name, value);
    for (const [name, proxy] of [
      ["inbound", this.inbound],
      ["outbound", this.outbound],
    ] as const) {
      out.set(`listener.${name}.requests`, proxy.stats.requests);
      out.set(`listener.${name}.local_replies`, proxy.stats.localReplies);
      out.set(`listener.${name}.upstream_errors`, proxy.stats.upstreamErrors);
      out.set(`listener.${name}.active`, proxy.stats.active);
      for (const [reason, n] of Object.entries(proxy.stats.rejectedTargets)) out.set(`listener.${name}.rejected_targets.${reason}`, n);
      for (const [details, n] of Object.entries(proxy.stats.rejectedFraming)) out.set(`listener.${name}.rejected_framing.${details}`, n);
      const g = proxy.guard;
      out.set(`listener.${name}.connections`, g.open.connections);
      out.set(`listener.${name}.connections_refused`, g.stats.connectionsRefused);
      out.set(`listener.${name}.connections_evicted`, g.stats.connectionsEvicted);
      out.set(`listener.${name}.header_timeouts`, g.stats.headerTimeouts);
      out.set(`listener.${name}.idle_timeouts`, g.stats.idleTimeouts);
      out.set(`listener.${name}.requests_refused`, g.stats.requestsRefused);
      out.set(`listener.${name}.malformed_requests`, g.stats.malformedRequests);
    }
    if (this.tcp) {
      out.set("listener.tcp.connections", this.tcp.stats.connections);
      out.set("listener.tcp.denied", this.tcp.stats.denied);
      out.set("listener.tcp.active", this.tcp.stats.active);
    }
    for (const [name, value] of this.options.extraStats?.() ?? []) out.set(name, value);
    if (this.options.security) {
      for (const [name, value] of this.securityStats) out.set(name, value);
      if (this.mtls) {
        out.set("listener.inbound.tls_connections", this.mtls.stats.tls);
        out.set("listener.inbound.plaintext_connections", this.mtls.stats.plaintext);
        out.set("listener.inbound.tls_handshake_failures", this.mtls.stats.handshakeFailures);
      }
      out.set("workload_certificate.rotations", this.options.security.tls.rotations);
    }
    out.set("filter.vm_restarts", this.filter.restarts);
    if (this.options.safetyNet) out.set("server.uncaught_request_errors", this.options.safetyNet.caught);
    out.set("config.applied", this.configApplied);
    out.set("config.errors", this.configErrors);
    return out;
  }
}

/** Stats that go up and down (exported as gauges; every other stat is a counter). */
const GAUGE_STATS: ReadonlySet<string> = new Set(["listener.inbound.active", "listener.outbound.active", "listener.tcp.active"]);

function listenTcp(proxy: Pick<TcpProxy, "server">, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    proxy.server.once("error", reject);
    proxy.server.listen(port, host, () => resolve((proxy.server.address() as { port: number }).port));
  });
}

/** Destination hosts whose outbound properties object is kept (outboundProperties). */
const OUTBOUND_PROPERTIES_KEPT = 1024;

function hostOf(authority: string): string {
  if (authority.startsWith("[")) return authority.slice(0, authority.indexOf("]") + 1);
  const colon = authority.lastIndexOf(":");
  return colon >= 0 ? authority.slice(0, colon) : authority;
}

export { describeFilterProblem };
