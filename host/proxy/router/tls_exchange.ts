import type { IncomingMessage } from "node:http";
import { type Agent, type RequestOptions, request as httpsRequest } from "node:https";
import type { Socket } from "node:net";
import type { ExchangeHandlers } from "../../wire/h1/exchange.ts";
import type { ResponseHead } from "../../wire/h1/response_parser.ts";
import { countRequestOnConnection } from "./requests_per_connection.ts";
import { upstreamProtocolError } from "./upstream_failure.ts";

/**
 * An upstream exchange as the router drives it: write the request body, end
 * it, pause or drop the response, give up (silently: the router reports).
 * The plaintext client (host/wire/h1) gives one; so does tlsExchange.
 */
export interface UpstreamCall {
  write(data: Buffer): boolean;
  end(): void;
  pause(): void;
  resume(): void;
  discard(): void;
  destroy(): void;
  setTimeout(ms: number, onTimeout: () => void): void;
}

/**
 * One exchange over node:https (mutual TLS origination: the options carry
 * the certificates, the SAN check and the agent that keeps the sessions),
 * heard through the same handlers as the plaintext client's.
 */
export function tlsExchange(options: RequestOptions, handlers: ExchangeHandlers, maxRequestsPerConnection: number | undefined): UpstreamCall {
  let gone = false;
  let dropping = false;
  let up: IncomingMessage | undefined;
  const request = httpsRequest(options, (response) => {
    up = response;
    if (gone) return void response.resume();
    const head: ResponseHead = {
      status: response.statusCode ?? 0,
      statusMessage: response.statusMessage ?? "",
      httpVersion: response.httpVersion === "1.0" ? "1.0" : "1.1",
      rawHeaders: response.rawHeaders,
      keepAlive: true,
      keepAliveTimeoutS: undefined,
    };
    response.on("data", (chunk: Buffer) => {
      if (!gone && !dropping) handlers.data(chunk);
    });
    response.on("end", () => {
      if (!gone && !dropping) handlers.end();
    });
    response.on("error", (e) => {
      if (!gone && !dropping) handlers.error(e);
    });
    handlers.response(head, undefined);
  });
  // A 101 nobody asked for (the listener forwards no Upgrade): Node hands over the socket; it is closed.
  request.on("upgrade", (_res, socket: Socket) => {
    socket.destroy();
    if (!gone) handlers.error(upstreamProtocolError("unsolicited 101 Switching Protocols"));
    gone = true;
  });
  request.on("error", (e) => {
    if (!gone) handlers.error(e);
    gone = true;
  });
  request.on("drain", () => {
    if (!gone) handlers.drain();
  });
  if (maxRequestsPerConnection) {
    const agent = options.agent as Agent | undefined;
    request.on("socket", (socket) => countRequestOnConnection(agent, socket as Socket, maxRequestsPerConnection));
  }
  return {
    write: (data) => (gone ? true : request.write(data)),
    end: () => {
      if (!gone) request.end();
    },
    pause: () => up?.pause(),
    resume: () => up?.resume(),
    discard: () => {
      dropping = true;
      up?.resume();
    },
    destroy: () => {
      if (gone) return;
      gone = true;
      request.destroy();
    },
    setTimeout: (ms, onTimeout) => {
      request.setTimeout(ms, onTimeout);
    },
  };
}
