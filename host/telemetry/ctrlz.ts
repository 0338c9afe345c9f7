import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { BuildInfo } from "../daemon/version.ts";
import { closeServer, listen } from "./http_listen.ts";
import type { Logger } from "./logger.ts";

export const DEFAULT_CTRLZ_PORT = 9876;
export const DEFAULT_CTRLZ_ADDRESS = "localhost";
const MAX_BODY_BYTES = 64 * 1024;

export interface CtrlzOptions {
  /** `--ctrlz_address`: `*` = every address. */
  address: string;
  port: number;
  component: string;
  info: () => BuildInfo;
  logger: Logger;
  /** Extra introspection, e.g. `rules: () => [...]`, shown on the page and in `/json`. */
  sections: Record<string, () => unknown>;
  now?: () => number;
}

export interface CtrlzServer {
  address: string;
  port: number;
  close(): Promise<void>;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) reject(new Error("body too large"));
      else chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** Scope and level from the query, a form body or a JSON body (`{"scope":"api","level":"debug"}`). */
function levelChange(query: URLSearchParams, body: string, contentType: string): { scope?: string; level?: string } {
  if (query.has("level")) return { scope: query.get("scope") ?? "default", level: query.get("level") ?? undefined };
  if (!body) return {};
  if (contentType.includes("json")) {
    const v = JSON.parse(body) as { scope?: unknown; level?: unknown };
    return { scope: typeof v.scope === "string" ? v.scope : "default", level: typeof v.level === "string" ? v.level : undefined };
  }
  const form = new URLSearchParams(body);
  return { scope: form.get("scope") ?? "default", level: form.get("level") ?? undefined };
}

/**
 * ControlZ, a small introspection server (upstream: istio's ctrlz):
 * - `GET /`: an HTML page with version, uptime, log levels (with a form to change them) and the sections;
 * - `GET /json`: the same as JSON `{component, info, uptimeSeconds, logLevels, …sections}`;
 * - `GET /logging`: levels as JSON; `POST /logging` (or `GET /logging?scope=S&level=L`) changes one scope (`all` for every scope).
 */
export async function startCtrlz(options: CtrlzOptions): Promise<CtrlzServer> {
  const now = options.now ?? Date.now;
  const startedAt = now();
  const snapshot = () => {
    const out: Record<string, unknown> = {
      component: options.component,
      info: options.info(),
      uptimeSeconds: Math.round((now() - startedAt) / 100) / 10,
      logLevels: options.logger.currentLevels(),
    };
    for (const [name, fn] of Object.entries(options.sections)) out[name] = fn();
    return out;
  };
  const json = (res: ServerResponse, status: number, value: unknown) =>
    res.writeHead(status, { "content-type": "application/json" }).end(`${JSON.stringify(value, null, 2)}\n`);

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://ctrlz");
    if (url.pathname === "/json") return json(res, 200, snapshot());
    if (url.pathname === "/logging") {
      const body = req.method === "POST" || req.method === "PUT" ? await readBody(req) : "";
      const change = levelChange(url.searchParams, body, String(req.headers["content-type"] ?? ""));
      if (change.level !== undefined) {
        try {
          options.logger.setLevel(change.scope ?? "default", change.level);
        } catch (e) {
          return json(res, 400, { error: (e as Error).message });
        }
        if (String(req.headers["content-type"] ?? "").includes("form")) {
          res.writeHead(303, { location: "/" }).end();
          return;
        }
      }
      return json(res, 200, options.logger.currentLevels());
    }
    if (url.pathname !== "/") return json(res, 404, { error: "not found: try /, /json or /logging" });
    const s = snapshot();
    const levels = Object.entries(options.logger.currentLevels())
      .map(([scope, level]) => `<tr><td>${escapeHtml(scope)}</td><td>${escapeHtml(level)}</td></tr>`)
      .join("");
    const sections = Object.keys(options.sections)
      .map((name) => `<h2>${escapeHtml(name)}</h2><pre>${escapeHtml(JSON.stringify(s[name], null, 2))}</pre>`)
      .join("");
    res
      .writeHead(200, { "content-type": "text/html; charset=utf-8" })
      .end(
        `<!doctype html><html><head><title>${escapeHtml(options.component)} ControlZ</title></head><body>` +
          `<h1>${escapeHtml(options.component)}</h1><p>version ${escapeHtml(options.info().version)}, up ${s.uptimeSeconds}s</p>` +
          `<h2>Log levels</h2><table>${levels}</table>` +
          `<form method="post" action="/logging"><input name="scope" placeholder="scope"> <input name="level" placeholder="level"> <button>set</button></form>` +
          `${sections}</body></html>\n`,
      );
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e: Error) => {
      if (!res.headersSent) json(res, 400, { error: e.message });
    });
  });
  const bound = await listen(server, options.port, options.address === "*" ? undefined : options.address);
  return { ...bound, close: () => closeServer(server) };
}
