import { readFileSync, statSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { type Server, createServer } from "node:https";
import type { CatalogChecks } from "../config/catalog.ts";
import type { InjectionSettings } from "../inject/settings.ts";
import { CERT_FILE_REFRESH_MS, type TlsFiles } from "../security/mtls/cert_files.ts";
import { closeServer, listen } from "../telemetry/http_listen.ts";
import type { ScopedLogger } from "../telemetry/logger.ts";
import { BadReview, inject, parseReview, reviewOf, validate } from "./admission.ts";
import type { ListenAddress } from "./listen_address.ts";
import type { WebhookCounters } from "./metrics.ts";

/** The largest AdmissionReview read (a Pod with its spec is a few KiB). */
const MAX_BODY_BYTES = 8 * 1024 * 1024;

export interface WebhookOptions {
  address: ListenAddress;
  /** The serving certificate (`cert-chain.pem`, `key.pem`): DISCO_CERT_DIR, re-read when it changes. */
  tls: TlsFiles;
  checks: CatalogChecks;
  injection: InjectionSettings;
  /** REVISION: inject only the pods labelled with it (host/discovery/admission.ts revisionMismatch); default "". */
  revision?: string;
  counters: WebhookCounters;
  log: ScopedLogger;
}

export interface WebhookServer {
  address: string;
  close(): Promise<void>;
}

/**
 * `--httpsAddr`: the orchestrator's admission webhooks over HTTPS, upstream's
 * paths: `POST /validate` (validation) and `POST /inject` (sidecar injection),
 * each an `AdmissionReview` (`admission.k8s.io/v1`) in and out.
 */
export async function startWebhooks(o: WebhookOptions): Promise<WebhookServer> {
  const read = () => ({ cert: readFileSync(o.tls.certFile, "utf8"), key: readFileSync(o.tls.keyFile, "utf8") });
  const server: Server = createServer(read(), (req, res) => {
    handle(req, res, o).catch((e: Error) => {
      o.log.error(`webhook ${req.url}: ${e.message}`);
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" }).end("internal error\n");
    });
  });
  // A renewed certificate is served to new connections without a restart.
  const mtime = () => Math.max(statSync(o.tls.certFile).mtimeMs, statSync(o.tls.keyFile).mtimeMs);
  let loadedAt = mtime();
  const reload = setInterval(() => {
    try {
      const changed = mtime();
      if (changed === loadedAt) return;
      server.setSecureContext(read());
      loadedAt = changed;
      o.counters.certKeyUpdates.inc();
      o.log.info(`webhook certificate reloaded from ${o.tls.certFile}`);
    } catch (e) {
      o.counters.certKeyUpdateErrors.inc();
      o.log.error(`webhook certificate reload failed (the previous one stays): ${(e as Error).message}`);
    }
  }, CERT_FILE_REFRESH_MS);
  reload.unref();
  const bound = await listen(server as unknown as import("node:http").Server, o.address.port, o.address.host);
  return {
    address: bound.address,
    close: () => {
      clearInterval(reload);
      return closeServer(server as unknown as import("node:http").Server);
    },
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, o: WebhookOptions): Promise<void> {
  const path = (req.url ?? "/").split("?")[0].replace(/\/+$/, "");
  const which = path === "/validate" ? "validate" : path === "/inject" ? "inject" : undefined;
  if (!which) {
    res.writeHead(404, { "content-type": "text/plain" }).end("not found: POST an AdmissionReview to /validate or /inject\n");
    return;
  }
  if (which === "inject") o.counters.injectionRequests.inc();
  const refuse = (status: number, message: string) => {
    if (which === "validate") o.counters.validationHttpError.inc();
    else o.counters.injectionFailure.inc();
    o.log.warn(`webhook /${which}: ${message}`);
    res.writeHead(status, { "content-type": "text/plain" }).end(`${message}\n`);
  };
  if (req.method !== "POST") return refuse(405, `expected POST, got ${req.method}`);
  const type = String(req.headers["content-type"] ?? "");
  if (!type.startsWith("application/json")) return refuse(415, `content-type: expected application/json, got ${JSON.stringify(type)}`);
  const body = await readBody(req);
  if (body === undefined) return refuse(413, `the body is larger than ${MAX_BODY_BYTES} bytes`);
  let request;
  try {
    request = parseReview(body);
  } catch (e) {
    if (e instanceof BadReview) return refuse(400, e.message);
    throw e;
  }
  let answer;
  if (which === "validate") {
    const v = validate(request, o.checks);
    (v.outcome === "passed" ? o.counters.validationPassed : o.counters.validationFailed).inc();
    if (v.outcome === "failed")
      o.log.info(`validation refused ${request.kind?.kind ?? ""} ${request.namespace ?? ""}/${request.name ?? ""}: ${v.response.status?.message}`);
    answer = v.response;
  } else {
    const i = inject(request, o.injection, o.revision);
    ({ success: o.counters.injectionSuccess, skip: o.counters.injectionSkip, failure: o.counters.injectionFailure })[i.outcome].inc();
    if (i.reason) o.log.info(`injection ${i.outcome} for ${request.namespace ?? ""}/${request.name ?? ""}: ${i.reason}`);
    answer = i.response;
  }
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(reviewOf(answer)));
}

/** The body, or undefined when it is too large. */
function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        req.destroy();
        resolve(undefined);
      } else chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}
