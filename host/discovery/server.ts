import { createServer, type Server as HttpServer } from "node:http";
import * as grpc from "@grpc/grpc-js";
import type { PatternChecks } from "../config/resources/hub_client.ts";
import { ConfigDirWatcher, type LoadedConfig } from "../proxy/config_dir.ts";
import type { ScopedLogger } from "../telemetry/logger.ts";
import { closeServer, listen } from "../telemetry/http_listen.ts";
import { shutdownGrpcServer } from "../wire/raw_grpc.ts";
import { ENVOY_PROTO_INCLUDE_DIRS, envoyProtos, unpackAny } from "../wire/envoy_protos.ts";
import { addGrpcIntrospection, type ServingHealth } from "../wire/grpc_introspection.ts";
import { type AdsObserver, AggregatedDiscoveryService } from "./ads_server.ts";
import { Debouncer } from "./debounce.ts";
import type { ModuleSource } from "./envoy_wasm.ts";
import { grpcBindAddress, type ListenAddress } from "./listen_address.ts";
import { type MeshSnapshot, meshSnapshot, resourcesFor } from "./mesh_snapshot.ts";
import { SHORT_TYPE } from "./type_urls.ts";

export interface DiscoveryOptions {
  configDir: string;
  grpc?: ListenAddress;
  http?: ListenAddress;
  rootNamespace: string;
  debounceAfterMs: number;
  debounceMaxMs: number;
  keepaliveIntervalMs: number;
  keepaliveTimeoutMs: number;
  checks: PatternChecks;
  /** Where Envoy sidecars load the filter module from (default: the local file /etc/mesh/filter.wasm). */
  filterModule?: ModuleSource;
  log: ScopedLogger;
  observer?: AdsObserver & { pushed?(reason: string, changes: number): void; rejected?(problem: string): void; snapshot?(s: MeshSnapshot): void };
}

export interface DiscoveryServer {
  /** Bound addresses, `host:port`, of the listeners that are on. */
  readonly listeners: { grpc?: string; http?: string };
  snapshot(): MeshSnapshot;
  ads: AggregatedDiscoveryService;
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
  const ads = new AggregatedDiscoveryService((node) => resourcesFor(current!, node), o.observer);
  const push = new Debouncer<string>(o.debounceAfterMs, o.debounceMaxMs, (changes) => {
    o.observer?.pushed?.("config", changes.length);
    ads.push();
  });
  const apply = (loaded: LoadedConfig): boolean => {
    current = meshSnapshot(++version, loaded, o.rootNamespace, o.filterModule);
    o.observer?.snapshot?.(current);
    o.log.info(`configuration version ${version}: ${current.services.length} service port(s) from ${loaded.files.length} file(s)`);
    if (version > 1) push.add(`version ${version}`);
    return true;
  };
  const watcher = new ConfigDirWatcher(o.configDir, o.checks, apply, (problem) => {
    o.observer?.rejected?.(problem);
    o.log.error(problem);
  });
  if (!watcher.start()) throw new Error(`no usable configuration in ${o.configDir}`);

  const listeners: { grpc?: string; http?: string } = {};
  let grpcServer: grpc.Server | undefined;
  let health: ServingHealth | undefined;
  if (o.grpc) {
    grpcServer = new grpc.Server({
      "grpc.keepalive_time_ms": o.keepaliveIntervalMs,
      "grpc.keepalive_timeout_ms": o.keepaliveTimeoutMs,
    });
    ads.addTo(grpcServer);
    health = addGrpcIntrospection(grpcServer, {
      services: ["envoy.service.discovery.v3.AggregatedDiscoveryService"],
      protoFiles: ["envoy/service/discovery/v3/ads.proto"],
      includeDirs: ENVOY_PROTO_INCLUDE_DIRS,
    });
    const bind = grpcBindAddress(o.grpc);
    const port = await new Promise<number>((resolve, reject) =>
      grpcServer!.bindAsync(bind, grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
    );
    listeners.grpc = bind.replace(/:\d+$/, `:${port}`);
    health.setServing(true);
    o.log.info(`xDS (plain text) on ${listeners.grpc}`);
  }
  let http: HttpServer | undefined;
  if (o.http) {
    http = createServer((req, res) => debugPage(req.url ?? "/", current!, ads, res));
    listeners.http = (await listen(http, o.http.port, o.http.host)).address;
  }
  return {
    listeners,
    ads,
    snapshot: () => current!,
    reload: () => watcher.reloadNow(),
    close: async () => {
      health?.setServing(false);
      watcher.stop();
      push.fire();
      await Promise.all([grpcServer ? shutdownGrpcServer(grpcServer, 2000) : undefined, http ? closeServer(http) : undefined]);
    },
  };
}

type Res = import("node:http").ServerResponse;

// The debug port (upstream's /debug/*): what each proxy was sent and acknowledged, the configuration, the ADS connections.
function debugPage(url: string, snapshot: MeshSnapshot, ads: AggregatedDiscoveryService, res: Res): void {
  const path = url.split("?")[0];
  const json = (value: unknown) => res.writeHead(200, { "content-type": "application/json" }).end(`${JSON.stringify(value, null, 2)}\n`);
  if (path === "/debug/syncz") {
    json(ads.state().flatMap((c) => [...c.subscriptions].map(([type, s]) => ({
      proxy: c.node.id,
      type: SHORT_TYPE[type] ?? type,
      sent: s.sentVersion ?? null,
      acked: s.ackedVersion ?? null,
      nacked: s.nacked ?? null,
    }))));
  } else if (path === "/debug/adsz") {
    json(ads.state().map((c) => ({ connectionId: c.id, node: c.node, connectedAt: c.connectedAt.toISOString(), watches: Object.fromEntries([...c.subscriptions].map(([t, s]) => [SHORT_TYPE[t] ?? t, s.names === "*" ? ["*"] : [...s.names]])) })));
  } else if (path === "/debug/configz") {
    json({ version: snapshot.version, resources: snapshot.catalog.resources.map((r) => ({ kind: r.kind, namespace: r.namespace, name: r.name, spec: r.spec })) });
  } else if (path === "/debug/resourcesz") {
    json(Object.fromEntries([...snapshot.proxyless].map(([type, m]) => [SHORT_TYPE[type] ?? type, [...m.values()].map((r) => unpackAny(r.any))])));
  } else {
    res.writeHead(404, { "content-type": "text/plain" }).end("not found: try /debug/syncz, /debug/adsz, /debug/configz, /debug/resourcesz\n");
  }
}
