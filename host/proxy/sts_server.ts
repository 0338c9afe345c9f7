import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { decodeJwt } from "jose";
import type { ScopedLogger } from "../telemetry/logger.ts";
import { closeServer, listen } from "../telemetry/http_listen.ts";

/**
 * The agent's token exchange service (`--stsPort`): OAuth 2.0 Token Exchange
 * (RFC 8693) on 127.0.0.1, as upstream's STS server. `POST /token` with a
 * form-encoded request; `GET /stsStatus` dumps the token manager's state.
 *
 * What it can honestly do on one machine: a request without `scope` asks for
 * a token the mesh itself accepts, and the mesh (mesh_ca, the hub) accepts
 * the workload's service-account token, so the subject token is handed back
 * as the access token (upstream's local path; `issued_token_type` and
 * `expires_in` are added as RFC 8693 asks). A request with `scope` asks the
 * token manager plugin (`--tokenManagerPlugin`, upstream's cloud token
 * exchange) for a cloud access token: that needs the cloud's STS and IAM
 * endpoints, unreachable here, so it is answered `invalid_target` (HTTP 500,
 * as upstream answers a plugin failure) saying so.
 */
export const STS_TOKEN_PATH = "/token";
export const STS_STATUS_PATH = "/stsStatus";
export const TOKEN_EXCHANGE_GRANT_TYPE = "urn:ietf:params:oauth:grant-type:token-exchange";
export const JWT_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:jwt";
export { DEFAULT_TOKEN_MANAGER_PLUGIN } from "./defaults.ts";
/** Largest request body read (a token exchange request carries one or two JWTs). */
const MAX_BODY_BYTES = 64 * 1024;

export interface StsResponse {
  access_token: string;
  issued_token_type: string;
  token_type: "Bearer";
  expires_in?: number;
}

export interface StsError {
  error: "invalid_request" | "invalid_target";
  error_description: string;
}

/** The outcome of one exchange: HTTP status and JSON body. */
export type StsOutcome = { status: 200; body: StsResponse } | { status: 400 | 500; body: StsError };

const invalidRequest = (why: string): StsOutcome => ({ status: 400, body: { error: "invalid_request", error_description: why } });

/** One token exchange request (method, content type, form body) decided; `now` in ms. */
export function exchangeToken(method: string, contentType: string | undefined, body: string, plugin: string, now: number): StsOutcome {
  if (method !== "POST") return invalidRequest(`request method is invalid, should be POST but got ${method}`);
  const mediaType = (contentType ?? "").split(";")[0].trim().toLowerCase();
  if (mediaType !== "application/x-www-form-urlencoded")
    return invalidRequest(`request content type is invalid, should be application/x-www-form-urlencoded but got ${contentType ?? "none"}`);
  const form = new URLSearchParams(body);
  const grantType = form.get("grant_type") ?? "";
  if (grantType !== TOKEN_EXCHANGE_GRANT_TYPE)
    return invalidRequest(`grant_type is invalid, should be ${TOKEN_EXCHANGE_GRANT_TYPE} but got ${JSON.stringify(grantType)}`);
  const subjectToken = form.get("subject_token") ?? "";
  if (!subjectToken) return invalidRequest("subject_token is empty");
  const subjectTokenType = form.get("subject_token_type") ?? "";
  if (subjectTokenType !== JWT_TOKEN_TYPE)
    return invalidRequest(`subject_token_type is invalid, should be ${JWT_TOKEN_TYPE} but got ${JSON.stringify(subjectTokenType)}`);
  if (form.get("scope")) {
    return {
      status: 500,
      body: {
        error: "invalid_target",
        error_description: `scope ${JSON.stringify(form.get("scope"))} asks the ${plugin} token manager for a cloud access token; that needs the cloud's token exchange and IAM endpoints, which are not reachable here (a request without scope gets the token the mesh accepts)`,
      },
    };
  }
  let expiresIn: number | undefined;
  try {
    const exp = decodeJwt(subjectToken).exp;
    if (typeof exp === "number") expiresIn = Math.max(0, Math.floor(exp - now / 1000));
  } catch {
    return invalidRequest("subject_token is not a JWT");
  }
  if (expiresIn === 0) return invalidRequest("subject_token has expired");
  return {
    status: 200,
    body: {
      access_token: subjectToken,
      issued_token_type: JWT_TOKEN_TYPE,
      token_type: "Bearer",
      ...(expiresIn !== undefined ? { expires_in: expiresIn } : {}),
    },
  };
}

export interface StsServerOptions {
  port: number;
  plugin: string;
  log: ScopedLogger;
  now?: () => number;
}

/** Starts the service on 127.0.0.1:port (0 picks a free port). */
export async function startStsServer(options: StsServerOptions): Promise<{ port: number; close(): Promise<void> }> {
  const now = options.now ?? Date.now;
  let served = 0;
  let refused = 0;
  const reply = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(`${JSON.stringify(body, null, 1)}\n`);
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    if (path === STS_STATUS_PATH) {
      reply(res, 200, { plugin: options.plugin, tokens: [], servedLocally: served, refused });
      return;
    }
    if (path !== STS_TOKEN_PATH) {
      reply(res, 404, { error: "not_found", error_description: `no such path ${path} (${STS_TOKEN_PATH}, ${STS_STATUS_PATH})` });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY_BYTES) chunks.push(c);
    });
    req.on("end", () => {
      const outcome =
        size > MAX_BODY_BYTES
          ? invalidRequest(`request body is larger than ${MAX_BODY_BYTES} bytes`)
          : exchangeToken(req.method ?? "", req.headers["content-type"], Buffer.concat(chunks).toString("utf8"), options.plugin, now());
      if (outcome.status === 200) served++;
      else {
        refused++;
        options.log.warn(`token exchange refused: ${outcome.body.error}: ${outcome.body.error_description}`);
      }
      reply(res, outcome.status, outcome.body);
    });
  });
  const { port } = await listen(server, options.port, "127.0.0.1");
  options.log.info(`token exchange service (STS) on 127.0.0.1:${port}${STS_TOKEN_PATH}`);
  return { port, close: () => closeServer(server) };
}
