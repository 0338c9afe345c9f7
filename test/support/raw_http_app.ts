import { type Server, type Socket, createServer } from "node:net";
import { type HttpRequestMessage, readRequest } from "./http_messages.ts";

/**
 * An app behind a sidecar that records exactly the bytes it receives
 * (issue 25): every connection's bytes, and the requests a strict reader
 * finds in them (http_messages.ts). Each complete request is answered 200
 * with its number; bytes that are not a well-framed request are recorded
 * as malformed and the connection is closed. `answer` may give another
 * raw response per request (a hostile upstream).
 */
export interface RawHttpApp {
  port: number;
  server: Server;
  /** Every request read, in the order they completed (across connections). */
  requests: HttpRequestMessage[];
  /** Each connection's bytes as received. */
  connections: Buffer[];
  /** Why bytes could not be read as a request (empty when all were well framed). */
  malformed: string[];
  close(): Promise<void>;
}

export type RawAnswer = (request: HttpRequestMessage, socket: Socket) => string | Buffer | undefined;

const okAnswer: RawAnswer = (request) => {
  const body = `ok ${request.method} ${request.target}`;
  return `HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: ${body.length}\r\n\r\n${request.method === "HEAD" ? "" : body}`;
};

export async function startRawHttpApp(answer: RawAnswer = okAnswer): Promise<RawHttpApp> {
  const app: RawHttpApp = { port: 0, server: undefined as unknown as Server, requests: [], connections: [], malformed: [], close: async () => undefined };
  const sockets = new Set<Socket>();
  app.server = createServer((socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    const index = app.connections.push(Buffer.alloc(0)) - 1;
    let pending = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      app.connections[index] = Buffer.concat([app.connections[index], chunk]);
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        if (pending.length === 0) return;
        const r = readRequest(pending);
        if (r === "incomplete") return;
        if ("malformed" in r) {
          app.malformed.push(`${r.malformed} in ${JSON.stringify(pending.toString("latin1").slice(0, 200))}`);
          socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
          pending = Buffer.alloc(0);
          return;
        }
        pending = pending.subarray(r.length);
        app.requests.push(r.message);
        const response = answer(r.message, socket);
        if (response !== undefined && !socket.destroyed) socket.write(response);
      }
    });
  });
  await new Promise<void>((resolve) => app.server.listen(0, "127.0.0.1", resolve));
  app.port = (app.server.address() as { port: number }).port;
  app.close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      app.server.close(() => resolve());
    });
  return app;
}
