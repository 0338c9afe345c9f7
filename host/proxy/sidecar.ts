import { type Server } from "node:http";
import { ConfigDirWatcher, type LoadedConfig, describeFilterProblem } from "../config/config_dir.ts";
import { formatConfigProblem } from "../config/problems.ts";
import { DEFAULT_PATH_NORMALIZATION } from "../security/authz/path.ts";
import { ExtAuthzClient } from "../security/authz/ext_authz.ts";
import type { ScopedLogger } from "../telemetry/logger.ts";
import { closeServer } from "../telemetry/http_listen.ts";
import { sidecarAdminServers } from "./sidecar_admin.ts";
import type { ServerState } from "./admin_envoy.ts";
import { UpstreamLimits } from "./cluster/upstream_limits.ts";
import { buildConfigDump } from "./config_dump.ts";
import { Counters } from "./counters.ts";
import { FilterHost } from "./filters/filter_host.ts";
import { InboundSecurity } from "./filters/inbound_security.ts";
import { InboundSecurityFilter, OutboundSecurityFilter } from "./filters/security_filter.ts";
import { TcpProxy } from "./filters/tcp_proxy.ts";
import { HttpConnectionManager } from "./http/connection_manager.ts";
import { ConnectionStage } from "./listener/connection.ts";
import { bindListener } from "./listener/listeners.ts";
import type { MtlsListener } from "./listener/mtls_listener.ts";
import { inboundTransport } from "./listener/inbound_transport.ts";
import { AppRouter, MeshRouter, PlainOutboundRouter, ServedRoutes } from "./router/router.ts";
import { RouteTable } from "./router/routes.ts";
import { GAUGE_STATS, clusterInfo, listenerInfo, sidecarStats } from "./sidecar_stats.ts";
import { type AppliedChain, buildChain, captureRegistry } from "./chain.ts";
import type { CaptureRegistry } from "./listener/capture_routing.ts";
import type { CapturedInboundListener } from "./listener/captured_inbound.ts";
import type { CapturedOutboundListener, CapturedUpstream } from "./listener/captured_outbound.ts";
import { captureStages } from "./listener/capture_stages.ts";
import { DestinationProperties } from "./filters/destination_properties.ts";
import type { SidecarAddresses, SidecarOptions } from "./sidecar_options.ts";
import { XdsConfigSource } from "./xds_config.ts";

export { DEFAULT_ADMIN_PORT, DEFAULT_INBOUND_PORT, DEFAULT_OUTBOUND_PORT } from "./defaults.ts";
/** The stable first stdout line tests and tools read the bound ports from. */
export const LISTENING_LINE_PREFIX = "disco-agent listening ";

export type { SidecarAddresses, SidecarOptions, SidecarSecurityOptions } from "./sidecar_options.ts";

/**
 * The Node sidecar: inbound listener in front of the local app, outbound
 * listener for the app's calls, the filter module on both, configuration
 * from a watched directory, and the admin port.
 */
export class Sidecar {
  private readonly log: ScopedLogger;
  private readonly filter: FilterHost;
  private readonly inbound: HttpConnectionManager;
  private readonly outbound: HttpConnectionManager;
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
  /** The applied configuration's inbound security (security path only), for /config_dump. */
  private security: InboundSecurity | undefined;
  /** The stages that take each applied configuration (security path only). */
  private readonly inboundSecurity: InboundSecurityFilter | undefined;
  private readonly routers: MeshRouter[] = [];
  private routeTable: RouteTable | undefined;
  /** The log scopes of spec 2 whose concern lives here (docs/daemon-reference.md "Log scopes"). */
  private readonly scopes: Record<"rbac" | "authn" | "sds" | "model" | "validation", ScopedLogger>;
  private readonly counters = new Counters();
  /** Connection-pool counters and outlier state of the upstream clusters: kept across configuration reloads. */
  private readonly limits: UpstreamLimits;
  private readonly served = new ServedRoutes();
  /** Original destinations of the connections the inbound and outbound listeners accept. */
  private readonly inboundConnections: ConnectionStage;
  private readonly outboundConnections: ConnectionStage;
  /** The outbound listener's capture stage: redirected connections routed by their original destination. */
  private capturedOutbound: CapturedOutboundListener | undefined;
  /** The inbound listener's capture stage: redirected TCP (not HTTP) connections proxied to the app's port. */
  private capturedInbound: CapturedInboundListener | undefined;
  private captureRegistry: CaptureRegistry = { services: [] };
  /** The external authorizers of CUSTOM policies, reached through the `--endpoint` registry (the service name itself otherwise). */
  private readonly extAuthz = new ExtAuthzClient((service, port) => {
    const ep = [...(this.options.security?.endpoints.values() ?? [])].find((e) => e.host === service && e.servicePort === port);
    return ep ? { host: ep.address.host, port: ep.address.port } : { host: service, port };
  });
  addresses: SidecarAddresses = { inbound: 0, outbound: 0, admin: 0, status: 0, tcp: -1 };

  constructor(private readonly options: SidecarOptions) {
    this.log = options.logger.scope("default");
    this.scopes = {
      rbac: options.logger.scope("rbac"),
      authn: options.logger.scope("authn"),
      sds: options.logger.scope("sds"),
      model: options.logger.scope("model"),
      validation: options.logger.scope("validation"),
    };
    this.limits = new UpstreamLimits(this.counters, this.log, options.onOutlierEvent);
    this.inboundConnections = new ConnectionStage(options.originalDestination);
    this.outboundConnections = new ConnectionStage(options.originalDestination);
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
    const sec = options.security;
    const destinations = new DestinationProperties();
    const meshRouter = (direction: "outbound" | "gateway") => {
      const r = new MeshRouter(direction, options.clusters, sec!.tls, this.limits, this.counters, this.served);
      this.routers.push(r);
      return r;
    };
    this.inboundSecurity = sec
      ? new InboundSecurityFilter(sec.tls, sec.gateway, this.counters, { default: this.log, authn: this.scopes.authn, rbac: this.scopes.rbac })
      : undefined;
    this.inbound = new HttpConnectionManager({
      name: "inbound",
      filter: this.filter,
      router: sec?.gateway ? meshRouter("gateway") : new AppRouter({ host: options.appHost, port: options.appPort }),
      properties: () => inboundProperties,
      onLog: proxyLog,
      pathNormalization,
      limits: options.limits,
      onAccess: options.onAccess,
      safetyNet: options.safetyNet,
      acceptedElsewhere: sec !== undefined,
      connections: this.inboundConnections,
      ...(this.inboundSecurity ? { security: this.inboundSecurity } : {}),
    });
    this.outbound = new HttpConnectionManager({
      name: "outbound",
      filter: this.filter,
      router: sec ? meshRouter("outbound") : new PlainOutboundRouter(options.clusters),
      properties: (authority) => destinations.forAuthority(authority),
      onLog: proxyLog,
      pathNormalization,
      limits: options.limits,
      onAccess: options.onAccess,
      safetyNet: options.safetyNet,
      connections: this.outboundConnections,
      ...(sec ? { security: new OutboundSecurityFilter() } : {}),
    });
    this.mtls = sec
      ? inboundTransport({
          http: this.inbound.server,
          guard: this.inbound.guard,
          onLog: proxyLog,
          sds: this.scopes.sds,
          ...(sec.gateway
            ? { gatewayServers: () => this.routeTable?.gatewayTls() ?? [] }
            : { tls: sec.tls, serverMode: () => this.security?.serverMode.mode ?? "STRICT" }),
        })
      : undefined;
    // Traffic capture: each redirected connection routed by its original destination (listener/capture_stages.ts).
    if (options.originalDestination) {
      ({ outbound: this.capturedOutbound, inbound: this.capturedInbound } = captureStages({
        outboundHttp: this.outbound.server,
        outboundConnections: this.outboundConnections,
        inboundNext: this.mtls?.server ?? this.inbound.server,
        inboundHttpBehindTls: this.mtls !== undefined,
        inboundHttp: this.inbound.server,
        inboundConnections: this.inboundConnections,
        gateway: sec?.gateway === true,
        registry: () => this.captureRegistry,
        outboundTrafficPolicy: () => sec?.mesh.outboundTrafficPolicy ?? "ALLOW_ANY",
        plaintextAllowed: () => !sec || this.security?.serverMode.mode !== "STRICT",
        ...(sec && !sec.gateway ? { inboundTls: () => sec.tls.serverOptions(), outboundUpstream: (s) => this.capturedUpstream(s) } : {}),
        onLog: proxyLog,
      }));
      if (sec && !sec.gateway) {
        const previous = sec.tls.options.onRotated;
        sec.tls.options.onRotated = (c) => {
          previous?.(c);
          this.capturedInbound?.refresh();
        };
      }
    }
    if (options.tcpPort >= 0) {
      this.tcp = new TcpProxy({
        filter: this.filter,
        upstream: { host: options.appHost, port: options.tcpAppPort },
        onLog: proxyLog,
        safetyNet: options.safetyNet,
      });
    }
    ({ admin: this.admin, status: this.status } = sidecarAdminServers({
      options,
      configDump: () => this.configDump(),
      stats: () => this.stats(),
      ready: () => this.ready(),
      state: () => this.state(),
      startedAt: this.startedAt,
      clusters: () => this.clusterInfo(),
      listeners: () => this.listenerInfo(),
      setHealthCheckFailed: (failed) => {
        if (failed !== this.healthCheckFailed) this.log.info(failed ? "/healthcheck/fail: readiness now fails" : "/healthcheck/ok: readiness restored");
        this.healthCheckFailed = failed;
      },
    }));
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

  /** Loads the configuration and opens every listener; throws when the first configuration is unusable, or a ListenerBindError naming the port's flag. */
  async start(): Promise<SidecarAddresses> {
    if (!(await this.watcher.start()))
      throw new Error(
        `no usable configuration from ${this.options.discovery ? `the control plane at ${this.options.discovery.address}` : this.options.configDir}`,
      );
    const o = this.options;
    const admin = await bindListener({ flag: "--proxyAdminPort", address: o.adminBindAddress, port: o.adminPort, server: this.admin });
    const inbound = await bindListener({
      flag: "--inboundPort",
      address: o.bindAddress,
      port: o.inboundPort,
      server: this.capturedInbound?.server ?? this.mtls?.server ?? this.inbound.server,
    });
    const outbound = await bindListener({
      flag: "--outboundPort",
      address: o.outboundBindAddress,
      port: o.outboundPort,
      server: this.capturedOutbound?.server ?? this.outbound.server,
    });
    const status = this.status ? await bindListener({ flag: "--statusPort", address: o.bindAddress, port: o.statusPort, server: this.status }) : 0;
    const tcp = this.tcp ? await bindListener({ flag: "--tcpPort", address: o.bindAddress, port: o.tcpPort, server: this.tcp.server }) : -1;
    this.addresses = { inbound, outbound, admin, status, tcp };
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
    this.capturedInbound?.close();
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
    this.limits.close();
    this.extAuthz.close();
    this.admin.closeAllConnections();
    await closeServer(this.admin);
    if (this.status) await closeServer(this.status);
  }

  /** Captured TCP to a registry service port: the endpoint and client TLS the cluster manager gives HTTP (round robin, auto mutual TLS). */
  private capturedUpstream(service: { fqdn: string; port: number }): CapturedUpstream | string | undefined | null {
    const clusters = this.routeTable?.clusters;
    const tls = this.options.security?.tls;
    if (!clusters || !tls) return null;
    const ep = clusters.pick(service.fqdn, service.port);
    if (!ep) return undefined;
    const c = clusters.connect(ep);
    if (c.kind === "reply") return c.reply.body;
    if (!c.mtls) return { address: c.host, port: c.port };
    return { address: c.host, port: c.port, tls: tls.clientOptions(ep.host, ep.servicePort, clusters.expectedIdentity(ep)) };
  }

  private apply(config: LoadedConfig): boolean {
    let chain: AppliedChain | undefined;
    if (this.options.security) {
      try {
        chain = buildChain(config, this.options.security, this.limits.outliers, this.extAuthz);
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
    if (this.capturedOutbound || this.capturedInbound)
      this.captureRegistry = captureRegistry(config, this.options.security?.endpoints.values() ?? [], this.options.meshDomain);
    if (chain) {
      this.security = chain.security;
      this.routeTable = chain.routes;
      this.inboundSecurity?.configure(chain.security);
      for (const r of this.routers) r.configure(chain.routes);
      const m = chain.security.serverMode;
      this.log.info(
        `security applied: inbound port ${chain.security.identity.containerPort} mTLS ${m.mode} (${m.scope}${m.policy ? ` ${m.policy}` : ""})${m.ignoredPortLevel ? `; portLevelMtls of ${m.ignoredPortLevel} ignored: port bound to no service` : ""}`,
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
  private clusterInfo() {
    const o = this.options;
    return clusterInfo({
      appHost: o.appHost,
      appPort: o.appPort,
      ...(this.tcp ? { tcpAppPort: o.tcpAppPort } : {}),
      clusters: o.clusters,
      endpoints: o.security?.endpoints.values() ?? [],
    });
  }

  private listenerInfo() {
    const a = this.addresses;
    const o = this.options;
    return listenerInfo(o, [
      ["inbound", a.inbound],
      ["outbound", a.outbound],
      ...(this.tcp ? [["tcp", a.tcp] as const] : []),
      ["admin", a.admin],
      ...(this.status ? [["status", a.status] as const] : []),
    ]);
  }

  /** The admin `/config_dump` (config_dump.ts). */
  private configDump(): unknown {
    return buildConfigDump({
      options: this.options,
      addresses: this.addresses,
      loaded: this.loaded,
      hasTcp: this.tcp !== undefined,
      hasStatus: this.status !== undefined,
      policy: this.security,
      servedRoutes: this.served.list,
    });
  }

  /** Every stat of /stats and which are gauges (the statsd sink's source). */
  statsSnapshot(): { values: Map<string, number | bigint>; gauges: ReadonlySet<string> } {
    return { values: this.stats(), gauges: GAUGE_STATS };
  }

  private stats(): Map<string, number | bigint> {
    const sec = this.options.security;
    return sidecarStats({
      filter: this.filter,
      inbound: this.inbound,
      outbound: this.outbound,
      tcp: this.tcp,
      extraStats: this.options.extraStats,
      ...(sec ? { security: { counters: this.counters, mtls: this.mtls, rotations: sec.tls.rotations } } : {}),
      safetyNet: this.options.safetyNet,
      captured: { outbound: this.capturedOutbound?.stats, inbound: this.capturedInbound?.stats },
      configApplied: this.configApplied,
      configErrors: this.configErrors,
    });
  }
}

export { describeFilterProblem };
