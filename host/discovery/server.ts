import { bindNamed } from "../daemon/bind.ts";
import { readFileSync } from "node:fs";
import { createServer, type Server as HttpServer } from "node:http";
import { hostname } from "node:os";
import * as grpc from "@grpc/grpc-js";
import type { PatternChecks } from "../config/resources/hub_client.ts";
import type { InjectionSettings } from "../inject/settings.ts";
import type { TlsFiles } from "../security/mtls/cert_files.ts";
import { ConfigDirWatcher, type LoadedConfig } from "../config/config_dir.ts";
import { buildInfo } from "../daemon/version.ts";
import { type CtrlzServer, startCtrlz } from "../telemetry/ctrlz.ts";
import type { Logger, ScopedLogger } from "../telemetry/logger.ts";
import { type MonitoringServer, startMonitoring } from "../telemetry/monitoring_server.ts";
import { serveProfiling } from "../telemetry/profiling.ts";
import { closeServer, listen } from "../telemetry/http_listen.ts";
import { shutdownGrpcServer } from "../wire/raw_grpc.ts";
import { ENVOY_PROTO_INCLUDE_DIRS, envoyProtos } from "../wire/envoy_protos.ts";
import { addGrpcIntrospection, type ServingHealth } from "../wire/grpc_introspection.ts";
import { AggregatedDiscoveryService, type StreamAccess } from "./ads_server.ts";
import type { DiscoveryObserver } from "./observer.ts";
import { Debouncer } from "./debounce.ts";
import type { EnvoyServing } from "./envoy_sidecar.ts";
import type { ModuleSource } from "./envoy_wasm.ts";
import { DiscoveryMetrics } from "./metrics.ts";
import { type WebhookServer, startWebhooks } from "./webhook_server.ts";
import { grpcBindAddress, type ListenAddress } from "./listen_address.ts";
import { type SecureXdsSettings, secureXds } from "./secure_xds.ts";
import { addCertificateRelay, RelayMetrics } from "./certificate_relay.ts";
import { type MeshSnapshot, meshSnapshot, resourcesFor } from "./mesh_snapshot.ts";
import { type ResourceVersion, DistributionLedger, ResourceVersioning } from "./distribution.ts";
import { changedKinds, isEndpointChange } from "./push_scope.ts";
import type { Resource } from "./resource_set.ts";
import { CONFIG_DOCUMENT, SHORT_TYPE } from "./type_urls.ts";
import { emptyClusters, endpointReport } from "./endpoint_report.ts";

import { debugPage } from "./debug_pages.ts";
import { type ExtensionProviders, NO_EXTENSION_PROVIDERS, unknownProviderProblems } from "../config/extension_providers.ts";
import { formatConfigProblem } from "../config/problems.ts";

export interface DiscoveryOptions {
  configDir: string;
  grpc?: ListenAddress;
  /**
   * `--secureGrpcAddr`: xDS over mutual TLS with disco-discovery's mesh_ca
   * certificate, and CreateCertificate relayed to mesh_ca at `caAddress`
   * (`--caAddress`; absent: refused as UNIMPLEMENTED).
   */
  secureGrpc?: { address: ListenAddress; tls: SecureXdsSettings; caAddress?: string };
  http?: ListenAddress;
  /** `--profile`: `/debug/pprof/` (V8 CPU profiles, heap snapshots) on the `--httpAddr` debug port, as upstream serves it. */
  profiling?: boolean;
  /** `--monitoringAddr`: `/metrics` (the disco_* counters), `/ready`, `/version`. */
  monitoring?: ListenAddress;
  /** `--httpsAddr`: the validation and injection webhooks, served with disco-discovery's certificate. */
  https?: { address: ListenAddress; tls: TlsFiles; injection: InjectionSettings };
  /** `--trust-domain`: callers of the secure port must belong to it (default: the trust domain of disco-discovery's certificate); the trust domain of the identities Envoy's outbound mutual TLS checks (default `cluster.local`). */
  trustDomain?: string;
  /** `--domain`: the mesh's DNS domain (`cluster.local`); service hosts, clusters and API listeners are named `<svc>.<ns>.svc.<domain>`. */
  domain: string;
  rootNamespace: string;
  /** meshConfig `extensionProviders`: a CUSTOM policy naming none of its authorizers is refused (default: none). */
  extensionProviders?: ExtensionProviders;
  /** meshConfig `enableAutoMtls` (default true): Envoy's clusters originate mutual TLS to endpoints with a sidecar unless a DestinationRule says otherwise. */
  enableAutoMtls?: boolean;
  debounceAfterMs: number;
  debounceMaxMs: number;
  /** DISCO_ENABLE_EDS_DEBOUNCE (default true): false pushes an endpoint-only change at once. */
  edsDebounce?: boolean;
  /** DISCO_PUSH_THROTTLE (default 100): proxies pushed to per turn of the event loop. */
  pushThrottle?: number;
  /** DISCO_SCOPE_PUSHES (default true): push only to proxies whose view a change affects. */
  scopePushes?: boolean;
  /** What Envoy is served: the DI variables of EnvoyServing (DISCO_HTTP10, DISCO_ENABLE_PROTOCOL_SNIFFING_FOR_*, …; spec 2's defaults when unset). */
  serving?: Partial<EnvoyServing>;
  /** TERMINATION_DRAIN_DURATION_SECONDS as ms (default 5 s): how long open xDS streams may stay after close() before they are cut. */
  drainMs?: number;
  /** DISCO_ENABLE_CONFIG_DISTRIBUTION_TRACKING (default true): which proxy has which version of each resource (/debug/config_distribution, `meshctl x wait`). */
  distributionTracking?: boolean;
  /** DISCO_DISTRIBUTION_HISTORY_RETENTION as ms (default 1 min): how long a superseded configuration version can still be looked up. */
  distributionRetentionMs?: number;
  /** DISCO_DEBUG_ADSZ_CONFIG (default false): /debug/adsz also shows what each connection was last sent. */
  debugAdszConfig?: boolean;
  /** REVISION: the injection webhook injects only the pods labelled `mesh.io/rev: <revision>` (none: the pods without that label). */
  revision?: string;
  /** POD_NAME, POD_NAMESPACE: this instance, named in every response's control_plane identifier. */
  podName?: string;
  podNamespace?: string;
  /** MESH_GPRC_MAXRECVMSGSIZE, MESH_GPRC_MAXSTREAMS: limits of the xDS gRPC servers. */
  maxRecvMessageBytes?: number;
  maxStreams?: number;
  keepaliveIntervalMs: number;
  keepaliveTimeoutMs: number;
  /** `--keepaliveMaxServerConnectionAge`: connections are closed gracefully after this long; undefined: never. */
  maxConnectionAgeMs?: number;
  /** `--ctrlz_address`, `--ctrlz_port`: the ControlZ introspection page (log levels, connections, configuration). */
  ctrlz?: { address: string; port: number; logger: Logger };
  checks: PatternChecks;
  /** Where Envoy sidecars load the filter module from (default: the local file /etc/mesh/filter.wasm). */
  filterModule?: ModuleSource;
  log: ScopedLogger;
  /** The webhooks' log scope (`validationServer`); default `log`. */
  webhookLog?: ScopedLogger;
  /**
   * The other spec 2 scopes whose concern lives here (docs/daemon-reference.md
   * "Log scopes"): `model` (each configuration version's resources),
   * `validation` (documents refused), `rbac` (authorization policies),
   * `authn` (authentication policies, callers of --secureGrpcAddr),
   * `serverca` (certificate requests relayed to mesh_ca); default `log`.
   */
  scopes?: Partial<Record<"model" | "validation" | "rbac" | "authn" | "serverca", ScopedLogger>>;
  /** Told of every stream event and configuration change, besides the daemon's own counters. */
  observer?: DiscoveryObserver;
}

/** DISCO_DISTRIBUTION_HISTORY_RETENTION's default (1m0s). */
const DEFAULT_DISTRIBUTION_RETENTION_MS = 60_000;

/** TERMINATION_DRAIN_DURATION_SECONDS' default. */
const DEFAULT_DRAIN_MS = 5000;

/** Upstream's `--keepaliveMaxServerConnectionAgeGrace` default. */
const MAX_CONNECTION_AGE_GRACE_MS = 10_000;

/** Bound `host:port` of each listener that is on (the listening line). */
export interface DiscoveryListeners {
  grpc?: string;
  secureGrpc?: string;
  http?: string;
  monitoring?: string;
  https?: string;
  ctrlz?: string;
}

export interface DiscoveryServer {
  /** Bound addresses, `host:port`, of the listeners that are on. */
  readonly listeners: DiscoveryListeners;
  snapshot(): MeshSnapshot;
  ads: AggregatedDiscoveryService;
  metrics: DiscoveryMetrics;
  /** Rereads the configuration folder now (SIGHUP); false when it did not decode. */
  reload(): boolean;
  close(): Promise<void>;
}

/**
 * `disco-discovery discovery`: the configuration folder is read into the mesh
 * model and served over ADS; every change that decodes is pushed after the
 * debounce (the last good configuration stays when a file is refused).
 */
export async function startDiscovery(o: DiscoveryOptions): Promise<DiscoveryServer> {
  envoyProtos(); // load once, before the first stream
  let version = 0;
  let current: MeshSnapshot | undefined;
  let ready = false;
  const metrics = new DiscoveryMetrics();
  const relayMetrics = new RelayMetrics(metrics.registry);
  // Callers of --secureGrpcAddr refused for their certificate are an authentication concern (scope authn).
  const authnLog = o.scopes?.authn ?? o.log;
  const servercaLog = o.scopes?.serverca ?? o.log;
  const refusals: DiscoveryObserver = { refused: (peer, problem) => authnLog.warn(`xDS caller ${peer} refused: ${problem}`) };
  const observer = bothObservers(metrics.observer, bothObservers(refusals, o.observer ?? {}));
  const scoped = o.scopePushes ?? true;
  const identifier = JSON.stringify({
    Component: "disco-discovery",
    ID: o.podName ?? hostname(),
    ...(o.podNamespace ? { Namespace: o.podNamespace } : {}),
    Info: { version: buildInfo().version },
  });
  const tracking = o.distributionTracking ?? true;
  const ledger = new DistributionLedger(o.distributionRetentionMs ?? DEFAULT_DISTRIBUTION_RETENTION_MS);
  const versioning = new ResourceVersioning();
  let versions: ReadonlyMap<string, ResourceVersion> | undefined;
  const ads = new AggregatedDiscoveryService((node) => resourcesFor(current!, node, scoped), observer, {
    throttle: o.pushThrottle ?? 100,
    scoped,
    identifier,
    ...(tracking ? { configVersion: () => current!.version } : {}),
    keepSent: o.debugAdszConfig ?? false,
  });
  // The documents as of the last push: an endpoint-only change is judged against what proxies were last sent,
  // so a file caught half-written (an intermediate version) does not turn it into a config change.
  let pushedDocuments: ReadonlyMap<string, Resource> | undefined;
  const pushNow = (reason: string, changes: number, changedAt: number) => {
    observer.pushed?.(reason, changes);
    pushedDocuments = current!.all.get(CONFIG_DOCUMENT)!;
    ads.push(undefined, changedAt);
  };
  // Each change is timed from when it was applied, for disco_proxy_convergence_time.
  const push = new Debouncer<number>(o.debounceAfterMs, o.debounceMaxMs, (changedAt) => pushNow("config", changedAt.length, changedAt[0]));
  const providers = o.extensionProviders ?? NO_EXTENSION_PROVIDERS;
  // Clusters empty as of the last version: a cluster is warned about once when it becomes empty, not on every push.
  let emptyBefore: ReadonlyMap<string, string> = new Map();
  const scopes = { model: o.scopes?.model ?? o.log, validation: o.scopes?.validation ?? o.log, rbac: o.scopes?.rbac ?? o.log, authn: o.scopes?.authn ?? o.log };
  const apply = (loaded: LoadedConfig): boolean => {
    const unknown = unknownProviderProblems(loaded.mesh, providers);
    if (unknown.length > 0) {
      const problem = `${unknown.map(formatConfigProblem).join("; ")}; keeping the last good configuration`;
      observer.rejected?.(problem);
      scopes.validation.error(problem);
      return false;
    }
    current = meshSnapshot(++version, loaded, o.rootNamespace, {
      ...(o.filterModule ? { module: o.filterModule } : {}),
      ...(o.serving ? { serving: o.serving } : {}),
      extensionProviders: providers,
      ...(o.trustDomain ? { trustDomain: o.trustDomain } : {}),
      ...(o.enableAutoMtls !== undefined ? { enableAutoMtls: o.enableAutoMtls } : {}),
      ...(current ? { previous: current } : {}),
    });
    versions = versioning.next(current.catalog, loaded.documents);
    if (tracking) ledger.record(current.version, versions);
    observer.snapshot?.(current);
    o.log.info(`configuration version ${version}: ${current.services.length} service port(s) from ${loaded.files.length} file(s)`);
    logModel(current, scopes);
    const empty = emptyClusters(current.registry, endpointReport(current.registry, current.services));
    for (const [cluster, why] of empty) if (!emptyBefore.has(cluster)) o.log.warn(`cluster ${cluster} has no endpoints: ${why}`);
    emptyBefore = empty;
    if (!pushedDocuments) {
      pushedDocuments = current.all.get(CONFIG_DOCUMENT)!;
      return true;
    }
    // Upstream's EDS updates skip the debounce unless DISCO_ENABLE_EDS_DEBOUNCE.
    if (o.edsDebounce === false && isEndpointChange(changedKinds(pushedDocuments, current.all.get(CONFIG_DOCUMENT)!)))
      pushNow("endpoint", 1, performance.now());
    else push.add(performance.now());
    return true;
  };
  const watcher = new ConfigDirWatcher(o.configDir, o.checks, o.domain, apply, (problem) => {
    observer.rejected?.(problem);
    scopes.validation.error(problem);
  });
  if (!watcher.start()) {
    watcher.stop();
    throw new Error(`no usable configuration in ${o.configDir}`);
  }

  const listeners: DiscoveryListeners = {};
  const grpcServers: Array<{ server: grpc.Server; health: ServingHealth }> = [];
  const xdsServerOptions: grpc.ServerOptions = {
    "grpc.max_receive_message_length": o.maxRecvMessageBytes ?? 4_194_304,
    "grpc.max_concurrent_streams": o.maxStreams ?? 100_000,
    "grpc.keepalive_time_ms": o.keepaliveIntervalMs,
    "grpc.keepalive_timeout_ms": o.keepaliveTimeoutMs,
    // Streams of an aged connection get upstream's grace (10 s) to finish, then the proxy reconnects.
    ...(o.maxConnectionAgeMs !== undefined
      ? { "grpc.max_connection_age_ms": o.maxConnectionAgeMs, "grpc.max_connection_age_grace_ms": MAX_CONNECTION_AGE_GRACE_MS }
      : {}),
  };
  try {
    if (o.grpc) {
      const served = await bindNamed(
        "--grpcAddr",
        `${o.grpc.host ?? ""}:${o.grpc.port}`,
        serveXds(ads, o.grpc, grpc.ServerCredentials.createInsecure(), xdsServerOptions),
      );
      grpcServers.push(served);
      listeners.grpc = served.address;
      o.log.info(`xDS (plain text) on ${listeners.grpc}`);
    }
    if (o.secureGrpc) {
      const secure = await secureXds(o.secureGrpc.tls, o.trustDomain);
      const served = await bindNamed(
        "--secureGrpcAddr",
        `${o.secureGrpc.address.host ?? ""}:${o.secureGrpc.address.port}`,
        serveXds(ads, o.secureGrpc.address, secure.credentials, xdsServerOptions, secure.access, (server) =>
          addCertificateRelay(
            server,
            relayMetrics,
            o.secureGrpc?.caAddress ? { caAddress: o.secureGrpc.caAddress, files: o.secureGrpc.tls.files, log: servercaLog } : undefined,
            servercaLog,
          ),
        ),
      );
      relayMetrics.rootSeen(readFileSync(o.secureGrpc.tls.files.caCertFile, "utf8"));
      grpcServers.push(served);
      listeners.secureGrpc = served.address;
      o.log.info(
        `xDS (mutual TLS) on ${listeners.secureGrpc} as ${secure.identity.uris.join(" ") || "(no URI SAN)"}; callers must be workload identities of ${secure.clientTrustDomain ?? "any trust domain (DISCO_SKIP_VALIDATE_TRUST_DOMAIN)"}`,
      );
      servercaLog.info(
        o.secureGrpc.caAddress
          ? `CreateCertificate on ${listeners.secureGrpc}: relayed to mesh_ca ${o.secureGrpc.caAddress} (a token passed through; a renewal by certificate asked as ImpersonatedIdentity)`
          : `CreateCertificate on ${listeners.secureGrpc}: refused (no --caAddress)`,
      );
    }
  } catch (e) {
    watcher.stop();
    await Promise.all(grpcServers.map((g) => shutdownGrpcServer(g.server, 0)));
    throw e;
  }
  let http: HttpServer | undefined;
  if (o.http) {
    http = createServer((req, res) => {
      if (o.profiling && serveProfiling(req, res)) return;
      debugPage(
        req.url ?? "/",
        {
          snapshot: current!,
          ads,
          versions: versions!,
          ledger: tracking ? ledger : undefined,
          adszConfig: o.debugAdszConfig ?? false,
          controlPlane: o.podName ?? hostname(),
          scoped,
        },
        res,
      );
    });
    listeners.http = (await bindNamed("--httpAddr", `${o.http.host ?? ""}:${o.http.port}`, listen(http, o.http.port, o.http.host))).address;
  }
  let webhooks: WebhookServer | undefined;
  if (o.https) {
    webhooks = await bindNamed(
      "--httpsAddr",
      `${o.https.address.host ?? ""}:${o.https.address.port}`,
      startWebhooks({ ...o.https, ...(o.revision ? { revision: o.revision } : {}), checks: o.checks, counters: metrics.webhooks, log: o.webhookLog ?? o.log }),
    );
    listeners.https = webhooks.address;
    o.log.info(`admission webhooks (/validate, /inject) on https://${webhooks.address}`);
  }
  let monitoring: MonitoringServer | undefined;
  if (o.monitoring) {
    monitoring = await bindNamed(
      "--monitoringAddr",
      `${o.monitoring.host ?? ""}:${o.monitoring.port}`,
      startMonitoring({
        port: o.monitoring.port,
        host: o.monitoring.host,
        registry: metrics.registry,
        info: buildInfo,
        healthy: () => ready,
        healthPaths: ["/ready"],
      }),
    );
    listeners.monitoring = monitoring.address;
  }
  let ctrlz: CtrlzServer | undefined;
  if (o.ctrlz) {
    ctrlz = await bindNamed(
      "--ctrlz_port",
      `${o.ctrlz.address}:${o.ctrlz.port}`,
      startCtrlz({
        ...o.ctrlz,
        component: "disco-discovery",
        info: buildInfo,
        sections: {
          configuration: () => ({ version: current!.version, services: current!.services.length, resources: current!.catalog.resources.length }),
          instance: () => ({ name: o.podName ?? hostname(), ...(o.podNamespace ? { namespace: o.podNamespace } : {}) }),
          connections: () =>
            ads.state().map((c) => ({
              id: c.id,
              node: c.node.id,
              connectedAt: c.connectedAt.toISOString(),
              types: [...c.subscriptions.keys()].map((t) => SHORT_TYPE[t] ?? t),
            })),
        },
      }),
    );
    listeners.ctrlz = ctrlz.address;
  }
  ready = true;
  return {
    listeners,
    ads,
    metrics,
    snapshot: () => current!,
    reload: () => watcher.reloadNow(),
    close: async () => {
      ready = false;
      for (const g of grpcServers) g.health.setServing(false);
      watcher.stop();
      push.fire();
      await Promise.all([
        ...grpcServers.map((g) => shutdownGrpcServer(g.server, o.drainMs ?? DEFAULT_DRAIN_MS)),
        http ? closeServer(http) : undefined,
        monitoring?.close(),
        webhooks?.close(),
        ctrlz?.close(),
      ]);
    },
  };
}

/** Both observers told of every event (the daemon's counters, and a caller's). */
function bothObservers(a: DiscoveryObserver, b: DiscoveryObserver): DiscoveryObserver {
  const out: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)]) as Set<keyof DiscoveryObserver>) {
    // An event only one of them hears goes straight to it (every response sent and ACK received is one).
    if (!a[key] || !b[key]) {
      const [owner, f] = a[key] ? [a, a[key]] : [b, b[key]];
      out[key] = (f as (...x: unknown[]) => void).bind(owner);
      continue;
    }
    out[key] = (...args: unknown[]) => {
      (a[key] as ((...x: unknown[]) => void) | undefined)?.(...args);
      (b[key] as ((...x: unknown[]) => void) | undefined)?.(...args);
    };
  }
  return out as DiscoveryObserver;
}

/** One xDS gRPC listener: ADS, health and reflection; SERVING once bound. */
async function serveXds(
  ads: AggregatedDiscoveryService,
  address: ListenAddress,
  credentials: grpc.ServerCredentials,
  options: grpc.ServerOptions,
  access?: StreamAccess,
  moreServices?: (server: grpc.Server) => void,
): Promise<{ server: grpc.Server; health: ServingHealth; address: string }> {
  const server = new grpc.Server(options);
  ads.addTo(server, access);
  moreServices?.(server);
  const health = addGrpcIntrospection(server, {
    services: ["envoy.service.discovery.v3.AggregatedDiscoveryService"],
    protoFiles: ["envoy/service/discovery/v3/ads.proto"],
    includeDirs: ENVOY_PROTO_INCLUDE_DIRS,
  });
  const bind = grpcBindAddress(address);
  const port = await new Promise<number>((resolve, reject) => server.bindAsync(bind, credentials, (e, p) => (e ? reject(e) : resolve(p))));
  health.setServing(true);
  return { server, health, address: bind.replace(/:\d+$/, `:${port}`) };
}

/** Debug lines of a new configuration version, each in the scope of its concern. */
function logModel(s: MeshSnapshot, scopes: Record<"model" | "rbac" | "authn", ScopedLogger>): void {
  const k = s.catalog.byKind;
  // A caller's own log sink (tests, in-process use) may not filter by level: then every line goes to it.
  const debugging = (l: ScopedLogger) => typeof l.enabled !== "function" || l.enabled("debug");
  if (debugging(scopes.model)) {
    const kinds = Object.entries(k)
      .filter(([, list]) => list.length > 0)
      .map(([kind, list]) => `${kind}=${list.length}`);
    scopes.model.debug(`configuration version ${s.version}: ${kinds.join(" ") || "no resources"}; services ${s.registry.services.length}`);
  }
  const names = (list: ReadonlyArray<{ namespace: string; name: string }>) => list.map((r) => `${r.namespace}/${r.name}`).join(" ") || "none";
  if (debugging(scopes.rbac))
    scopes.rbac.debug(
      `configuration version ${s.version}: AuthorizationPolicies (served as RBAC filters of the workloads they select): ${names(k.AuthorizationPolicy)}`,
    );
  if (debugging(scopes.authn))
    scopes.authn.debug(
      `configuration version ${s.version}: PeerAuthentications ${names(k.PeerAuthentication)}; RequestAuthentications ${names(k.RequestAuthentication)}`,
    );
}
