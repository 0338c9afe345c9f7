import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import type { Server } from "node:http";

/** What the admin port shows; the sidecar supplies it. */
export interface AdminSource {
  configDump(): unknown;
  /** Counters as name → value, for /stats and /stats/prometheus. */
  stats(): Map<string, number | bigint>;
  ready(): boolean;
  logLevels(): Record<string, string>;
  setLogLevel(scope: string | undefined, level: string): string | undefined;
}

function prometheusName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_:]/g, "_");
}

/**
 * The sidecar's admin interface (Envoy-style paths): `/config_dump` (the
 * active configuration as JSON), `/stats` (`name: value` lines),
 * `/stats/prometheus`, `/ready`, `/logging` (GET levels; POST `?level=L` or
 * `?<scope>=L` to change them).
 */
export function createAdminServer(source: AdminSource): Server {
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://admin");
    const text = (status: number, body: string, type = "text/plain; charset=utf-8") => res.writeHead(status, { "content-type": type }).end(body);
    switch (url.pathname) {
      case "/config_dump":
        return text(200, `${JSON.stringify(source.configDump(), null, 2)}\n`, "application/json");
      case "/stats": {
        const lines = [...source.stats()].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}: ${v}`);
        return text(200, `${lines.join("\n")}\n`);
      }
      case "/stats/prometheus": {
        const lines: string[] = [];
        for (const [k, v] of [...source.stats()].sort(([a], [b]) => a.localeCompare(b))) {
          const name = prometheusName(k);
          lines.push(`# TYPE ${name} counter`, `${name} ${v}`);
        }
        return text(200, `${lines.join("\n")}\n`, "text/plain; version=0.0.4");
      }
      case "/ready":
        return source.ready() ? text(200, "LIVE\n") : text(503, "NOT READY\n");
      case "/logging": {
        if (req.method === "POST") {
          for (const [scope, level] of url.searchParams) {
            const problem = source.setLogLevel(scope === "level" ? undefined : scope, level);
            if (problem) return text(400, `${problem}\n`);
          }
        }
        const levels = Object.entries(source.logLevels()).map(([k, v]) => `${k}: ${v}`);
        return text(200, `active loggers:\n${levels.map((l) => `  ${l}`).join("\n")}\n`);
      }
      default:
        return text(404, "admin paths: /config_dump /stats /stats/prometheus /ready /logging\n");
    }
  });
}
