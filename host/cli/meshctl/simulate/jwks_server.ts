import { createServer, type Server } from "node:http";
import type { JWK } from "jose";
import { listen } from "../../../telemetry/http_listen.ts";

/** The path a jwks-server workload serves: `http://jwks.mesh-system.svc.cluster.local:8000/jwks.json`. */
export const JWKS_PATH = "/jwks.json";

/**
 * A jwks-server workload: serves the key set at `/jwks.json` (404 elsewhere)
 * on a loopback port, and counts fetches.
 */
export async function startJwksServer(jwks: { keys: JWK[] }): Promise<{ server: Server; port: number; fetches(): number }> {
  let fetches = 0;
  const body = JSON.stringify(jwks);
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== JWKS_PATH) return void res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
    fetches++;
    res.writeHead(200, { "content-type": "application/json" }).end(body);
  });
  const { port } = await listen(server, 0, "127.0.0.1");
  return { server, port, fetches: () => fetches };
}
