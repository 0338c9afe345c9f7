import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import type { Server } from "node:http";
import type { Registry } from "prom-client";
import {
  type CertificateMaterial,
  type ClusterInfo,
  type ListenerInfo,
  type ServerInfoInput,
  certsJson,
  clustersJson,
  clustersText,
  configDumpResource,
  listenersJson,
  listenersText,
  serverInfo,
} from "./admin_envoy.ts";
import { type CompiledRegex, compileRegex } from "../regex/engine.ts";
import { statsToPrometheus } from "./stats_exposition.ts";

/** What the admin port shows; the sidecar supplies it. */
export interface AdminSource {
  configDump(): unknown;
  /** Counters as name → value, for /stats and /stats/prometheus. */
  stats(): Map<string, number | bigint>;
  /** The stats that are gauges (the others are counters). */
  gauges?(): ReadonlySet<string>;
  /** The agent's own metrics (mesh_build, spec 2 counters), appended to /stats/prometheus. */
  registry?: Registry;
  ready(): boolean;
  logLevels(): Record<string, string>;
  setLogLevel(scope: string | undefined, level: string): string | undefined;
  serverInfo?(): Omit<ServerInfoInput, "now">;
  clusters?(): ClusterInfo[];
  listeners?(): ListenerInfo[];
  /** The workload certificate and roots; undefined when the sidecar holds none. */
  certificates?(): CertificateMaterial | undefined;
  /** POST /quitquitquit: drain and exit. */
  quit?(): void;
  /** POST /healthcheck/fail (true) and /healthcheck/ok (false). */
  setHealthCheckFailed?(failed: boolean): void;
  now?(): number;
}

const PATHS = [
  "/certs",
  "/clusters",
  "/config_dump",
  "/healthcheck/fail",
  "/healthcheck/ok",
  "/listeners",
  "/logging",
  "/quitquitquit",
  "/ready",
  "/server_info",
  "/stats",
  "/stats/prometheus",
];

/**
 * A regex from the query string, on the linear-time engine: a caller of the
 * admin port must not be able to make it backtrack (Envoy compiles these with
 * RE2). Undefined when the parameter is absent or empty.
 */
function queryRegex(url: URL, parameter: string): CompiledRegex | undefined | Error {
  const text = url.searchParams.get(parameter);
  if (text === null || text === "") return undefined;
  const compiled = compileRegex(text);
  return "error" in compiled ? new Error(compiled.error) : compiled;
}

/** Envoy's `filter=` is a regular expression matched anywhere in the stat name (RE2 partial match). */
function statsFilter(url: URL): CompiledRegex | undefined | Error {
  const filter = queryRegex(url, "filter");
  return filter instanceof Error ? new Error(`Invalid regex: ${filter.message}`) : filter;
}

/**
 * The sidecar's admin interface, Envoy's paths with Envoy's shapes:
 * `/server_info`, `/clusters` and `/listeners` (text, or `?format=json`),
 * `/certs`, `/config_dump` (`?resource=`, `?name_regex=`), `/stats` (text,
 * `?format=json|prometheus`, `?filter=<regex>`, `?usedonly`),
 * `/stats/prometheus`, `/ready`, `/logging`, and the POST-only
 * `/quitquitquit`, `/healthcheck/fail`, `/healthcheck/ok`.
 */
export function createAdminServer(source: AdminSource): Server {
  const now = () => source.now?.() ?? Date.now();
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://admin");
    const text = (status: number, body: string, type = "text/plain; charset=utf-8") => res.writeHead(status, { "content-type": type }).end(body);
    const json = (body: unknown, status = 200) => text(status, `${JSON.stringify(body, null, 2)}\n`, "application/json");
    const postOnly = (action: () => string) => (req.method === "POST" ? text(200, action()) : text(405, "This endpoint requires POST\n"));
    const prometheus = (filter: CompiledRegex | undefined) =>
      statsToPrometheus(selectStats(source.stats(), filter, url), source.gauges?.() ?? new Set(), filter ? undefined : source.registry).then(
        (body) => text(200, body, "text/plain; version=0.0.4; charset=utf-8"),
        (e: Error) => text(500, `${e.message}\n`),
      );
    switch (url.pathname) {
      case "/config_dump": {
        const dump = source.configDump() as Record<string, unknown>;
        const resource = url.searchParams.get("resource");
        const nameRegex = queryRegex(url, "name_regex");
        if (nameRegex instanceof Error) return text(400, `Invalid name_regex: ${nameRegex.message}\n`);
        if (!resource) return json(dump);
        const selected = configDumpResource(dump, resource, nameRegex && ((name) => nameRegex.search(name)));
        return selected ? json(selected) : text(404, `${resource} is not a resource of the config dump (known: ${Object.keys(dump).join(", ")})\n`);
      }
      case "/stats": {
        const filter = statsFilter(url);
        if (filter instanceof Error) return text(400, `${filter.message}\n`);
        const format = url.searchParams.get("format");
        if (format === "prometheus") return void prometheus(filter);
        const stats = [...selectStats(source.stats(), filter, url)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        if (format === "json") return json({ stats: stats.map(([name, value]) => ({ name, value: Number(value) })) });
        if (format !== null && format !== "text") return text(400, `usage: /stats?format=(json|prometheus|text)\n`);
        return text(200, stats.map(([k, v]) => `${k}: ${v}\n`).join(""));
      }
      case "/stats/prometheus": {
        const filter = statsFilter(url);
        if (filter instanceof Error) return text(400, `${filter.message}\n`);
        return void prometheus(filter);
      }
      case "/ready": {
        const state = source.serverInfo?.().state ?? (source.ready() ? "LIVE" : "DRAINING");
        return source.ready() ? text(200, "LIVE\n") : text(503, `${state === "LIVE" ? "DRAINING" : state}\n`);
      }
      case "/server_info":
        return source.serverInfo ? json(serverInfo({ ...source.serverInfo(), now: now() })) : text(404, "no server info\n");
      case "/clusters": {
        const clusters = source.clusters?.() ?? [];
        return url.searchParams.get("format") === "json" ? json(clustersJson(clusters)) : text(200, clustersText(clusters));
      }
      case "/listeners": {
        const listeners = source.listeners?.() ?? [];
        return url.searchParams.get("format") === "json" ? json(listenersJson(listeners)) : text(200, listenersText(listeners));
      }
      case "/certs":
        return json(certsJson(source.certificates?.(), now()));
      case "/quitquitquit":
        return postOnly(() => {
          // answer first: the drain closes this listener
          setImmediate(() => source.quit?.());
          return "OK\n";
        });
      case "/healthcheck/fail":
        return postOnly(() => {
          source.setHealthCheckFailed?.(true);
          return "OK\n";
        });
      case "/healthcheck/ok":
        return postOnly(() => {
          source.setHealthCheckFailed?.(false);
          return "OK\n";
        });
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
        return text(404, `admin paths: ${PATHS.join(" ")}\n`);
    }
  });
}

/** The stats `filter=` (a regex) and `usedonly` (non-zero values) keep. */
function selectStats(stats: Map<string, number | bigint>, filter: CompiledRegex | undefined, url: URL): Map<string, number | bigint> {
  const usedOnly = url.searchParams.has("usedonly");
  return new Map([...stats].filter(([name, value]) => (!filter || filter.search(name)) && (!usedOnly || Number(value) !== 0)));
}
