import { type IncomingMessage, type ServerResponse, request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { connect, isIP } from "node:net";
import * as grpc from "@grpc/grpc-js";
import type { AppProber, AppProbers } from "../inject/app_probes.ts";

/**
 * The agent's side of application probe rewriting (upstream's status server,
 * `/app-health/<container>/{readyz,livez,startupz}`): the orchestrator probes
 * the status port, and the agent replays the original probe the injector put
 * in MESH_ORCH_APP_PROBERS against the app and answers with its outcome.
 * As upstream, the app is probed at the pod's address (INSTANCE_IP) unless
 * the probe names a host, from 127.0.0.6 so the capture rules let the
 * connection through to the app instead of into the inbound listener.
 */

/** Upstream's inbound passthrough source: the capture rules return what comes from it on loopback. */
export const PROBE_SOURCE_ADDRESS = "127.0.0.6";
const DEFAULT_TIMEOUT_SECONDS = 1;

const isLoopback = (host: string) => host === "localhost" || host.startsWith("127.") || host === "::1";

/** The source address for a probe to `host`: 127.0.0.6 toward the pod's own IPv4 address, the kernel's choice otherwise. */
function sourceFor(host: string): string | undefined {
  return isIP(host) === 4 && !isLoopback(host) ? PROBE_SOURCE_ADDRESS : undefined;
}

/** Runs one probe; resolves with the status code to answer: the app's for httpGet, 200 or 500 for the others. */
export function replayProbe(p: AppProber, defaultHost: string): Promise<number> {
  const timeoutMs = (p.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000;
  if (p.httpGet) {
    const g = p.httpGet;
    const host = g.host || defaultHost;
    const https = (g.scheme ?? "HTTP").toUpperCase() === "HTTPS";
    const headers = Object.fromEntries((g.httpHeaders ?? []).map((h) => [h.name, h.value]));
    return new Promise((resolve) => {
      const req = (https ? httpsRequest : httpRequest)(
        {
          host,
          port: g.port,
          path: g.path || "/",
          method: "GET",
          headers: { "user-agent": "mesh-probe/1.0", ...headers },
          timeout: timeoutMs,
          localAddress: sourceFor(host),
          // the orchestrator's own prober does not verify the app's certificate either
          ...(https ? { rejectUnauthorized: false } : {}),
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 500);
        },
      );
      req.on("timeout", () => req.destroy(new Error("timeout")));
      req.on("error", () => resolve(500));
      req.end();
    });
  }
  if (p.tcpSocket) {
    const host = p.tcpSocket.host || defaultHost;
    return new Promise((resolve) => {
      const socket = connect({ host, port: p.tcpSocket!.port, localAddress: sourceFor(host), timeout: timeoutMs });
      socket.once("connect", () => {
        socket.destroy();
        resolve(200);
      });
      socket.once("timeout", () => socket.destroy(new Error("timeout")));
      socket.once("error", () => resolve(500));
    });
  }
  return grpcHealth(defaultHost, p.grpc!.port, p.grpc!.service ?? "", timeoutMs);
}

/** grpc.health.v1.Health/Check; SERVING (1) is healthy. */
async function grpcHealth(host: string, port: number, service: string, timeoutMs: number): Promise<number> {
  const target = isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
  const client = new grpc.Client(target, grpc.credentials.createInsecure());
  const name = Buffer.from(service);
  // HealthCheckRequest { string service = 1 }, written by hand: one field.
  const requestBytes = name.length > 0 ? Buffer.concat([Buffer.from([0x0a, name.length]), name]) : Buffer.alloc(0);
  return new Promise<number>((resolve) => {
    client.makeUnaryRequest(
      "/grpc.health.v1.Health/Check",
      (b: Buffer) => b,
      (b: Buffer) => b,
      requestBytes,
      { deadline: Date.now() + timeoutMs },
      (err, response) => {
        client.close();
        // HealthCheckResponse { ServingStatus status = 1 }: bytes 0x08 0x01 when SERVING.
        resolve(!err && response && response[0] === 0x08 && response[1] === 1 ? 200 : 500);
      },
    );
  });
}

/**
 * A status-server route for `/app-health/…`: answers with the replayed
 * probe's outcome, 404 for a path no probe was rewritten for. Returns false
 * for other paths (the status server's own).
 */
export function appProbeRoute(probers: AppProbers, defaultHost: string): (path: string, req: IncomingMessage, res: ServerResponse) => boolean {
  return (path, _req, res) => {
    if (!path.startsWith("/app-health/")) return false;
    const prober = probers.get(path);
    if (!prober) {
      res.writeHead(404, { "content-type": "text/plain" }).end(`no app probe is registered for ${path}\n`);
      return true;
    }
    replayProbe(prober, defaultHost).then(
      (status) => res.writeHead(status).end(),
      (e: Error) => res.writeHead(500, { "content-type": "text/plain" }).end(`${e.message}\n`),
    );
    return true;
  };
}
