import { createServer, type Server } from "node:http";
import type { Registry } from "prom-client";
import type { BuildInfo } from "../daemon/version.ts";
import { closeServer, listen } from "./http_listen.ts";
import { serveProfiling } from "./profiling.ts";

export interface MonitoringOptions {
  port: number;
  /** Undefined: every address (as upstream's `:15014`). */
  host?: string;
  registry: Registry;
  info: () => BuildInfo;
  healthy: () => boolean;
  /** Lines after `ok` / `not ready` on the health paths: how the daemon's dependencies are (the status stays `healthy`'s). */
  healthDetail?: () => string[];
  /** Paths answering `healthy` (200 `ok` / 503 `not ready`); default `/healthz` (disco-discovery: `/ready`). */
  healthPaths?: readonly string[];
  /** `/debug/pprof/…` (profiling.ts): hubs `--profile`, mesh_ca `--enable-profiling`. */
  profiling?: boolean;
}

export interface MonitoringServer {
  address: string;
  port: number;
  close(): Promise<void>;
}

/**
 * The self-monitoring port: `/metrics` (Prometheus text), `/version`
 * (BuildInfo as JSON) and `/healthz` (200 `ok`, or 503 `not ready`); with
 * `profiling`, the `/debug/pprof/` endpoints too.
 */
export async function startMonitoring(options: MonitoringOptions): Promise<MonitoringServer> {
  const healthPaths = options.healthPaths ?? ["/healthz"];
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET" }).end();
      return;
    }
    if (options.profiling && serveProfiling(req, res)) return;
    if (path === "/metrics") {
      options.registry.metrics().then(
        (text) => res.writeHead(200, { "content-type": options.registry.contentType }).end(text),
        (e: Error) => res.writeHead(500, { "content-type": "text/plain" }).end(e.message),
      );
    } else if (path === "/version") {
      res.writeHead(200, { "content-type": "application/json" }).end(`${JSON.stringify(options.info())}\n`);
    } else if (healthPaths.includes(path)) {
      const ok = options.healthy();
      const detail = options.healthDetail?.() ?? [];
      res.writeHead(ok ? 200 : 503, { "content-type": "text/plain" }).end(`${ok ? "ok" : "not ready"}\n${detail.map((l) => `${l}\n`).join("")}`);
    } else {
      res
        .writeHead(404, { "content-type": "text/plain" })
        .end(`not found: try /metrics, /version${options.profiling ? ", /debug/pprof/" : ""} or ${healthPaths.join(", ")}\n`);
    }
  });
  const bound = await listen(server, options.port, options.host);
  return { ...bound, close: () => closeServer(server) };
}
