import { type Server, createServer } from "node:http";
import { splitPem } from "../anchor/client.ts";
import { buildInfo } from "../daemon/version.ts";
import { createAdminServer } from "./admin.ts";
import type { ClusterInfo, ListenerInfo, ServerState } from "./admin_envoy.ts";
import type { SidecarOptions } from "./sidecar_options.ts";
import { GAUGE_STATS } from "./sidecar_stats.ts";
import { statsToPrometheus } from "./stats_exposition.ts";

/**
 * The sidecar's operator ports: the admin port (Envoy's admin API: /stats,
 * /config_dump, /clusters, /listeners, /certs, /logging, /quitquitquit,
 * /healthcheck/fail) and the status port (`/healthz/ready` for the kubelet,
 * `/stats/prometheus` with the agent's metrics merged, as upstream's agent).
 */
export interface SidecarAdminView {
  options: Pick<SidecarOptions, "identity" | "commandLineOptions" | "metricsRegistry" | "security" | "onQuit" | "logger" | "statusPort" | "appProbes">;
  configDump(): unknown;
  stats(): Map<string, number | bigint>;
  ready(): boolean;
  state(): ServerState;
  startedAt: number;
  clusters(): ClusterInfo[];
  listeners(): ListenerInfo[];
  setHealthCheckFailed(failed: boolean): void;
}

export function sidecarAdminServers(view: SidecarAdminView): { admin: Server; status: Server | undefined } {
  const options = view.options;
  const admin = createAdminServer({
    configDump: () => view.configDump(),
    stats: () => view.stats(),
    gauges: () => GAUGE_STATS,
    registry: options.metricsRegistry,
    ready: () => view.ready(),
    serverInfo: () => ({
      version: buildInfo().version,
      state: view.state(),
      startedAt: view.startedAt,
      node: { id: options.identity.id ?? "", cluster: options.identity.serviceCluster ?? "", metadata: { ...options.identity } },
      commandLineOptions: options.commandLineOptions ?? {},
    }),
    clusters: () => view.clusters(),
    listeners: () => view.listeners(),
    certificates: () => {
      if (!options.security) return undefined;
      const c = options.security.tls.current;
      return { certChainPem: splitPem(c.certChainPem), rootPems: splitPem(c.rootPem) };
    },
    quit: () => options.onQuit?.(),
    setHealthCheckFailed: (failed) => view.setHealthCheckFailed(failed),
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
  const status =
    options.statusPort > 0
      ? createServer((req, res) => {
          const path = (req.url ?? "/").split("?")[0];
          if (options.appProbes?.(path, req, res)) return;
          if (path === "/stats/prometheus") {
            // upstream's agent serves the merged proxy and agent metrics here for scrapers
            statsToPrometheus(view.stats(), GAUGE_STATS, options.metricsRegistry).then(
              (body) => res.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" }).end(body),
              (e: Error) => res.writeHead(500).end(e.message),
            );
            return;
          }
          res.writeHead(path === "/healthz/ready" && view.ready() ? 200 : path === "/healthz/ready" ? 503 : 404).end();
        })
      : undefined;
  return { admin, status };
}
