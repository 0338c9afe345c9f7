import { createServer, type Server } from "node:http";
import { formatConfigProblem } from "../config/problems.ts";
import type { PatternChecks } from "../config/resources/hub_client.ts";
import type { Logger, ScopedLogger } from "../telemetry/logger.ts";
import { closeServer, listen } from "../telemetry/http_listen.ts";
import { createAdminServer } from "./admin.ts";
import { ConfigDirWatcher, type LoadedConfig, describeFilterProblem } from "./config_dir.ts";
import { FilterHost } from "./filter_host.ts";
import type { HubCaller } from "../hub/transport.ts";
import { HttpProxy } from "./http_proxy.ts";
import { TcpProxy } from "./tcp_proxy.ts";

/** Default ports, as the seed's agent and upstream meshes use them. */
export const DEFAULT_ADMIN_PORT = 15000;
export const DEFAULT_INBOUND_PORT = 15006;
export const DEFAULT_OUTBOUND_PORT = 15001;
/** The stable first stdout line tests and tools read the bound ports from. */
export const LISTENING_LINE_PREFIX = "disco-agent listening ";

export interface SidecarOptions {
  wasm: string;
  configDir: string;
  bindAddress: string;
  inboundPort: number;
  outboundPort: number;
  adminPort: number;
  /** 0 = no status listener. */
  statusPort: number;
  /** TCP listener in front of the app's TCP port (TcpClientConfig); -1 = none. */
  tcpPort: number;
  tcpAppPort: number;
  appHost: string;
  appPort: number;
  /** Named upstreams: hub clusters and outbound services (`name` → host:port). */
  clusters: Map<string, { host: string; port: number }>;
  /** Service the inbound listener fronts (selects its ServiceConfig); "" = let the filter decide. */
  inboundService: string;
  hub: HubCaller;
  checks: PatternChecks;
  logger: Logger;
  /** What /config_dump shows besides the filter configuration. */
  identity: Record<string, string>;
  /** More counters for /stats (e.g. the hub transport's). */
  extraStats?: () => Map<string, number>;
}

export interface SidecarAddresses {
  inbound: number;
  outbound: number;
  admin: number;
  status: number;
  /** -1 when there is no TCP listener. */
  tcp: number;
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
  private readonly watcher: ConfigDirWatcher;
  private loaded: LoadedConfig | undefined;
  private configErrors = 0;
  private configApplied = 0;
  private draining = false;
  private readonly tcp: TcpProxy | undefined;
  addresses: SidecarAddresses = { inbound: 0, outbound: 0, admin: 0, status: 0, tcp: -1 };

  constructor(private readonly options: SidecarOptions) {
    this.log = options.logger.scope("default");
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
    this.inbound = new HttpProxy({
      name: "inbound",
      filter: this.filter,
      upstream: () => ({ host: options.appHost, port: options.appPort }),
      properties: (): Record<string, string> => (options.inboundService ? { "mesh.destination_service": options.inboundService } : {}),
      onLog: proxyLog,
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
      properties: (authority) => ({ "mesh.destination_service": hostOf(authority) }),
      onLog: proxyLog,
    });
    if (options.tcpPort >= 0) {
      this.tcp = new TcpProxy({ filter: this.filter, upstream: { host: options.appHost, port: options.tcpAppPort }, onLog: proxyLog });
    }
    this.admin = createAdminServer({
      configDump: () => this.configDump(),
      stats: () => this.stats(),
      ready: () => this.loaded !== undefined && !this.draining,
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
        const ok = this.loaded !== undefined && !this.draining;
        res.writeHead(req.url === "/healthz/ready" && ok ? 200 : req.url === "/healthz/ready" ? 503 : 404).end();
      });
    }
    this.watcher = new ConfigDirWatcher(options.configDir, options.checks, (c) => this.apply(c), (problem) => {
      this.configErrors++;
      this.log.error(problem);
    });
  }

  /** Loads the configuration and opens every listener; throws when the first configuration is unusable. */
  async start(): Promise<SidecarAddresses> {
    if (!this.watcher.start()) throw new Error(`no usable configuration in ${this.options.configDir}`);
    const o = this.options;
    const admin = await listen(this.admin, o.adminPort, o.bindAddress);
    const inbound = await listen(this.inbound.server, o.inboundPort, o.bindAddress);
    const outbound = await listen(this.outbound.server, o.outboundPort, o.bindAddress);
    const status = this.status ? await listen(this.status, o.statusPort, o.bindAddress) : { port: 0 };
    const tcp = this.tcp ? await listenTcp(this.tcp, o.tcpPort, o.bindAddress) : -1;
    this.addresses = { inbound: inbound.port, outbound: outbound.port, admin: admin.port, status: status.port, tcp };
    return this.addresses;
  }

  /** Stops accepting, lets requests in flight finish (up to `drainMs`), flushes reports, closes. */
  async drain(drainMs: number): Promise<void> {
    this.draining = true;
    // server.close stops accepting but lets requests in flight finish.
    const closing = Promise.all([this.inbound.server, this.outbound.server].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    this.tcp?.server.close();
    for (const server of [this.inbound.server, this.outbound.server]) server.closeIdleConnections();
    const deadline = Date.now() + drainMs;
    while (this.inbound.stats.active + this.outbound.stats.active > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    for (const server of [this.inbound.server, this.outbound.server]) server.closeAllConnections();
    await closing;
    this.watcher.stop();
    this.filter.close();
    // Give the last report batch a moment to reach the hub.
    await new Promise((r) => setTimeout(r, 200));
    this.inbound.close();
    this.outbound.close();
    this.admin.closeAllConnections();
    await closeServer(this.admin);
    if (this.status) await closeServer(this.status);
  }

  private apply(config: LoadedConfig): boolean {
    if (!this.filter.configure(config.plugin)) {
      this.configErrors++;
      this.log.error(`configuration refused by the filter; keeping the last good one (files: ${config.files.join(", ")})`);
      return false;
    }
    this.loaded = config;
    this.configApplied++;
    for (const w of config.bundle.warnings) this.log.warn(w);
    for (const w of config.mesh.warnings) this.log.warn(formatConfigProblem(w));
    this.log.info(`configuration applied from ${config.files.length} file(s)`);
    return true;
  }

  /**
   * The admin `/config_dump`: identity, listeners (filters in order and their
   * upstream), routes, clusters with their endpoints, secrets, and the
   * configuration (files, the filter's plugin JSON, and the security,
   * networking and orchestrator resources of the directory grouped by kind,
   * as decoded). meshctl proxy-config, authn tls-check and authz check read it.
   */
  private configDump(): unknown {
    const o = this.options;
    const a = this.addresses;
    const app = `${o.appHost}:${o.appPort}`;
    const hubClusters = new Set(["hub_server", this.loaded?.bundle.clientConfig?.transport?.checkCluster, this.loaded?.bundle.clientConfig?.transport?.reportCluster]);
    const services = [...o.clusters].filter(([name]) => !hubClusters.has(name));
    const listener = (name: string, port: number, protocol: "HTTP" | "TCP", direction: string, filters: string[], upstream?: string) =>
      ({ name, address: o.bindAddress, port, protocol, direction, filters, ...(upstream ? { upstream } : {}) });
    const mesh = this.loaded?.mesh;
    // The workload's labels: given with the identity, else those of the Pod document named by the identity (`<pod>.<namespace>`).
    const pod = mesh?.byKind.Pod.find((p) => `${p.name}.${p.namespace}` === o.identity.id);
    const labels = (o.identity as { labels?: Record<string, string> }).labels ?? pod?.labels;
    return {
      identity: { ...o.identity, ...(labels ? { labels } : {}) },
      listeners: {
        inbound: { ...listener("inbound", a.inbound, "HTTP", "INBOUND", ["mesh.hub_client", "mesh.router"], app), ...(o.inboundService ? { service: o.inboundService } : {}), route: "inbound" },
        outbound: { ...listener("outbound", a.outbound, "HTTP", "OUTBOUND", ["mesh.hub_client", "mesh.router"]), upstream: "per authority: the --cluster named by the Host header, else the Host itself", route: "outbound" },
        ...(this.tcp ? { tcp: listener("tcp", a.tcp, "TCP", "INBOUND", ["mesh.hub_client", "mesh.tcp_proxy"], `${o.appHost}:${o.tcpAppPort}`) } : {}),
        admin: listener("admin", a.admin, "HTTP", "ADMIN", ["mesh.admin"]),
        ...(this.status ? { status: listener("status", a.status, "HTTP", "ADMIN", ["mesh.health"]) } : {}),
      },
      routes: [
        { name: "inbound", listener: "inbound", virtualHosts: [{ name: o.inboundService || "inbound", domains: ["*"], upstream: app }] },
        {
          name: "outbound",
          listener: "outbound",
          virtualHosts: [
            ...services.map(([name, c]) => ({ name, domains: [name, `${name}:*`], upstream: `${c.host}:${c.port}` })),
            { name: "passthrough", domains: ["*"], upstream: "the Host header's address (port 80 when none)" },
          ],
        },
      ],
      clusters: Object.fromEntries([...o.clusters].map(([k, v]) => [k, `${v.host}:${v.port}`])),
      endpoints: [
        { cluster: "inbound|app", endpoints: [{ address: o.appHost, port: o.appPort, health: "UNKNOWN" }] },
        ...(this.tcp ? [{ cluster: "inbound|tcp", endpoints: [{ address: o.appHost, port: o.tcpAppPort, health: "UNKNOWN" }] }] : []),
        ...[...o.clusters].map(([cluster, c]) => ({ cluster, endpoints: [{ address: c.host, port: c.port, health: "UNKNOWN" }] })),
      ],
      secrets: { certificates: [], note: "none: this sidecar holds no certificates yet (no mutual TLS termination or origination)" },
      configuration: {
        files: this.loaded?.files ?? [],
        filter: this.loaded ? JSON.parse(this.loaded.plugin) : null,
        module: o.wasm,
        resources: Object.fromEntries(
          Object.entries(mesh?.byKind ?? {})
            .filter(([, list]) => list.length > 0)
            .map(([kind, list]) => [kind, list.map((r) => ({ name: r.name, namespace: r.namespace, labels: r.labels, annotations: r.annotations, file: r.origin.file, spec: r.spec }))]),
        ),
        enforced: false,
      },
    };
  }

  private stats(): Map<string, number | bigint> {
    const out = new Map<string, number | bigint>();
    for (const [name, value] of this.filter.metrics()) out.set(name, value);
    for (const [name, proxy] of [["inbound", this.inbound], ["outbound", this.outbound]] as const) {
      out.set(`listener.${name}.requests`, proxy.stats.requests);
      out.set(`listener.${name}.local_replies`, proxy.stats.localReplies);
      out.set(`listener.${name}.upstream_errors`, proxy.stats.upstreamErrors);
      out.set(`listener.${name}.active`, proxy.stats.active);
    }
    if (this.tcp) {
      out.set("listener.tcp.connections", this.tcp.stats.connections);
      out.set("listener.tcp.denied", this.tcp.stats.denied);
      out.set("listener.tcp.active", this.tcp.stats.active);
    }
    for (const [name, value] of this.options.extraStats?.() ?? []) out.set(name, value);
    out.set("filter.vm_restarts", this.filter.restarts);
    out.set("config.applied", this.configApplied);
    out.set("config.errors", this.configErrors);
    return out;
  }
}

function listenTcp(proxy: TcpProxy, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    proxy.server.once("error", reject);
    proxy.server.listen(port, host, () => resolve((proxy.server.address() as { port: number }).port));
  });
}

function hostOf(authority: string): string {
  if (authority.startsWith("[")) return authority.slice(0, authority.indexOf("]") + 1);
  const colon = authority.lastIndexOf(":");
  return colon >= 0 ? authority.slice(0, colon) : authority;
}

export { describeFilterProblem };
