import { type Server, createServer, request } from "node:http";
import { ListenerBindError } from "../daemon/bind.ts";

/**
 * Upstream's two static Envoy listeners in front of the agent: readiness
 * on 15021 (`/healthz/ready`, answered by the agent's status server) and
 * merged stats on 15090 (`/stats/prometheus`). Injected pods probe 15021 and
 * exclude both from inbound capture; the agent opens them when
 * ENVOY_STATUS_PORT / ENVOY_PROMETHEUS_PORT are given (the injection template
 * sets both), on the status server's address, forwarding the one path each
 * serves to the status port.
 */

export interface StatusPort {
  /** ENVOY_STATUS_PORT or ENVOY_PROMETHEUS_PORT, for errors. */
  variable: string;
  port: number;
  path: string;
}

/** ENVOY_STATUS_PORT and ENVOY_PROMETHEUS_PORT decoded; unset or 0: not served. Throws naming the variable. */
export function statusPortsFromEnv(env: Readonly<Record<string, string | undefined>>): StatusPort[] {
  const out: StatusPort[] = [];
  for (const [variable, path] of [
    ["ENVOY_STATUS_PORT", "/healthz/ready"],
    ["ENVOY_PROMETHEUS_PORT", "/stats/prometheus"],
  ] as const) {
    const text = env[variable];
    if (text === undefined || text === "") continue;
    if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) throw new Error(`${variable}: expected a port from 0 to 65535, got ${JSON.stringify(text)}`);
    if (Number(text) > 0) out.push({ variable, port: Number(text), path });
  }
  return out;
}

/** Opens each port on `host`, forwarding its path to the status server at `host:statusPort`; closes what it opened if one cannot bind. */
export async function startStatusPorts(ports: readonly StatusPort[], host: string, statusPort: number): Promise<{ close(): Promise<void> }> {
  // On a wildcard bind the status server is dialled on loopback, as Envoy's 15021 dials the agent: a call from the proxy's user to the pod's own address would be captured to the inbound listener.
  const statusHost = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
  const servers: Server[] = [];
  const close = () => Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve())))).then(() => undefined);
  for (const p of ports) {
    const server = createServer((req, res) => {
      const path = (req.url ?? "/").split("?")[0];
      if (req.method !== "GET" || !path.startsWith(p.path)) return void res.writeHead(404).end();
      const upstream = request({ host: statusHost, port: statusPort, path: req.url, method: "GET" }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      upstream.on("error", (e) => res.writeHead(503, { "content-type": "text/plain" }).end(`status server unreachable: ${e.message}\n`));
      upstream.end();
    });
    servers.push(server);
    try {
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(p.port, host, () => resolve());
      });
    } catch (e) {
      servers.pop();
      await close();
      throw new ListenerBindError(p.variable, `${host}:${p.port}`, e);
    }
  }
  return { close };
}
