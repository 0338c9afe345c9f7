import { createServer, type Server } from "node:http";
import { listen } from "../telemetry/http_listen.ts";

/** What the demo app saw: method, path and headers of every request. */
export interface SeenRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * The demo application: answers 200 with a JSON echo of the request it
 * received (so a person can see what the sidecar forwarded), and remembers
 * the requests for tests. `?delay=MS` holds the answer that long.
 */
export async function startEchoApp(port = 0): Promise<{ server: Server; port: number; seen: SeenRequest[] }> {
  const seen: SeenRequest[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      const entry = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body };
      seen.push(entry);
      const delay = Number(new URL(req.url ?? "/", "http://app").searchParams.get("delay") ?? 0);
      setTimeout(
        () => {
          res.writeHead(200, { "content-type": "application/json" }).end(`${JSON.stringify({ app: "echo", ...entry })}\n`);
        },
        Math.min(delay, 30_000),
      );
    });
  });
  const { port: bound } = await listen(server, port, "127.0.0.1");
  return { server, port: bound, seen };
}

/** A TCP echo server for the TCP mode: writes back every byte it reads. */
export async function startTcpEchoApp(): Promise<{ server: import("node:net").Server; port: number }> {
  const { createServer: createTcpServer } = await import("node:net");
  const server = createTcpServer((socket) => {
    socket.on("data", (chunk) => socket.write(chunk));
    socket.on("error", () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return { server, port: (server.address() as { port: number }).port };
}
